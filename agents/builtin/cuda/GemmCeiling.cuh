// The roofline's FP32 GEMM ceiling measured with the candidates' own configuration search
// (Gemm.cuh): the ceiling was PyTorch's heuristic pick alone, and GEMMs our search configured ran
// past it (level1/13 read 102% of its floor, bench/results/kernelbench_2026-11-29_h200). The host
// sends this program (gemmCeilingProgram in emit/CeilingProgram.h) with measureCeilings; the
// harness builds it and times stitch_gemm_ceiling (profile_ceilings.py).
#pragma once
#include "GemmFp32Only.cuh"
// stitch-embed: a generated program holds what follows this line (README.md).

// d[n,n] = a[n,n] @ b[n,n] in exact fp32, row-major. The first call searches the configurations
// on these buffers (sc_gemm_prepare), the later ones run the fastest; one size per loaded library.
extern "C" int stitch_gemm_ceiling(int64_t n, const float* a, const float* b, float* d, void* stream) {
  static sc_gemm g;
  static int64_t prepared = 0;
  if (prepared != 0 && prepared != n) return (int)cudaErrorInvalidValue;
  prepared = n;
  const sc_gemm_shape s = {1,         n, n, n, n, 1, n * n, n, 1, n * n, 1.0f, 0, CUBLASLT_EPILOGUE_DEFAULT,
                           CUBLAS_COMPUTE_32F};
  return sc_gemm_launch(&g, &s, a, b, nullptr, d, (cudaStream_t)stream);
}
