// GEMMs through cuBLASLt with the bias and activation that follow folded into its epilogue: the
// configuration chosen by measurement on a call's first run (LibraryEmitter.h says how).
#pragma once
#include "LibraryCommon.cuh"
// stitch-embed: a generated program holds what follows this line (README.md).

#include <cublasLt.h>

#define SC_LT(call)                                                                   \
  do {                                                                                \
    cublasStatus_t s_ = (call);                                                       \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                \
      fprintf(stderr, "cuBLASLt: %s failed with status %d\n", #call, (int)s_);        \
      return 10000 + (int)s_;                                                         \
    }                                                                                 \
  } while (0)

static cublasLtHandle_t sc_lt = nullptr;

// Row-major PyTorch matrices seen column-major: out[m,n] = a[m,k] @ b[k,n] is computed as
// out^T[n,m] = b^T[n,k] @ a^T[k,m], so cuBLASLt's A is our b and its B our a. A row-major operand
// (unit column stride) is read as is; a column-major one (a transposed view) with op T.
struct sc_gemm_x3;  // the 3xTF32 form: defined only in candidates of jobs that allow TF32

struct sc_gemm {
  bool ready = false;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo;
  size_t workspace = 0;
  sc_gemm_x3* x3 = nullptr;  // set when the job allows TF32 and that form measured faster
};

struct sc_gemm_shape {
  int64_t batch, m, n, k;
  int64_t a_row, a_col, a_batch;  // our a: row stride, column stride, batch stride (elements)
  int64_t b_row, b_col, b_batch;
  float alpha;
  int bias;  // 1: a [n] bias vector
  // The epilogue (bias, relu, gelu in its tanh form), like `compute` written only in the shapes, so
  // that a candidate names a fused epilogue only where a call applies one.
  cublasLtEpilogue_t epilogue;
  // CUBLAS_COMPUTE_32F (exact fp32), or cuBLAS's fast TF32 compute type where eager runs this
  // matmul in TF32 (its matmul TF32 flag on); written only in the shapes, so a candidate names
  // TF32 only where a call uses it.
  cublasComputeType_t compute;
};

