// A GEMM's 3xTF32 form (X3Common.cuh says why), tried where the job allows TF32.
#pragma once
#include "Gemm.cuh"
#include "X3Common.cuh"
// stitch-embed: a generated program holds what follows this line (README.md).

struct sc_gemm_x3 {
  // The two small products without the epilogue, then the large one with it, so bias and
  // activation apply once to the whole sum.
  cublasLtMatmulDesc_t small = nullptr, large = nullptr;
  cublasLtMatmulAlgo_t small_algo, large_algo;
  size_t small_workspace = 0, large_workspace = 0;
  float* parts = nullptr;  // hi and lo of our a, then of our b, each over the operand's span
  int64_t a_span = 0, b_span = 0;
};

static int sc_gemm_x3_run(sc_gemm* g, const sc_gemm_shape* s, const float* A, const float* B, const float* bias,
                          float* D, cudaStream_t stream) {
  sc_gemm_x3* x = g->x3;
  float *a_hi = x->parts, *a_lo = a_hi + x->a_span, *b_hi = a_lo + x->a_span, *b_lo = b_hi + x->b_span;
  int st;
  if ((st = sc_split(A, a_hi, a_lo, x->a_span, stream)) != 0 || (st = sc_split(B, b_hi, b_lo, x->b_span, stream)) != 0)
    return st;
  const float zero = 0.0f, one = 1.0f;
  if (s->bias) SC_LT(cublasLtMatmulDescSetAttribute(x->large, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  SC_LT(cublasLtMatmul(sc_lt, x->small, &s->alpha, b_lo, g->a, a_hi, g->b, &zero, D, g->d, D, g->d, &x->small_algo,
                       sc_workspace, x->small_workspace, stream));
  SC_LT(cublasLtMatmul(sc_lt, x->small, &s->alpha, b_hi, g->a, a_lo, g->b, &one, D, g->d, D, g->d, &x->small_algo,
                       sc_workspace, x->small_workspace, stream));
  SC_LT(cublasLtMatmul(sc_lt, x->large, &s->alpha, b_hi, g->a, a_hi, g->b, &one, D, g->d, D, g->d, &x->large_algo,
                       sc_workspace, x->large_workspace, stream));
  return 0;
}

// The fastest of the heuristic's algorithms for `op` on the split operands; false if none ran.
static bool sc_gemm_x3_pick(sc_gemm* g, const sc_gemm_shape* s, cublasLtMatmulDesc_t op, const float* a_hi,
                            const float* b_hi, float* D, cudaStream_t stream, cublasLtMatmulAlgo_t* algo,
                            size_t* workspace) {
  cublasLtMatmulHeuristicResult_t found[8];
  int count = 0;
  if (sc_gemm_heuristic(g, op, found, &count) != 0) return false;
  const float zero = 0.0f;
  float best_ms = -1.0f;
  for (int i = 0; i < count; ++i) {
    const float ms = sc_median_ms([&]() -> int {
      SC_LT(cublasLtMatmul(sc_lt, op, &s->alpha, b_hi, g->a, a_hi, g->b, &zero, D, g->d, D, g->d, &found[i].algo,
                           sc_workspace, found[i].workspaceSize, stream));
      return 0;
    }, stream);
    if (ms >= 0.0f && (best_ms < 0.0f || ms < best_ms)) best_ms = ms, *algo = found[i].algo, *workspace = found[i].workspaceSize;
  }
  return best_ms >= 0.0f;
}

static int64_t sc_span(int64_t batch, int64_t rows, int64_t cols, int64_t row, int64_t col, int64_t batch_stride) {
  return 1 + (batch - 1) * batch_stride + (rows - 1) * row + (cols - 1) * col;
}

// Keeps the 3xTF32 form when the whole of it (splits included) measures faster than `fp32_ms`;
// any failure keeps fp32.
static int sc_gemm_x3_try(sc_gemm* g, const sc_gemm_shape* s, const float* A, const float* B, const float* bias,
                          float* D, cudaStream_t stream, float fp32_ms) {
  sc_gemm_x3* x = new sc_gemm_x3();
  x->a_span = sc_span(s->batch, s->m, s->k, s->a_row, s->a_col, s->a_batch);
  x->b_span = sc_span(s->batch, s->k, s->n, s->b_row, s->b_col, s->b_batch);
  bool ok = cudaMalloc(&x->parts, 2 * (x->a_span + x->b_span) * sizeof(float)) == cudaSuccess &&
            sc_gemm_desc(&x->small, CUBLAS_COMPUTE_32F_FAST_TF32, s, CUBLASLT_EPILOGUE_DEFAULT) == 0 &&
            sc_gemm_desc(&x->large, CUBLAS_COMPUTE_32F_FAST_TF32, s, s->epilogue) == 0;
  float* a_hi = x->parts;
  float* b_hi = x->parts + 2 * x->a_span;
  ok = ok && sc_split(A, a_hi, a_hi + x->a_span, x->a_span, stream) == 0 &&
       sc_split(B, b_hi, b_hi + x->b_span, x->b_span, stream) == 0;
  if (ok && s->bias)
    ok = cublasLtMatmulDescSetAttribute(x->large, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)) ==
         CUBLAS_STATUS_SUCCESS;
  ok = ok && sc_gemm_x3_pick(g, s, x->small, a_hi, b_hi, D, stream, &x->small_algo, &x->small_workspace) &&
       sc_gemm_x3_pick(g, s, x->large, a_hi, b_hi, D, stream, &x->large_algo, &x->large_workspace) &&
       sc_x3_keep(&g->x3, x, [&] { return sc_gemm_x3_run(g, s, A, B, bias, D, stream); }, fp32_ms, stream);
  if (!ok) sc_gemm_x3_release(x);
  cudaGetLastError();
  return 0;
}

static void sc_gemm_x3_release(sc_gemm_x3* x) {
  if (x->small) cublasLtMatmulDescDestroy(x->small);
  if (x->large) cublasLtMatmulDescDestroy(x->large);
  if (x->parts) cudaFree(x->parts);
  delete x;
}
