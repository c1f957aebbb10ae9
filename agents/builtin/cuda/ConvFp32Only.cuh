// Jobs that keep fp32 math: a convolution's tensor-core form is never tried (ConvX3.cuh's stand-in).
#pragma once
#include "ConvLaunch.cuh"
// stitch-embed: a generated program holds what follows this line (README.md).

static int sc_conv_x3_try(sc_conv*, const sc_conv_shape*, const float*, const float*, float*, const sc_conv_epi*,
                          cudaStream_t) {
  return 0;
}
static int sc_conv_x3_run(sc_conv*, const sc_conv_shape*, const float*, const float*, float*, cudaStream_t) {
  return (int)cudaErrorNotSupported;
}
static void sc_conv_x3_release(sc_conv_x3*) {}