static int sc_layout(cublasLtMatrixLayout_t* layout, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                     int64_t batch_stride) {
  SC_LT(cublasLtMatrixLayoutCreate(layout, CUDA_R_32F, (uint64_t)rows, (uint64_t)cols, ld));
  if (batch > 1) {
    int32_t count = (int32_t)batch;
    SC_LT(cublasLtMatrixLayoutSetAttribute(*layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
    SC_LT(cublasLtMatrixLayoutSetAttribute(*layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &batch_stride,
                                           sizeof(batch_stride)));
  }
  return 0;
}

static int sc_gemm_x3_try(sc_gemm* g, const sc_gemm_shape* s, const float* A, const float* B, const float* bias,
                          float* D, cudaStream_t stream, float fp32_ms);
static int sc_gemm_x3_run(sc_gemm* g, const sc_gemm_shape* s, const float* A, const float* B, const float* bias,
                          float* D, cudaStream_t stream);
static void sc_gemm_x3_release(sc_gemm_x3* x);

static int sc_gemm_desc(cublasLtMatmulDesc_t* op, cublasComputeType_t compute, const sc_gemm_shape* s,
                        cublasLtEpilogue_t epilogue) {
  SC_LT(cublasLtMatmulDescCreate(op, compute, CUDA_R_32F));
  cublasOperation_t ta = s->b_col == 1 ? CUBLAS_OP_N : CUBLAS_OP_T, tb = s->a_col == 1 ? CUBLAS_OP_N : CUBLAS_OP_T;
  SC_LT(cublasLtMatmulDescSetAttribute(*op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
  SC_LT(cublasLtMatmulDescSetAttribute(*op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
  SC_LT(cublasLtMatmulDescSetAttribute(*op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
  return 0;
}

// Up to 8 algorithms from cuBLASLt's heuristic for `op` (`count` set, `found` filled), with the
// workspace the largest of them needs reserved.
static int sc_gemm_heuristic(sc_gemm* g, cublasLtMatmulDesc_t op, cublasLtMatmulHeuristicResult_t* found, int* count) {
  cublasLtMatmulPreference_t pref;
  SC_LT(cublasLtMatmulPreferenceCreate(&pref));
  size_t max_workspace = (size_t)32 << 20;
  SC_LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_workspace,
                                             sizeof(max_workspace)));
  cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(sc_lt, op, g->a, g->b, g->d, g->d, pref, 8, found, count);
  cublasLtMatmulPreferenceDestroy(pref);
  SC_LT(hs);
  size_t need = 0;
  for (int i = 0; i < *count; ++i) need = found[i].workspaceSize > need ? found[i].workspaceSize : need;
  return sc_reserve_workspace(need);
}

static int sc_gemm_run(sc_gemm* g, const sc_gemm_shape* s, const cublasLtMatmulAlgo_t* algo, size_t workspace,
                       const float* A, const float* B, const float* bias, float* D, cudaStream_t stream) {
  const float beta = 0.0f;
  if (s->bias) SC_LT(cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  SC_LT(cublasLtMatmul(sc_lt, g->op, &s->alpha, B, g->a, A, g->b, &beta, D, g->d, D, g->d, algo, sc_workspace,
                       workspace, stream));
  return 0;
}

// Every configuration that cuBLASLt's algorithms for the shape's compute type accept for this matmul (each algorithm's
// tiles x stages x custom options x split-K x reduction scheme x CTA swizzle, checked by
// cublasLtMatmulAlgoCheck), up to `max` of them, with workspaces within 32 MiB. The heuristic's
// suggestions are a few of these: on an H100 the fastest configuration ran 4-9% faster than the
// best of the heuristic's 8 for five of the suite's seven single-GEMM shapes (3072^3: 1164 against
// 1285 µs, split-K 4; bench/results/gemm_algorithms_2026-11-24_h100.md).
static int sc_gemm_configs(const sc_gemm* g, const sc_gemm_shape* s, cublasLtMatmulHeuristicResult_t* out, int max) {
  int ids[64], n_ids = 0, count = 0;
  if (cublasLtMatmulAlgoGetIds(sc_lt, s->compute, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, 64, ids,
                               &n_ids) != CUBLAS_STATUS_SUCCESS)
    return 0;
  const uint32_t splits[] = {1, 2, 3, 4, 6, 8, 16}, schemes[] = {CUBLASLT_REDUCTION_SCHEME_INPLACE,
                                                                 CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE,
                                                                 CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE};
  for (int a = 0; a < n_ids && count < max; ++a) {
    cublasLtMatmulAlgo_t algo;
    if (cublasLtMatmulAlgoInit(sc_lt, s->compute, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, ids[a],
                               &algo) != CUBLAS_STATUS_SUCCESS)
      continue;
    uint32_t tiles[128] = {CUBLASLT_MATMUL_TILE_UNDEFINED}, stages[128] = {CUBLASLT_MATMUL_STAGES_UNDEFINED};
    size_t bytes = 0;
    cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_TILE_IDS, tiles, sizeof(tiles), &bytes);
    const int n_tiles = bytes ? (int)(bytes / sizeof(uint32_t)) : 1;
    bytes = 0;
    cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_STAGES_IDS, stages, sizeof(stages), &bytes);
    const int n_stages = bytes ? (int)(bytes / sizeof(uint32_t)) : 1;
    int split_ok = 0, custom_max = 0;
    uint32_t scheme_mask = 0, swizzle = 0;
    cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT, &split_ok, sizeof(split_ok), &bytes);
    cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK, &scheme_mask, sizeof(scheme_mask),
                                      &bytes);
    cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT, &swizzle, sizeof(swizzle), &bytes);
    cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX, &custom_max, sizeof(custom_max), &bytes);
    for (int t = 0; t < n_tiles; ++t)
      for (int st = 0; st < n_stages; ++st)
        for (int custom = 0; custom <= (custom_max < 3 ? custom_max : 3); ++custom)
          for (uint32_t split : splits)
            for (int r = split == 1 ? -1 : 0; r < 3; ++r) {
              if (split > 1 && (!split_ok || !(scheme_mask & schemes[r]))) continue;
              const uint32_t scheme = r < 0 ? (uint32_t)CUBLASLT_REDUCTION_SCHEME_NONE : schemes[r];
              for (uint32_t swz = 0; swz <= (swizzle ? 1u : 0u); ++swz) {
                if (count == max) return count;
                cublasLtMatmulAlgo_t x = algo;
                cublasLtMatmulAlgoConfigSetAttribute(&x, CUBLASLT_ALGO_CONFIG_TILE_ID, &tiles[t], sizeof(uint32_t));
                cublasLtMatmulAlgoConfigSetAttribute(&x, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages[st], sizeof(uint32_t));
                cublasLtMatmulAlgoConfigSetAttribute(&x, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &custom, sizeof(custom));
                cublasLtMatmulAlgoConfigSetAttribute(&x, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &split, sizeof(split));
                cublasLtMatmulAlgoConfigSetAttribute(&x, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &scheme, sizeof(scheme));
                cublasLtMatmulAlgoConfigSetAttribute(&x, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swz, sizeof(swz));
                cublasLtMatmulHeuristicResult_t* r_out = &out[count];
                if (cublasLtMatmulAlgoCheck(sc_lt, g->op, g->a, g->b, g->d, g->d, &x, r_out) == CUBLAS_STATUS_SUCCESS &&
                    r_out->workspaceSize <= ((size_t)32 << 20)) {
                  r_out->algo = x;
                  ++count;
                }
              }
            }
  }
  return count;
}

// Mean milliseconds of 2 runs after one untimed run, for screening many configurations;
// negative when a run fails.
template <typename Run>
static float sc_screen_ms(Run run, cudaEvent_t start, cudaEvent_t end, cudaStream_t stream) {
  int failed = run();
  cudaEventRecord(start, stream);
  failed |= run();
  failed |= run();
  cudaEventRecord(end, stream);
  float ms = -1.0f;
  if (failed || cudaEventSynchronize(end) != cudaSuccess || cudaEventElapsedTime(&ms, start, end) != cudaSuccess) {
    cudaGetLastError();
    return -1.0f;
  }
  return ms / 2.0f;
}

__global__ void sc_read_all(const float4* __restrict__ p, size_t n, float* sink) {
  float acc = 0.0f;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    const float4 v = p[i];
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == 1.0f) *sink = acc;  // never true (the scratch is zeros): keeps the reads
}

