// Jobs that keep fp32 math: a GEMM's tensor-core form is never tried (GemmX3.cuh's stand-in).
#pragma once
#include "Gemm.cuh"
// stitch-embed: a generated program holds what follows this line (README.md).

static int sc_gemm_x3_try(sc_gemm*, const sc_gemm_shape*, const float*, const float*, const float*, float*, cudaStream_t,
                          float) {
  return 0;
}
static int sc_gemm_x3_run(sc_gemm*, const sc_gemm_shape*, const float*, const float*, const float*, float*,
                          cudaStream_t) {
  return (int)cudaErrorNotSupported;
}
static void sc_gemm_x3_release(sc_gemm_x3*) {}