// Median milliseconds of 5 runs of `run`, each timed alone after a read of `n` float4 of
// `scratch` (twice the L2), so no operand is cached, as in the verifier's timing and in a forward
// whose other steps evicted them; negative when a run fails. Back-to-back runs keep the operands
// in L2 and rank configurations otherwise than the verifier's timing does. Picked cold, the
// irregular GEMM's kernel ran 131 µs against eager's 137 (bench/results/bench_2026-11-24_h100.md).
template <typename Run>
static float sc_median_cold_ms(Run run, const float4* scratch, size_t n, cudaStream_t stream) {
  return sc_median5_ms(run, [&] { sc_read_all<<<1024, 256, 0, stream>>>(scratch, n, (float*)scratch); }, stream);
}

#define SC_GEMM_CONFIGS 640
#define SC_GEMM_FINALISTS 6

// Describes the matmul and keeps the fastest configuration measured on these buffers. The GPU is
// warmed first with the heuristic's own pick; the heuristic's 8 suggestions and every configuration
// cuBLASLt accepts are screened by 2 runs each, and the 6 fastest of them are timed by a median of
// 5 with the L2 cleared before each run (sc_median_cold_ms), after the heuristic's pick. A
// finalist replaces the pick only when 3% faster: a first call's timings are noisy (clocks ramp
// up, kernels load lazily), and a pick from single 3-run totals once ran 1.7x slower than the
// kernel eager's cuBLAS chose for the same GEMM (86_mlp_3layer, H100). The compute type is the
// shape's (eager's precision for this matmul). Where the job allows TF32 and the matmul computes
// in exact fp32, the 3xTF32 form is measured next, as the fp32 choice was before it (warm), and
// kept only if faster.
static int sc_gemm_prepare(sc_gemm* g, const sc_gemm_shape* s, const float* A, const float* B, const float* bias,
                           float* D, cudaStream_t stream) {
  if (!sc_lt) SC_LT(cublasLtCreate(&sc_lt));
  int st;
  if ((st = sc_gemm_desc(&g->op, s->compute, s, s->epilogue)) != 0) return st;
  const bool b_rows = s->b_col == 1, a_rows = s->a_col == 1;
  if ((st = sc_layout(&g->a, b_rows ? s->n : s->k, b_rows ? s->k : s->n, b_rows ? s->b_row : s->b_col, s->batch,
                      s->b_batch)) != 0)
    return st;
  if ((st = sc_layout(&g->b, a_rows ? s->k : s->m, a_rows ? s->m : s->k, a_rows ? s->a_row : s->a_col, s->batch,
                      s->a_batch)) != 0)
    return st;
  if ((st = sc_layout(&g->d, s->n, s->m, s->n, s->batch, s->m * s->n)) != 0) return st;
  cublasLtMatmulHeuristicResult_t* pool = new cublasLtMatmulHeuristicResult_t[8 + SC_GEMM_CONFIGS];
  int count = 0;
  if ((st = sc_gemm_heuristic(g, g->op, pool, &count)) != 0 || count == 0) {
    delete[] pool;
    if (st) return st;
    fprintf(stderr, "cuBLASLt: no algorithm for this matmul\n");
    return 10000 + (int)CUBLAS_STATUS_NOT_SUPPORTED;
  }
  const int suggested = count;
  // Small GEMMs (under 1 GFLOP: tens of microseconds and less) keep to the heuristic's 8, timed
  // warm: LeNet's classifier layers, chosen among every configuration, made the whole model 10%
  // slower (2.28x eager's time to 2.04-2.06x over two runs, H100); in a forward their operands
  // are in L2, just written by the step before.
  const bool wide = 2.0 * (double)s->batch * (double)s->m * (double)s->n * (double)s->k >= 1e9;
  if (wide) count += sc_gemm_configs(g, s, pool + count, SC_GEMM_CONFIGS);
  size_t need = 0;
  for (int i = 0; i < count; ++i) need = pool[i].workspaceSize > need ? pool[i].workspaceSize : need;
  if ((st = sc_reserve_workspace(need)) != 0) {
    delete[] pool;
    return st;
  }
  auto run = [&](int i) { return sc_gemm_run(g, s, &pool[i].algo, pool[i].workspaceSize, A, B, bias, D, stream); };
  for (int r = 0; r < 10; ++r) run(0);
  cudaGetLastError();
  float screened[8 + SC_GEMM_CONFIGS];
  cudaEvent_t start, end;
  cudaEventCreate(&start);
  cudaEventCreate(&end);
  for (int i = 0; i < count; ++i) screened[i] = sc_screen_ms([&] { return run(i); }, start, end, stream);
  cudaEventDestroy(start);
  cudaEventDestroy(end);
  // The heuristic's pick first, then the fastest screened others.
  int finalists[1 + SC_GEMM_FINALISTS] = {0}, n_final = 1;
  for (int f = 0; f < SC_GEMM_FINALISTS; ++f) {
    int pick = -1;
    for (int i = 1; i < count; ++i) {
      bool taken = false;
      for (int j = 0; j < n_final; ++j) taken = taken || finalists[j] == i;
      if (!taken && screened[i] >= 0.0f && (pick < 0 || screened[i] < screened[pick])) pick = i;
    }
    if (pick >= 0) finalists[n_final++] = pick;
  }
  int l2 = 0, device = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device);
  const size_t scratch_n = (size_t)(l2 > 0 ? l2 : 64 << 20) * 2 / sizeof(float4);
  float4* scratch = nullptr;
  const bool cold = wide && cudaMalloc(&scratch, scratch_n * sizeof(float4)) == cudaSuccess &&
                    cudaMemsetAsync(scratch, 0, scratch_n * sizeof(float4), stream) == cudaSuccess;
  cudaGetLastError();
  float best_ms = -1.0f;
  int best = -1;
  for (int f = 0; f < n_final; ++f) {
    auto one = [&] { return run(finalists[f]); };
    const float ms = cold ? sc_median_cold_ms(one, scratch, scratch_n, stream) : sc_median_ms(one, stream);
    if (ms >= 0.0f && (best < 0 || ms < 0.97f * best_ms)) best = finalists[f], best_ms = ms;
  }
  if (scratch) cudaFree(scratch);
  if (best >= 0 && cold) best_ms = sc_median_ms([&] { return run(best); }, stream);
  if (best < 0) {
    delete[] pool;
    fprintf(stderr, "cuBLASLt: none of %d candidate algorithms ran\n", suggested);
    return 10000 + (int)CUBLAS_STATUS_EXECUTION_FAILED;
  }
  g->algo = pool[best].algo;
  g->workspace = pool[best].workspaceSize;
  g->ready = true;
  delete[] pool;
  // Already on tensor cores in TF32 (eager's precision): the 3xTF32 form would only be slower.
  if (s->compute != CUBLAS_COMPUTE_32F) return 0;
  return sc_gemm_x3_try(g, s, A, B, bias, D, stream, best_ms);
}

static int sc_gemm_launch(sc_gemm* g, const sc_gemm_shape* s, const float* A, const float* B, const float* bias,
                          float* D, cudaStream_t stream) {
  if (!g->ready) {
    int st = sc_gemm_prepare(g, s, A, B, bias, D, stream);
    if (st != 0) return st;
  }
  if (g->x3) return sc_gemm_x3_run(g, s, A, B, bias, D, stream);
  return sc_gemm_run(g, s, &g->algo, g->workspace, A, B, bias, D, stream);
}

static void sc_gemm_release(sc_gemm* g) {
  if (g->op) cublasLtMatmulDescDestroy(g->op);
  if (g->a) cublasLtMatrixLayoutDestroy(g->a);
  if (g->b) cublasLtMatrixLayoutDestroy(g->b);
  if (g->d) cublasLtMatrixLayoutDestroy(g->d);
  if (g->x3) sc_gemm_x3_release(g->x3);
  *g = sc_gemm();
}

static sc_gemm* sc_gemm_for_rows(sc_per_rows<sc_gemm>* r, int64_t rows) { return sc_for_rows(r, rows, sc_gemm_release); }
