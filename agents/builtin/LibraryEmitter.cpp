// Library launchers; see LibraryEmitter.h. The shared helpers live in the generated file's
// prelude so each call adds only its shapes and slots.
#include "agents/builtin/LibraryEmitter.h"

#include <sstream>

namespace stitch::agents::builtin {
namespace {

// Status codes a launcher returns for library failures, above every cudaError_t value, so the
// harness's "stitch_forward returned N" names the library; the message goes to stderr.
constexpr const char* kCommon = R"(
#include <stdio.h>

// A library call whose rows are the call's (RuntimeRows.h: a GEMM's m or batch count, a
// convolution's N) keeps a prepared state per row count: each is prepared (its algorithm
// measured) on the first call with that many rows. A ninth count takes the oldest slot, whose
// descriptors and buffers `release` frees first. Eight, as many counts as a segment remembers
// (HostProgram.cpp), which drops the graphs captured with a count before its states go.
#define SC_ROW_STATES 8
template <class State>
struct sc_per_rows {
  int64_t rows[SC_ROW_STATES];
  State state[SC_ROW_STATES];
  int next;
};

template <class State, class Release>
static State* sc_for_rows(sc_per_rows<State>* r, int64_t rows, Release release) {
  for (int i = 0; i < SC_ROW_STATES; ++i)
    if (r->rows[i] == rows) return &r->state[i];
  const int i = r->next;
  r->next = (i + 1) % SC_ROW_STATES;
  if (r->rows[i]) release(&r->state[i]);
  r->rows[i] = rows;
  return &r->state[i];
}

// Library handles and one workspace, made once per loaded candidate. The workspace only grows
// while algorithms are chosen (a launcher's first call), never inside a captured or timed call.
static void* sc_workspace = nullptr;
static size_t sc_workspace_bytes = 0;
// The most workspace a cuDNN algorithm may ask for: a quarter of the GPU's free memory, at most
// 4 GiB. A fixed 256 MiB left out the tensor-core algorithm of a KernelBench-sized 3x3
// convolution (1 GiB of workspace: 4.0 ms against 9.4 ms for the fastest that fit, and eager's
// 5.7 ms on an H100; the cuDNN probe in bench/results, 2026-11-25).
static size_t sc_workspace_limit() {
  size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) {
    cudaGetLastError();
    return (size_t)256 << 20;
  }
  const size_t cap = (size_t)4 << 30;
  return sc_workspace_bytes + free_bytes / 4 < cap ? sc_workspace_bytes + free_bytes / 4 : cap;
}

static int sc_reserve_workspace(size_t bytes) {
  if (bytes <= sc_workspace_bytes) return 0;
  if (sc_workspace) cudaFree(sc_workspace);
  sc_workspace = nullptr;
  sc_workspace_bytes = 0;
  cudaError_t e = cudaMalloc(&sc_workspace, bytes);
  if (e != cudaSuccess) return (int)e;
  sc_workspace_bytes = bytes;
  return 0;
}

// Median milliseconds of 5 runs of `run` on `stream`, each between its own pair of events and
// after `before` (untimed), after one untimed run; negative when a run fails.
template <typename Run, typename Before>
static float sc_median5_ms(Run run, Before before, cudaStream_t stream) {
  if (run() != 0) {
    cudaGetLastError();
    return -1.0f;
  }
  cudaEvent_t ev[10];
  for (cudaEvent_t& e : ev) cudaEventCreate(&e);
  int failed = 0;
  for (int r = 0; r < 5; ++r) {
    before();
    cudaEventRecord(ev[2 * r], stream);
    failed |= run();
    cudaEventRecord(ev[2 * r + 1], stream);
  }
  float runs[5];
  bool timed = !failed && cudaEventSynchronize(ev[9]) == cudaSuccess;
  for (int r = 0; r < 5 && timed; ++r) timed = cudaEventElapsedTime(&runs[r], ev[2 * r], ev[2 * r + 1]) == cudaSuccess;
  for (cudaEvent_t& e : ev) cudaEventDestroy(e);
  if (!timed) {
    cudaGetLastError();
    return -1.0f;
  }
  for (int a = 1; a < 5; ++a)
    for (int b = a; b > 0 && runs[b] < runs[b - 1]; --b) {
      const float t = runs[b];
      runs[b] = runs[b - 1];
      runs[b - 1] = t;
    }
  return runs[2];
}

// The median of 5 runs back to back.
template <typename Run>
static float sc_median_ms(Run run, cudaStream_t stream) {
  return sc_median5_ms(run, [] {}, stream);
}

// A library step's failure names the step: its cuBLASLt or cuDNN status plus SC_STEP_STATUS times
// one more than the step's index (step k3's cuDNN status 3000: 423000), so the refine step knows
// which call to leave to PyTorch; a cudaError_t (a fault of the process, not of the call) as is.
static int sc_step_status(int status, int step) {
  return status >= 10000 ? SC_STEP_STATUS * (step + 1) + status : status;
}
)";

constexpr const char* kGemm = R"(
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
)";

// The cuDNN handle, shared by convolutions and RNNs.
constexpr const char* kDnn = R"(
#include <cudnn.h>

#define SC_DNN(call)                                                                  \
  do {                                                                                \
    cudnnStatus_t s_ = (call);                                                        \
    if (s_ != CUDNN_STATUS_SUCCESS) {                                                 \
      fprintf(stderr, "cuDNN: %s failed: %s\n", #call, cudnnGetErrorString(s_));      \
      return 20000 + (int)s_;                                                         \
    }                                                                                 \
  } while (0)

static cudnnHandle_t sc_dnn = nullptr;
)";

constexpr const char* kConv = R"(
// A convolution as cuDNN sees it: 1-D ones get a unit height (cuDNN wants 2 spatial dims or
// more). A transposed convolution is cuDNN's backward-data of the forward convolution whose
// filter is the weight ([Cin, Cout/g, k...]): x is the forward's output (our output), y its
// input (our input).
struct sc_conv_x3;  // the 3xTF32 form: defined only in candidates of jobs that allow TF32
struct sc_conv_shape;

// The elementwise tail folded into the convolution (ConvEpilogue in LibraryCall.h), per output
// channel: the bias, an inference batch norm, a ReLU, each optional (a null pointer, relu 0), in
// the arithmetic of the generated kernel it replaces.
struct sc_conv_epi {
  const float* bias;
  const float *mean, *var, *scale, *shift;  // mean null: no batch norm; scale, shift optional
  float eps;
  int relu;
};

// One channel's epilogue with its parameters read once: what a thread applies to many outputs.
struct sc_conv_epi_channel {
  float bias, mean, invstd, scale, shift;
  __device__ __forceinline__ sc_conv_epi_channel(const sc_conv_epi& e, int c)
      : bias(e.bias ? e.bias[c] : 0.0f), mean(e.mean ? e.mean[c] : 0.0f),
        invstd(e.mean ? (1.0f / sqrtf((e.var[c] + e.eps))) : 1.0f), scale(e.scale ? e.scale[c] : 1.0f),
        shift(e.shift ? e.shift[c] : 0.0f) {}
  __device__ __forceinline__ sc_conv_epi_channel(float b, float m, float i, float sc, float sh)
      : bias(b), mean(m), invstd(i), scale(sc), shift(sh) {}
  __device__ __forceinline__ float apply(const sc_conv_epi& e, float v) const {
    if (e.bias) v = (v + bias);
    if (e.mean) {
      v = ((v - mean) * invstd);
      if (e.scale) v = (v * scale);
      if (e.shift) v = (v + shift);
    }
    if (e.relu) v = sc_max(v, 0.0f);  // a NaN stays NaN, as PyTorch's relu keeps it
    return v;
  }
};

// In place over y: `per_plane` blocks per channel plane of `plane` elements (V at a time, 16-byte
// accesses where planes are a multiple of 4 floats), so a block finds its channel by one division
// and reads that channel's parameters once. A division per element made this pass slower than the
// generated kernel it replaces.
template <int V>
__global__ void __launch_bounds__(256) sc_conv_epi_pass(float* __restrict__ y, int64_t plane, int per_plane,
                                                        int channels, sc_conv_epi e) {
  const int64_t p = blockIdx.x / per_plane;
  const int64_t i = (int64_t)(blockIdx.x % per_plane) * 256 + threadIdx.x;
  if (i * V >= plane) return;
  const sc_conv_epi_channel ch(e, (int)(p % channels));
  float* yp = y + p * plane;
  if (V == 4) {
    float4 v = reinterpret_cast<float4*>(yp)[i];
    v.x = ch.apply(e, v.x);
    v.y = ch.apply(e, v.y);
    v.z = ch.apply(e, v.z);
    v.w = ch.apply(e, v.w);
    reinterpret_cast<float4*>(yp)[i] = v;
  } else {
    yp[i] = ch.apply(e, yp[i]);
  }
}

// The same over a channels-last output, rows of `channels` (V at a time where channels are a
// multiple of 4): each thread keeps one group of V channels, their parameters read once, and walks
// the rows its block takes, so no element pays a division for its channel.
template <int V>
__global__ void __launch_bounds__(256) sc_conv_epi_pass_nhwc(float* __restrict__ y, int64_t rows, int channels,
                                                             sc_conv_epi e) {
  const int groups = channels / V, width = groups < 256 ? groups : 256, per = 256 / width;
  const int sub = threadIdx.x / width;
  if (sub >= per) return;
  for (int g = threadIdx.x % width; g < groups; g += width) {
    const int c = g * V;
    const sc_conv_epi_channel c0(e, c), c1(e, V == 4 ? c + 1 : c), c2(e, V == 4 ? c + 2 : c), c3(e, V == 4 ? c + 3 : c);
    for (int64_t r = (int64_t)blockIdx.x * per + sub; r < rows; r += (int64_t)gridDim.x * per) {
      float* p = y + r * channels + c;
      if (V == 4) {
        float4 v = *reinterpret_cast<float4*>(p);
        v.x = c0.apply(e, v.x);
        v.y = c1.apply(e, v.y);
        v.z = c2.apply(e, v.z);
        v.w = c3.apply(e, v.w);
        *reinterpret_cast<float4*>(p) = v;
      } else {
        *p = c0.apply(e, *p);
      }
    }
  }
}

// The epilogue as its own pass over the convolution's output, where no kernel applied it.
static int sc_conv_epilogue(const sc_conv_shape* s, float* y, const sc_conv_epi* e, cudaStream_t stream);

// The generated alternative to cuDNN for one shape (the direct kernel, or a pointwise
// convolution's cuBLASLt GEMM), or nullptr where none applies. It applies the epilogue `e`
// (null: none).
typedef int (*sc_direct_fn)(const sc_conv_shape*, const float*, const float*, float*, const sc_conv_epi*,
                            cudaStream_t);

struct sc_conv {
  bool ready = false;
  cudnnTensorDescriptor_t in = nullptr, out = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  int algo = 0;
  size_t workspace = 0;
  sc_conv_x3* x3 = nullptr;  // set when the job allows TF32 and that form measured faster
  sc_direct_fn direct = nullptr;  // the generated alternative, where it measured faster than cuDNN or cuDNN could not
  int images = 0;                 // per cuDNN call: the batch, or a part of it (sc_conv_images)
  // cuDNN's fused bias-activation form of the epilogue (sc_conv_fused_run), where it measured
  // faster than the convolution and the epilogue's pass: its descriptors, workspace, and room for
  // the folded weights and per-channel bias.
  bool fused = false;
  cudnnTensorDescriptor_t bias = nullptr;
  cudnnActivationDescriptor_t act = nullptr;
  size_t fused_workspace = 0;
  float* folded = nullptr;
};

// `split` > 1: the groups run as that many calls, each on its slice of the whole tensors, all on
// the caller's stream. cuDNN's own grouped convolution ran its groups on internal streams (seen
// on an H100 for 32 groups of 8 channels), which the verifier cannot tell from side-stream work;
// depthwise convolutions (one channel per group) did not and keep cuDNN's grouping.
struct sc_conv_shape {
  int nd;  // tensor rank as cuDNN sees it (4 or 5)
  int in[5], w[5], out[5];
  int pad[3], stride[3], dilation[3];
  int groups;
  int transposed;
  int split;
  // The math types whose algorithms are measured: CUDNN_FMA_MATH twice (exact fp32), or, where
  // eager runs this convolution in TF32 (its cuDNN TF32 flag on), cuDNN's default math (as eager's
  // descriptor has it) and its tensor-op math (the math type cuDNN's tensor-core algorithms
  // report): written only in the shapes, so a candidate names TF32 math only where a call uses it.
  cudnnMathType_t math[2];
  // Input, output and filter are channels-last (NHWC / NDHWC, the filter KRSC): ConvCall::channelsLast.
  int channels_last;
};

// A descriptor of `dims` inside a dense tensor of `whole` (the same but for channels), NCHW or,
// with `channels_last`, channels innermost.
static int sc_tensor(cudnnTensorDescriptor_t* d, int nd, const int* dims, const int* whole, int channels_last) {
  int strides[5];
  if (channels_last) {
    strides[1] = 1;
    int step = whole[1];
    for (int i = nd - 1; i > 1; --i) strides[i] = step, step *= whole[i];
    strides[0] = step;
  } else {
    strides[nd - 1] = 1;
    for (int i = nd - 1; i > 0; --i) strides[i - 1] = strides[i] * whole[i];
  }
  SC_DNN(cudnnCreateTensorDescriptor(d));
  SC_DNN(cudnnSetTensorNdDescriptor(*d, CUDNN_DATA_FLOAT, nd, dims, strides));
  return 0;
}

static int64_t sc_elements(const int* dims, int from, int nd) {
  int64_t n = 1;
  for (int i = from; i < nd; ++i) n *= dims[i];
  return n;
}

static int sc_conv_epilogue(const sc_conv_shape* s, float* y, const sc_conv_epi* e, cudaStream_t stream) {
  if (!e) return 0;
  if (s->channels_last) {
    const int channels = s->out[1], v = channels % 4 == 0 ? 4 : 1;
    const int groups = channels / v, per = groups < 256 ? 256 / groups : 1;
    const int64_t rows = sc_elements(s->out, 0, s->nd) / channels, blocks = (rows + per - 1) / per;
    const unsigned grid = (unsigned)(blocks < 65536 ? blocks : 65536);
    if (v == 4) sc_conv_epi_pass_nhwc<4><<<grid, 256, 0, stream>>>(y, rows, channels, *e);
    else sc_conv_epi_pass_nhwc<1><<<grid, 256, 0, stream>>>(y, rows, channels, *e);
    return (int)cudaGetLastError();
  }
  const int64_t plane = sc_elements(s->out, 2, s->nd), planes = sc_elements(s->out, 0, 2);
  const int v = plane % 4 == 0 ? 4 : 1;
  const int per_plane = (int)((plane / v + 255) / 256);
  const unsigned grid = (unsigned)(planes * per_plane);
  if (v == 4) sc_conv_epi_pass<4><<<grid, 256, 0, stream>>>(y, plane, per_plane, s->out[1], *e);
  else sc_conv_epi_pass<1><<<grid, 256, 0, stream>>>(y, plane, per_plane, s->out[1], *e);
  return (int)cudaGetLastError();
}

// One convolution (a call per part of the batch and group slice) with `desc`, blending into y with
// `beta` (0: overwrite).
static int sc_conv_run(sc_conv* c, const sc_conv_shape* s, cudnnConvolutionDescriptor_t desc, int algo,
                       size_t workspace, float beta, const float* x, const float* w, float* y, cudaStream_t stream) {
  const float one = 1.0f;
  SC_DNN(cudnnSetStream(sc_dnn, stream));
  const int64_t in_step = s->in[1] / s->split * sc_elements(s->in, 2, s->nd);
  const int64_t out_step = s->out[1] / s->split * sc_elements(s->out, 2, s->nd);
  const int64_t w_step = sc_elements(s->w, 0, s->nd) / s->split;
  const int64_t in_image = sc_elements(s->in, 1, s->nd), out_image = sc_elements(s->out, 1, s->nd);
  for (int64_t n = 0; n < s->in[0]; n += c->images)
    for (int g = 0; g < s->split; ++g) {
      const float* xg = x + n * in_image + g * in_step;
      const float* wg = w + g * w_step;
      float* yg = y + n * out_image + g * out_step;
      if (s->transposed)
        SC_DNN(cudnnConvolutionBackwardData(sc_dnn, &one, c->w, wg, c->in, xg, desc,
                                            (cudnnConvolutionBwdDataAlgo_t)algo, sc_workspace, workspace, &beta,
                                            c->out, yg));
      else
        SC_DNN(cudnnConvolutionForward(sc_dnn, &one, c->in, xg, c->w, wg, desc, (cudnnConvolutionFwdAlgo_t)algo,
                                       sc_workspace, workspace, &beta, c->out, yg));
    }
  return 0;
}

// An inference batch norm is affine per channel, so the whole epilogue is act(a[c] * v + b[c]):
// cuDNN's fused call computes act(conv(x, w') + b) with w' = w * a[c], folded here on every call
// (the weights and statistics are the forward's inputs). One thread per weight; the first of each
// channel also writes b[c].
__global__ void sc_conv_fold(const float* __restrict__ w, float* __restrict__ wf, float* __restrict__ bf,
                             int64_t per_channel, int64_t n, sc_conv_epi e) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int c = (int)(i / per_channel);
  const sc_conv_epi_channel ch(e, c);
  wf[i] = w[i] * (e.mean ? ch.invstd * ch.scale : 1.0f);
  if (i % per_channel == 0) bf[c] = e.mean ? ((ch.bias - ch.mean) * ch.invstd) * ch.scale + ch.shift : ch.bias;
}

// The convolution with its epilogue in one cuDNN call (cudnnConvolutionBiasActivationForward,
// which takes a ReLU only with the precomputed implicit GEMM), after the fold.
static int sc_conv_fused_run(sc_conv* c, const sc_conv_shape* s, const float* x, const float* w, float* y,
                             const sc_conv_epi* e, cudaStream_t stream) {
  const int64_t n = sc_elements(s->w, 0, s->nd);
  float *wf = c->folded, *bf = c->folded + n;
  sc_conv_fold<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(w, wf, bf, sc_elements(s->w, 1, s->nd), n, *e);
  const float one = 1.0f, zero = 0.0f;
  SC_DNN(cudnnSetStream(sc_dnn, stream));
  SC_DNN(cudnnConvolutionBiasActivationForward(sc_dnn, &one, c->in, x, c->w, wf, c->conv,
                                               CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, sc_workspace,
                                               c->fused_workspace, &zero, c->out, y, c->bias, bf, c->act, c->out, y));
  return (int)cudaGetLastError();
}

// Frees what the fused bias-activation form holds (its descriptors and folded weights).
static void sc_conv_fused_release(sc_conv* c) {
  if (c->folded) cudaFree(c->folded);
  if (c->bias) cudnnDestroyTensorDescriptor(c->bias);
  if (c->act) cudnnDestroyActivationDescriptor(c->act);
  c->folded = nullptr, c->bias = nullptr, c->act = nullptr;
}

// Keeps the fused form where it measures faster than `*ms` (updated), for a forward convolution
// in one call (no group split) with an epilogue.
static void sc_conv_fused_try(sc_conv* c, const sc_conv_shape* s, const float* x, const float* w, float* y,
                              const sc_conv_epi* e, float* ms, cudaStream_t stream) {
  int dims[5] = {1, s->out[1], 1, 1, 1}, strides[5] = {s->out[1], 1, 1, 1, 1};
  size_t need = 0;
  const bool ready =
      cudnnCreateTensorDescriptor(&c->bias) == CUDNN_STATUS_SUCCESS &&
      cudnnSetTensorNdDescriptor(c->bias, CUDNN_DATA_FLOAT, s->nd, dims, strides) == CUDNN_STATUS_SUCCESS &&
      cudnnCreateActivationDescriptor(&c->act) == CUDNN_STATUS_SUCCESS &&
      cudnnSetActivationDescriptor(c->act, e->relu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY,
                                   CUDNN_NOT_PROPAGATE_NAN, 0.0) == CUDNN_STATUS_SUCCESS &&
      cudnnGetConvolutionForwardWorkspaceSize(sc_dnn, c->in, c->w, c->conv, c->out,
                                              CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
                                              &need) == CUDNN_STATUS_SUCCESS &&
      need <= sc_workspace_limit() && sc_reserve_workspace(need) == 0 &&
      cudaMalloc(&c->folded, (sc_elements(s->w, 0, s->nd) + s->out[1]) * sizeof(float)) == cudaSuccess;
  if (ready) {
    c->fused_workspace = need;
    const float t = sc_median_ms([&] { return sc_conv_fused_run(c, s, x, w, y, e, stream); }, stream);
    if (t >= 0.0f && t < *ms) {
      c->fused = true;
      *ms = t;
      return;
    }
  }
  sc_conv_fused_release(c);
  cudaGetLastError();
}

// acc[t] += v * w[t] for a tile of COT weights, read as 16-byte vectors (w 16-byte aligned).
template <int COT>
__host__ __device__ __forceinline__ void sc_fma_tile(float* acc, float v, const float* w) {
  const float4* w4 = reinterpret_cast<const float4*>(w);
#pragma unroll
  for (int t = 0; t < COT / 4; ++t) {
    const float4 f = w4[t];
    acc[4 * t] = fmaf(v, f.x, acc[4 * t]);
    acc[4 * t + 1] = fmaf(v, f.y, acc[4 * t + 1]);
    acc[4 * t + 2] = fmaf(v, f.z, acc[4 * t + 2]);
    acc[4 * t + 3] = fmaf(v, f.w, acc[4 * t + 3]);
  }
}

// A direct convolution, for the shapes where each output sums few products (LeNet's 1 and 6
// input channels, a CNN stem's 3, grouped convolutions' 8 per group), which cuDNN's fp32
// algorithms ran at 2.6-6.4 TFLOP/s on an H100 (bench/results/conv_direct_2026-11-23_h100.md).
// A thread takes one output position of one image and computes a tile of COT output channels of
// one group: each input it loads feeds COT products, the tile's weights wait in shared memory as
// [tap][COT] so a tap's COT weights are vector loads all threads of the block share. KH, KW: the
// window, when the emitter knows it at compile time (0: read from the shape). Contiguous
// tensors, forward 2-D (1-D with a unit height), any stride, padding, dilation and groups.
// Adds input channel `xc`'s window at (iy0, ix0) times the tile's weights of that channel to acc.
// CHECK: some of the window lies in the padding (zeros, skipped); without it no bound is tested.
template <int COT, int KH, int KW, bool CHECK>
__device__ __forceinline__ void sc_direct_taps(float* acc, const float* __restrict__ xc, const float* ws, int kh,
                                               int kw, int iy0, int ix0, const sc_conv_shape& s) {
  const int H = s.in[2], W = s.in[3];
#pragma unroll
  for (int r = 0; r < (KH ? KH : kh); ++r) {
    const int iy = iy0 + r * s.dilation[0];
    if (CHECK && (iy < 0 || iy >= H)) continue;
#pragma unroll
    for (int q = 0; q < (KW ? KW : kw); ++q) {
      const int ix = ix0 + q * s.dilation[1];
      if (CHECK && (ix < 0 || ix >= W)) continue;
      sc_fma_tile<COT>(acc, xc[iy * W + ix], ws + (r * kw + q) * COT);
    }
  }
}

template <int COT, int KH, int KW>
__global__ void __launch_bounds__(128) sc_direct_conv(const float* __restrict__ x, const float* __restrict__ w,
                                                       float* __restrict__ y, sc_conv_shape s, sc_conv_epi e) {
  extern __shared__ float4 sc_direct_smem[];
  float* ws = reinterpret_cast<float*>(sc_direct_smem);
  // The tile's epilogue parameters, read and combined once per block: per output, sqrtf and a
  // division for each of 16 channels made the stem's first convolution 1.5x slower (H100).
  __shared__ float eps_bias[COT], eps_mean[COT], eps_invstd[COT], eps_scale[COT], eps_shift[COT];
  const int kh = KH ? KH : s.w[2], kw = KW ? KW : s.w[3];
  const int H = s.in[2], W = s.in[3], OH = s.out[2], OW = s.out[3];
  const int cin = s.in[1] / s.groups, cout = s.out[1] / s.groups, taps = cin * kh * kw;
  const int tiles = (cout + COT - 1) / COT;
  int b = blockIdx.x;
  const int tile = b % tiles;
  b /= tiles;
  const int g = b % s.groups, n = b / s.groups;
  const int co0 = g * cout + tile * COT;
  for (int i = threadIdx.x; i < taps * COT; i += blockDim.x) {
    const int t = i % COT, tap = i / COT;
    ws[i] = tile * COT + t < cout ? w[(int64_t)(co0 + t) * taps + tap] : 0.0f;
  }
  if (threadIdx.x < COT && tile * COT + (int)threadIdx.x < cout) {
    const sc_conv_epi_channel ch(e, co0 + threadIdx.x);
    eps_bias[threadIdx.x] = ch.bias, eps_mean[threadIdx.x] = ch.mean, eps_invstd[threadIdx.x] = ch.invstd;
    eps_scale[threadIdx.x] = ch.scale, eps_shift[threadIdx.x] = ch.shift;
  }
  __syncthreads();
  const int p = blockIdx.y * blockDim.x + threadIdx.x;
  if (p >= OH * OW) return;
  const int iy0 = p / OW * s.stride[0] - s.pad[0], ix0 = p % OW * s.stride[1] - s.pad[1];
  const bool inside = iy0 >= 0 && iy0 + (kh - 1) * s.dilation[0] < H && ix0 >= 0 && ix0 + (kw - 1) * s.dilation[1] < W;
  float acc[COT];
#pragma unroll
  for (int t = 0; t < COT; ++t) acc[t] = 0.0f;
  const float* xg = x + ((int64_t)n * s.in[1] + (int64_t)g * cin) * H * W;
  for (int ci = 0; ci < cin; ++ci) {
    const float* xc = xg + (int64_t)ci * H * W;
    const float* wc = ws + ci * kh * kw * COT;
    if (inside) sc_direct_taps<COT, KH, KW, false>(acc, xc, wc, kh, kw, iy0, ix0, s);
    else sc_direct_taps<COT, KH, KW, true>(acc, xc, wc, kh, kw, iy0, ix0, s);
  }
  float* yo = y + ((int64_t)n * s.out[1] + co0) * OH * OW + p;
#pragma unroll
  for (int t = 0; t < COT; ++t)
    if (tile * COT + t < cout) {
      const sc_conv_epi_channel ch(eps_bias[t], eps_mean[t], eps_invstd[t], eps_scale[t], eps_shift[t]);
      yo[(int64_t)t * OH * OW] = ch.apply(e, acc[t]);
    }
}

template <int COT, int KH, int KW>
static int sc_direct_launch(const sc_conv_shape* s, const float* x, const float* w, float* y, const sc_conv_epi* e,
                            cudaStream_t stream) {
  const int cout = s->out[1] / s->groups, tiles = (cout + COT - 1) / COT;
  const dim3 grid((unsigned)(s->in[0] * s->groups * tiles), (unsigned)((s->out[2] * s->out[3] + 127) / 128));
  const size_t smem = (size_t)(s->in[1] / s->groups) * s->w[2] * s->w[3] * COT * sizeof(float);
  const sc_conv_epi none = {nullptr, nullptr, nullptr, nullptr, nullptr, 0.0f, 0};
  sc_direct_conv<COT, KH, KW><<<grid, 128, smem, stream>>>(x, w, y, *s, e ? *e : none);
  return (int)cudaGetLastError();
}

static int sc_conv_x3_try(sc_conv* c, const sc_conv_shape* s, const float* x, const float* w, float* y,
                          const sc_conv_epi* e, cudaStream_t stream);
static int sc_conv_fp32(sc_conv* c, const sc_conv_shape* s, const float* x, const float* w, float* y,
                        const sc_conv_epi* e, cudaStream_t stream);
static int sc_conv_x3_run(sc_conv* c, const sc_conv_shape* s, const float* x, const float* w, float* y,
                          cudaStream_t stream);
static void sc_conv_x3_release(sc_conv_x3* t);
static void sc_conv_release(sc_conv* c);

static int sc_conv_desc(cudnnConvolutionDescriptor_t* d, const sc_conv_shape* s, cudnnMathType_t math) {
  SC_DNN(cudnnCreateConvolutionDescriptor(d));
  SC_DNN(cudnnSetConvolutionNdDescriptor(*d, s->nd - 2, s->pad, s->stride, s->dilation, CUDNN_CROSS_CORRELATION,
                                         CUDNN_DATA_FLOAT));
  SC_DNN(cudnnSetConvolutionGroupCount(*d, s->groups / s->split));
  SC_DNN(cudnnSetConvolutionMathType(*d, math));
  return 0;
}

// Every algorithm cuDNN has for this convolution in `desc`'s math type, each timed by our own
// median of 5 runs on these buffers; the fastest is kept (into `*ms` where given). Find's ranking
// is not used: its pick for a 1x1 convolution ran 1.6x slower (314 against 196 µs) than the
// kernel eager's cuDNN chose for the same shape (93, H100), and timing Find's list again kept
// that pick: the faster algorithm was not on the list. The FFT algorithms are left out: they
// fork onto cuDNN's own streams (a captured graph then runs them as parallel branches), which
// the verifier cannot tell from side-stream work (seen on an H100: a ResNet block's 3x3
// convolutions). Workspace up to sc_workspace_limit(). False if none ran.
static bool sc_conv_choose(sc_conv* c, const sc_conv_shape* s, cudnnConvolutionDescriptor_t desc, const float* x,
                           const float* w, float* y, int* algo, size_t* workspace, float* ms, cudaStream_t stream) {
  static const int forward[] = {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
                                CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
                                CUDNN_CONVOLUTION_FWD_ALGO_GEMM,
                                CUDNN_CONVOLUTION_FWD_ALGO_DIRECT,
                                CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD,
                                CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED};
  static const int backward[] = {CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1,
                                 CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD,
                                 CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED};
  const int* algos = s->transposed ? backward : forward;
  const int count = s->transposed ? 4 : 6;
  const size_t limit = sc_workspace_limit();
  float best_ms = -1.0f;
  for (int i = 0; i < count; ++i) {
    size_t need = 0;
    const cudnnStatus_t st =
        s->transposed ? cudnnGetConvolutionBackwardDataWorkspaceSize(sc_dnn, c->w, c->in, desc, c->out,
                                                                     (cudnnConvolutionBwdDataAlgo_t)algos[i], &need)
                      : cudnnGetConvolutionForwardWorkspaceSize(sc_dnn, c->in, c->w, desc, c->out,
                                                                (cudnnConvolutionFwdAlgo_t)algos[i], &need);
    if (st != CUDNN_STATUS_SUCCESS || need > limit || sc_reserve_workspace(need) != 0) continue;
    const float t =
        sc_median_ms([&] { return sc_conv_run(c, s, desc, algos[i], need, 0.0f, x, w, y, stream); }, stream);
    if (t >= 0.0f && (best_ms < 0.0f || t < best_ms)) best_ms = t, *algo = algos[i], *workspace = need;
  }
  cudaGetLastError();
  if (best_ms < 0.0f) return false;
  if (ms) *ms = best_ms;
  return true;
}

// How many images one cuDNN call takes: cuDNN refuses a tensor of 2^31 elements or more, so a
// larger batch runs as calls of the largest divisor of N that keeps each within 2^28 elements, as
// PyTorch splits it (split_batch_dim_to_32bit_out); 0 where one image is too large already.
static int sc_conv_images(const sc_conv_shape* s) {
  const int64_t in = sc_elements(s->in, 1, s->nd), out = sc_elements(s->out, 1, s->nd);
  const int64_t image = in > out ? in : out, most = (int64_t)1 << 28, int_max = 0x7fffffff;
  if (image > int_max) return 0;
  if (image * s->in[0] <= int_max) return s->in[0];
  int images = (int)(most / image > 1 ? most / image : 1);
  while (s->in[0] % images) --images;
  return images;
}

// cuDNN's descriptors and its fastest algorithm, with its time in `*dnn_ms`; a cuDNN status where
// it cannot run the convolution here (a tensor it refuses, no algorithm that ran within the
// workspace limit). The math type is the shape's, eager's precision for this convolution: FMA math
// keeps fp32 exact (cuDNN would otherwise use TF32 tensor cores for fp32 data); where eager runs
// it in TF32, every algorithm is measured in the default and in the tensor-op math type and the
// fastest pair kept.
static int sc_conv_dnn_prepare(sc_conv* c, const sc_conv_shape* s, const float* x, const float* w, float* y,
                               float* dnn_ms, cudaStream_t stream) {
  SC_DNN(cudnnSetStream(sc_dnn, stream));
  if (!(c->images = sc_conv_images(s))) {
    fprintf(stderr, "cuDNN: one image of this convolution holds more than 2^31 - 1 elements\n");
    return 20000 + (int)CUDNN_STATUS_NOT_SUPPORTED;
  }
  int in_slice[5], out_slice[5], w_slice[5];  // one call's: images, channels (filter rows) divided by `split`
  for (int i = 0; i < s->nd; ++i) in_slice[i] = s->in[i], out_slice[i] = s->out[i], w_slice[i] = s->w[i];
  in_slice[0] = out_slice[0] = c->images;
  in_slice[1] /= s->split;
  out_slice[1] /= s->split;
  w_slice[0] /= s->split;
  int st;
  if ((st = sc_tensor(&c->in, s->nd, in_slice, s->in, s->channels_last)) != 0 ||
      (st = sc_tensor(&c->out, s->nd, out_slice, s->out, s->channels_last)) != 0)
    return st;
  SC_DNN(cudnnCreateFilterDescriptor(&c->w));
  SC_DNN(cudnnSetFilterNdDescriptor(c->w, CUDNN_DATA_FLOAT, s->channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                    s->nd, w_slice));
  if ((st = sc_conv_desc(&c->conv, s, s->math[0])) != 0) return st;
  bool found = sc_conv_choose(c, s, c->conv, x, w, y, &c->algo, &c->workspace, dnn_ms, stream);
  if (s->math[1] != s->math[0]) {
    cudnnConvolutionDescriptor_t other = nullptr;
    int algo = 0;
    size_t workspace = 0;
    float ms = 0.0f;
    if (sc_conv_desc(&other, s, s->math[1]) == 0 &&
        sc_conv_choose(c, s, other, x, w, y, &algo, &workspace, &ms, stream) && (!found || ms < *dnn_ms)) {
      cudnnDestroyConvolutionDescriptor(c->conv);
      c->conv = other, c->algo = algo, c->workspace = workspace, *dnn_ms = ms, found = true;
    } else if (other) {
      cudnnDestroyConvolutionDescriptor(other);
    }
    cudaGetLastError();
  }
  if (!found) {
    fprintf(stderr, "cuDNN: no algorithm for this convolution in its math type (%s) ran within the workspace limit\n",
            s->math[0] == CUDNN_FMA_MATH ? "FMA, exact fp32" : "TF32 allowed");
    return 20000 + (int)CUDNN_STATUS_NOT_SUPPORTED;
  }
  return 0;
}

// The algorithm by measurement, falling back in order where cuDNN cannot run the convolution: the
// generated alternative (the direct kernel, or a pointwise convolution's cuBLASLt GEMM) alone,
// where there is one and it runs; else cuDNN's status, which the launcher returns tagged with its
// step (sc_step_status) so that the refine step leaves this convolution to PyTorch. An epilogue
// runs as its own pass after cuDNN's fastest or, where that measures faster, in cuDNN's fused
// bias-activation call; the generated alternative (the direct kernel, which applies the epilogue
// as it stores, or the pointwise GEMM and the epilogue's pass) is timed against the faster of the
// two (those are fp32 whatever cuDNN's math). Where the job allows TF32 and cuDNN's math is FMA,
// the 3xTF32 form is measured next and kept only if faster.
static int sc_conv_prepare(sc_conv* c, const sc_conv_shape* s, const float* x, const float* w, float* y,
                           const sc_conv_epi* e, sc_direct_fn direct, cudaStream_t stream) {
  if (!sc_dnn) SC_DNN(cudnnCreate(&sc_dnn));
  float dnn_ms = 0.0f;  // cuDNN's time for the algorithm chosen
  const int st = sc_conv_dnn_prepare(c, s, x, w, y, &dnn_ms, stream);
  if (st != 0) {
    cudaGetLastError();
    const int alone = direct ? direct(s, x, w, y, e, stream) : st;
    if (alone != 0 || cudaStreamSynchronize(stream) != cudaSuccess) {
      cudaGetLastError();
      fprintf(stderr, "cuDNN cannot run this convolution here (status %d)%s\n", st - 20000,
              direct ? ", nor could its generated form" : " and it has no generated form");
      sc_conv_release(c);  // what cuDNN's try made; a later call prepares afresh
      return st;
    }
    fprintf(stderr, "cuDNN cannot run this convolution here (status %d): its generated form runs it\n", st - 20000);
    c->direct = direct;
    c->ready = true;
    return 0;
  }
  c->ready = true;
  if (e) {
    const float with_pass = sc_median_ms([&] { return sc_conv_fp32(c, s, x, w, y, e, stream); }, stream);
    if (with_pass >= 0.0f) dnn_ms = with_pass;
    if (!s->transposed && s->split == 1 && c->images == s->in[0]) sc_conv_fused_try(c, s, x, w, y, e, &dnn_ms, stream);
  }
  if (direct) {
    const float direct_ms = sc_median_ms([&] { return direct(s, x, w, y, e, stream); }, stream);
    if (direct_ms >= 0.0f && direct_ms < dnn_ms) c->direct = direct;
    cudaGetLastError();
  }
  // Already on TF32 tensor cores where cuDNN's math allows them (eager's precision): the 3xTF32
  // form would only be slower.
  if (s->math[0] != CUDNN_FMA_MATH) return 0;
  return sc_conv_x3_try(c, s, x, w, y, e, stream);
}

// The form chosen without the 3xTF32 split, epilogue included: the generated alternative, cuDNN's
// fused call, or cuDNN's algorithm and the epilogue's pass (cuDNN's in the shape's math: exact
// fp32, or TF32 where eager runs the convolution so).
static int sc_conv_fp32(sc_conv* c, const sc_conv_shape* s, const float* x, const float* w, float* y,
                        const sc_conv_epi* e, cudaStream_t stream) {
  if (c->direct) return c->direct(s, x, w, y, e, stream);
  if (c->fused) return sc_conv_fused_run(c, s, x, w, y, e, stream);
  const int st = sc_conv_run(c, s, c->conv, c->algo, c->workspace, 0.0f, x, w, y, stream);
  return st ? st : sc_conv_epilogue(s, y, e, stream);
}

static int sc_conv_launch(sc_conv* c, const sc_conv_shape* s, const float* x, const float* w, float* y,
                          const sc_conv_epi* e, sc_direct_fn direct, cudaStream_t stream) {
  if (!c->ready) {
    int st = sc_conv_prepare(c, s, x, w, y, e, direct, stream);
    if (st != 0) return st;
  }
  if (c->x3) {
    const int st = sc_conv_x3_run(c, s, x, w, y, stream);
    return st ? st : sc_conv_epilogue(s, y, e, stream);
  }
  return sc_conv_fp32(c, s, x, w, y, e, stream);
}

static void sc_conv_release(sc_conv* c) {
  if (c->in) cudnnDestroyTensorDescriptor(c->in);
  if (c->out) cudnnDestroyTensorDescriptor(c->out);
  if (c->w) cudnnDestroyFilterDescriptor(c->w);
  if (c->conv) cudnnDestroyConvolutionDescriptor(c->conv);
  sc_conv_fused_release(c);
  if (c->x3) sc_conv_x3_release(c->x3);
  *c = sc_conv();
}

static sc_conv* sc_conv_for_rows(sc_per_rows<sc_conv>* r, int64_t rows) { return sc_for_rows(r, rows, sc_conv_release); }
)";

constexpr const char* kDeconvDirect = R"(
// A direct transposed convolution, gathered: each output sums the inputs whose window covers it,
// for the transposed convolutions cuDNN's fp32 backward-data algorithms ran at about 11 TFLOP/s
// on an H100 (83: a 4x4, stride-2 upsampling, 393 µs). An output at (oy, ox) is reached only by
// the taps ky = (oy + pad) mod S + S*a, so a block takes the outputs of one phase (oy mod SY,
// ox mod SX): all its threads use the same taps, with no divergence and none of the S*S-fold
// wasted tests of a scatter, and it stages just those taps of its COT output channels' weights in
// shared memory as [ci][a][b][COT]. A thread computes one output position for the COT channels.
// 1-D (a unit height) and 2-D, contiguous, dilation 1, any padding and groups. The
// block's work is split into host-callable steps so the CPU tests can run them thread by thread.
struct sc_deconv_block {
  int n, g, tile;    // image, group, channel tile
  int ry, rx;        // the phase's first taps: (py + pad) mod S
  int ny, nx;        // how many taps of the window reach this phase
  int py, px, first; // the phase and the block's first position within it
};

// Output positions of a stride phase, at most (every SY-th row, every SX-th column).
template <int SY, int SX>
__host__ __device__ inline int sc_deconv_per_phase(const sc_conv_shape& s) {
  return ((s.out[2] + SY - 1) / SY) * ((s.out[3] + SX - 1) / SX);
}

// Weights a block stages: each input channel's taps of one phase, for COT output channels.
template <int COT, int KH, int KW, int SY, int SX>
__host__ __device__ inline int sc_deconv_staged(const sc_conv_shape& s) {
  return s.in[1] / s.groups * ((KH + SY - 1) / SY) * ((KW + SX - 1) / SX) * COT;
}

// The grid: images x groups x channel tiles, then phases x 128-position chunks of a phase.
template <int COT, int SY, int SX>
__host__ __device__ inline dim3 sc_deconv_grid(const sc_conv_shape& s) {
  const int tiles = (s.out[1] / s.groups + COT - 1) / COT;
  const int chunks = (sc_deconv_per_phase<SY, SX>(s) + 127) / 128;
  return dim3((unsigned)(s.in[0] * s.groups * tiles), (unsigned)(SY * SX * chunks));
}

template <int COT, int KH, int KW, int SY, int SX>
__host__ __device__ inline sc_deconv_block sc_deconv_block_of(int bx, int by, const sc_conv_shape& s) {
  const int cout = s.out[1] / s.groups, tiles = (cout + COT - 1) / COT;
  const int chunks = (sc_deconv_per_phase<SY, SX>(s) + 127) / 128;
  sc_deconv_block b;
  b.tile = bx % tiles;
  bx /= tiles;
  b.g = bx % s.groups;
  b.n = bx / s.groups;
  const int phase = by / chunks;
  b.first = (by % chunks) * 128;
  b.py = phase / SX;
  b.px = phase % SX;
  b.ry = (b.py + s.pad[0]) % SY;
  b.rx = (b.px + s.pad[1]) % SX;
  b.ny = b.ry < KH ? (KH - b.ry + SY - 1) / SY : 0;
  b.nx = b.rx < KW ? (KW - b.rx + SX - 1) / SX : 0;
  return b;
}

// Staged weight `i` of the block, [ci][a][b][COT] (zero past the window or the channels).
template <int COT, int KH, int KW, int SY, int SX>
__host__ __device__ inline float sc_deconv_weight(const float* __restrict__ w, const sc_deconv_block& b,
                                                  const sc_conv_shape& s, int i) {
  constexpr int MY = (KH + SY - 1) / SY, MX = (KW + SX - 1) / SX;
  const int cin = s.in[1] / s.groups, cout = s.out[1] / s.groups;
  const int t = i % COT;
  int r = i / COT;
  const int bb = r % MX;
  r /= MX;
  const int a = r % MY, ci = r / MY, co = b.tile * COT + t;
  if (a >= b.ny || bb >= b.nx || co >= cout) return 0.0f;
  const int ky = b.ry + a * SY, kx = b.rx + bb * SX;
  return w[((int64_t)(b.g * cin + ci) * cout + co) * (KH * KW) + ky * KW + kx];
}

// The output position `thread` of the block, all COT channels, from the staged weights `ws`.
template <int COT, int KH, int KW, int SY, int SX>
__host__ __device__ inline void sc_deconv_output(const float* __restrict__ x, const float* ws, float* __restrict__ y,
                                                 const sc_deconv_block& b, const sc_conv_shape& s, int thread) {
  constexpr int MY = (KH + SY - 1) / SY, MX = (KW + SX - 1) / SX;
  const int H = s.in[2], W = s.in[3], OH = s.out[2], OW = s.out[3];
  const int cin = s.in[1] / s.groups, cout = s.out[1] / s.groups;
  const int PW = (OW + SX - 1) / SX, q = b.first + thread;
  const int oy = b.py + q / PW * SY, ox = b.px + q % PW * SX;
  if (q >= sc_deconv_per_phase<SY, SX>(s) || oy >= OH || ox >= OW) return;
  // Tap (ry + SY*a) of this output reads input row iy0 - a (exact: oy + pad - ry is a multiple of SY).
  const int iy0 = (oy + s.pad[0] - b.ry) / SY, ix0 = (ox + s.pad[1] - b.rx) / SX;
  float acc[COT];
#pragma unroll
  for (int t = 0; t < COT; ++t) acc[t] = 0.0f;
  const float* xg = x + ((int64_t)b.n * s.in[1] + (int64_t)b.g * cin) * H * W;
  for (int ci = 0; ci < cin; ++ci) {
    const float* xc = xg + (int64_t)ci * H * W;
    const float* wc = ws + ci * MY * MX * COT;
#pragma unroll
    for (int a = 0; a < MY; ++a) {
      const int iy = iy0 - a;
      if (a >= b.ny || iy < 0 || iy >= H) continue;
#pragma unroll
      for (int bb = 0; bb < MX; ++bb) {
        const int ix = ix0 - bb;
        if (bb >= b.nx || ix < 0 || ix >= W) continue;
        sc_fma_tile<COT>(acc, xc[iy * W + ix], wc + (a * MX + bb) * COT);
      }
    }
  }
  float* yo = y + ((int64_t)b.n * s.out[1] + b.g * cout + b.tile * COT) * OH * OW + (int64_t)oy * OW + ox;
#pragma unroll
  for (int t = 0; t < COT; ++t)
    if (b.tile * COT + t < cout) yo[(int64_t)t * OH * OW] = acc[t];
}

template <int COT, int KH, int KW, int SY, int SX>
__global__ void __launch_bounds__(128) sc_direct_deconv(const float* __restrict__ x, const float* __restrict__ w,
                                                         float* __restrict__ y, sc_conv_shape s) {
  extern __shared__ float4 sc_deconv_smem[];
  float* ws = reinterpret_cast<float*>(sc_deconv_smem);
  const sc_deconv_block b = sc_deconv_block_of<COT, KH, KW, SY, SX>(blockIdx.x, blockIdx.y, s);
  const int staged = sc_deconv_staged<COT, KH, KW, SY, SX>(s);
  for (int i = threadIdx.x; i < staged; i += blockDim.x) ws[i] = sc_deconv_weight<COT, KH, KW, SY, SX>(w, b, s, i);
  __syncthreads();
  sc_deconv_output<COT, KH, KW, SY, SX>(x, ws, y, b, s, threadIdx.x);
}

template <int COT, int KH, int KW, int SY, int SX>
static int sc_deconv_launch(const sc_conv_shape* s, const float* x, const float* w, float* y, cudaStream_t stream) {
  const size_t smem = (size_t)sc_deconv_staged<COT, KH, KW, SY, SX>(*s) * sizeof(float);
  sc_direct_deconv<COT, KH, KW, SY, SX><<<sc_deconv_grid<COT, SY, SX>(*s), 128, smem, stream>>>(x, w, y, *s);
  return (int)cudaGetLastError();
}
)";

// The library calls' tensor-core form, only in candidates of jobs that allow TF32 (the
// verifier's static check flags TF32 in any other). fp32-accurate products on TF32 tensor cores
// ("3xTF32"): x = hi + lo with hi = x rounded to TF32 and lo = x - hi (exact in fp32). A bilinear
// product is then hi*hi + hi*lo + lo*hi up to lo*lo, 2^-22 of it, below the rounding of an fp32
// accumulation over the same terms: three TF32 calls accumulating in fp32 replace one FMA call.
constexpr const char* kX3Common = R"(
// Splits `n` elements from `x` (a view's whole span) into hi and lo.
__global__ void sc_split_tf32(const float* __restrict__ x, float* __restrict__ hi, float* __restrict__ lo, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    const float v = x[i];
    unsigned h;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(h) : "f"(v));
    hi[i] = __uint_as_float(h);
    lo[i] = isfinite(v) ? v - __uint_as_float(h) : 0.0f;  // inf and NaN stay in hi alone
  }
}
static int sc_split(const float* x, float* hi, float* lo, int64_t n, cudaStream_t stream) {
  const int64_t blocks = (n + 255) / 256 < 132 * 16 ? (n + 255) / 256 : 132 * 16;
  sc_split_tf32<<<(unsigned)blocks, 256, 0, stream>>>(x, hi, lo, n);
  return (int)cudaGetLastError();
}

// Installs `form` in `*slot` and keeps it only when the whole of it, `run` (splits included),
// measures faster than `fp32_ms` by the same protocol; otherwise clears the slot and says no.
template <typename Form, typename Run>
static bool sc_x3_keep(Form** slot, Form* form, Run run, float fp32_ms, cudaStream_t stream) {
  *slot = form;
  const float ms = sc_median_ms(run, stream);
  if (fp32_ms >= 0.0f && ms >= 0.0f && ms < fp32_ms) return true;
  *slot = nullptr;
  return false;
}
)";

constexpr const char* kGemmX3 = R"(
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
)";

constexpr const char* kConvX3 = R"(
struct sc_conv_x3 {
  cudnnConvolutionDescriptor_t conv = nullptr;  // tensor-op math
  int algo = 0;
  size_t workspace = 0;
  float* parts = nullptr;  // hi and lo of the input, then of the weight
  int64_t x_n = 0, w_n = 0;
};

// The small products first, the large one last.
static int sc_conv_x3_run(sc_conv* c, const sc_conv_shape* s, const float* x, const float* w, float* y,
                          cudaStream_t stream) {
  sc_conv_x3* t = c->x3;
  float *x_hi = t->parts, *x_lo = x_hi + t->x_n, *w_hi = x_lo + t->x_n, *w_lo = w_hi + t->w_n;
  int st;
  if ((st = sc_split(x, x_hi, x_lo, t->x_n, stream)) != 0 || (st = sc_split(w, w_hi, w_lo, t->w_n, stream)) != 0 ||
      (st = sc_conv_run(c, s, t->conv, t->algo, t->workspace, 0.0f, x_hi, w_lo, y, stream)) != 0 ||
      (st = sc_conv_run(c, s, t->conv, t->algo, t->workspace, 1.0f, x_lo, w_hi, y, stream)) != 0)
    return st;
  return sc_conv_run(c, s, t->conv, t->algo, t->workspace, 1.0f, x_hi, w_hi, y, stream);
}

// Keeps the 3xTF32 form when the whole of it (splits and the epilogue's pass included) measures
// faster than the fp32 choice (cuDNN's FMA algorithm or the direct kernel) timed the same way;
// any failure keeps the fp32 choice.
static int sc_conv_x3_try(sc_conv* c, const sc_conv_shape* s, const float* x, const float* w, float* y,
                          const sc_conv_epi* e, cudaStream_t stream) {
  sc_conv_x3* t = new sc_conv_x3();
  t->x_n = sc_elements(s->in, 0, s->nd);
  t->w_n = sc_elements(s->w, 0, s->nd);
  bool ok = cudaMalloc(&t->parts, 2 * (t->x_n + t->w_n) * sizeof(float)) == cudaSuccess;
  float* x_hi = t->parts;
  float* w_hi = t->parts + 2 * t->x_n;
  ok = ok && sc_split(x, x_hi, x_hi + t->x_n, t->x_n, stream) == 0 &&
       sc_split(w, w_hi, w_hi + t->w_n, t->w_n, stream) == 0 && sc_conv_desc(&t->conv, s, CUDNN_TENSOR_OP_MATH) == 0 &&
       sc_conv_choose(c, s, t->conv, x_hi, w_hi, y, &t->algo, &t->workspace, nullptr, stream);
  if (ok) {
    const float fp32_ms = sc_median_ms([&] { return sc_conv_fp32(c, s, x, w, y, e, stream); }, stream);
    ok = sc_x3_keep(&c->x3, t, [&] {
      const int st = sc_conv_x3_run(c, s, x, w, y, stream);
      return st ? st : sc_conv_epilogue(s, y, e, stream);
    }, fp32_ms, stream);
  }
  if (!ok) sc_conv_x3_release(t);
  cudaGetLastError();
  return 0;
}

static void sc_conv_x3_release(sc_conv_x3* t) {
  if (t->conv) cudnnDestroyConvolutionDescriptor(t->conv);
  if (t->parts) cudaFree(t->parts);
  delete t;
}
)";

// A stack of recurrent layers (RnnCall in LibraryCall.h) through cuDNN's v8 RNN API, configured as
// PyTorch's _cudnn_rnn configures it (aten/src/ATen/native/cudnn/RNN.cpp and cudnn/Descriptors.h):
// double bias, linear input, fp32 data and math precision, projection size = hidden size, a
// no-dropout descriptor, padded I/O with every sequence full length, sequence-major data,
// [layers * directions, batch, hidden] states. PyTorch's flat parameter buffer is then in the
// layout cuDNN expects, which the first call checks pointer by pointer. Descriptors, the checks and
// the workspace are made on the first call; each call after is one cudnnRNNForward.
constexpr const char* kRnn = R"(
#include <vector>

struct sc_rnn_shape {
  cudnnRNNMode_t mode;
  int seq, batch, input, hidden, layers, dirs;
  long long weight_elements;  // the parameters' flat buffer
  cudnnRNNAlgo_t algo;        // as PyTorch's get_algo picks it
  cudnnMathType_t math;       // DEFAULT (TF32 allowed) or FMA, as eager's cudnn.allow_tf32
};

struct sc_rnn {
  bool ready = false;
  cudnnRNNDescriptor_t rnn = nullptr;
  cudnnDropoutDescriptor_t dropout = nullptr;
  cudnnRNNDataDescriptor_t x = nullptr, y = nullptr;
  cudnnTensorDescriptor_t h = nullptr, matrix = nullptr, bias = nullptr;
  size_t weight_bytes = 0, workspace = 0;
};

static int sc_rnn_data(cudnnRNNDataDescriptor_t* d, const sc_rnn_shape* s, int vector) {
  SC_DNN(cudnnCreateRNNDataDescriptor(d));
  std::vector<int> lengths(s->batch, s->seq);
  SC_DNN(cudnnSetRNNDataDescriptor(*d, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, s->seq, s->batch,
                                   vector, lengths.data(), nullptr));
  return 0;
}

static int sc_rnn_descriptors(sc_rnn* r, const sc_rnn_shape* s) {
  SC_DNN(cudnnCreateDropoutDescriptor(&r->dropout));
  SC_DNN(cudnnSetDropoutDescriptor(r->dropout, sc_dnn, 0.0f, nullptr, 0, 0));
  SC_DNN(cudnnCreateRNNDescriptor(&r->rnn));
  SC_DNN(cudnnSetRNNDescriptor_v8(r->rnn, s->algo, s->mode, CUDNN_RNN_DOUBLE_BIAS,
                                  s->dirs == 2 ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT,
                                  CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, s->math, s->input, s->hidden, s->hidden,
                                  s->layers, r->dropout, CUDNN_RNN_PADDED_IO_ENABLED));
  int st;
  if ((st = sc_rnn_data(&r->x, s, s->input)) != 0 || (st = sc_rnn_data(&r->y, s, s->dirs * s->hidden)) != 0) return st;
  const int dims[3] = {s->layers * s->dirs, s->batch, s->hidden}, strides[3] = {s->batch * s->hidden, s->hidden, 1};
  SC_DNN(cudnnCreateTensorDescriptor(&r->h));
  SC_DNN(cudnnSetTensorNdDescriptor(r->h, CUDNN_DATA_FLOAT, 3, dims, strides));
  SC_DNN(cudnnCreateTensorDescriptor(&r->matrix));
  SC_DNN(cudnnCreateTensorDescriptor(&r->bias));
  return 0;
}

// Each parameter is where cuDNN expects it in the flat buffer, as PyTorch's try_get_weight_buf
// checks before it passes the buffer (get_expected_data_ptrs): per pseudo-layer the input and the
// recurrent matrix (linear layers 0 and gates), then their biases, in the order w_ih, w_hh, b_ih,
// b_hh. ModelNew's parameters are such views once nn.RNNBase has flattened them (on .to(device));
// separate tensors would leave cuDNN reading past the first one.
static int sc_rnn_check_weights(sc_rnn* r, const sc_rnn_shape* s, const float* const* w) {
  if (r->weight_bytes != (size_t)s->weight_elements * sizeof(float)) {
    fprintf(stderr, "cuDNN RNN: the parameters' flat buffer holds %lld floats; cuDNN's weight space is %zu bytes\n",
            s->weight_elements, r->weight_bytes);
    return 20000 + (int)CUDNN_STATUS_BAD_PARAM;
  }
  const int gates = s->mode == CUDNN_LSTM ? 4 : s->mode == CUDNN_GRU ? 3 : 1;
  for (int layer = 0; layer < s->layers * s->dirs; ++layer)
    for (int k = 0; k < 2; ++k) {
      void *m = nullptr, *b = nullptr;
      SC_DNN(cudnnGetRNNWeightParams(sc_dnn, r->rnn, layer, r->weight_bytes, w[0], k * gates, r->matrix, &m, r->bias, &b));
      if (m != (const void*)w[4 * layer + k] || b != (const void*)w[4 * layer + 2 + k]) {
        fprintf(stderr, "cuDNN RNN: parameter %d of pseudo-layer %d is not where cuDNN expects it in the flat buffer "
                "(the RNN's parameters must be one flattened buffer)\n", k, layer);
        return 20000 + (int)CUDNN_STATUS_BAD_PARAM;
      }
    }
  return 0;
}

static int sc_rnn_prepare(sc_rnn* r, const sc_rnn_shape* s, const float* const* w) {
  if (!sc_dnn) SC_DNN(cudnnCreate(&sc_dnn));
  int st;
  if ((st = sc_rnn_descriptors(r, s)) != 0) return st;
  SC_DNN(cudnnGetRNNWeightSpaceSize(sc_dnn, r->rnn, &r->weight_bytes));
  if ((st = sc_rnn_check_weights(r, s, w)) != 0) return st;
  SC_DNN(cudnnGetRNNTempSpaceSizes(sc_dnn, r->rnn, CUDNN_FWD_MODE_INFERENCE, r->x, &r->workspace, nullptr));
  if ((st = sc_reserve_workspace(r->workspace)) != 0) return st;
  r->ready = true;
  return 0;
}

// Inference mode: the output equals training's with no dropout drawn, and no reserve space is
// written. The sequence lengths live in the data descriptors (PyTorch passes no device copy).
static int sc_rnn_launch(sc_rnn* r, const sc_rnn_shape* s, const float* x, const float* hx, const float* cx,
                         const float* const* w, float* y, float* hy, float* cy, cudaStream_t stream) {
  int st;
  if (!r->ready && (st = sc_rnn_prepare(r, s, w)) != 0) return st;
  SC_DNN(cudnnSetStream(sc_dnn, stream));
  SC_DNN(cudnnRNNForward(sc_dnn, r->rnn, CUDNN_FWD_MODE_INFERENCE, nullptr, r->x, x, r->y, y, r->h, hx, hy, r->h, cx, cy,
                         r->weight_bytes, w[0], r->workspace, sc_workspace, 0, nullptr));
  return 0;
}
)";

// Jobs that keep fp32 math: the tensor-core form is never tried.
constexpr const char* kGemmFp32Only = R"(
static int sc_gemm_x3_try(sc_gemm*, const sc_gemm_shape*, const float*, const float*, const float*, float*, cudaStream_t,
                          float) {
  return 0;
}
static int sc_gemm_x3_run(sc_gemm*, const sc_gemm_shape*, const float*, const float*, const float*, float*,
                          cudaStream_t) {
  return (int)cudaErrorNotSupported;
}
static void sc_gemm_x3_release(sc_gemm_x3*) {}
)";

constexpr const char* kConvFp32Only = R"(
static int sc_conv_x3_try(sc_conv*, const sc_conv_shape*, const float*, const float*, float*, const sc_conv_epi*,
                          cudaStream_t) {
  return 0;
}
static int sc_conv_x3_run(sc_conv*, const sc_conv_shape*, const float*, const float*, float*, cudaStream_t) {
  return (int)cudaErrorNotSupported;
}
static void sc_conv_x3_release(sc_conv_x3*) {}
)";

std::string ptr(const std::map<std::string, int>& slots, const std::string& id, int64_t offset, bool isConst) {
  return std::string("(") + (isConst ? "const float*" : "float*") + ")t[" + std::to_string(slots.at(id)) + "].data" +
         (offset ? " + " + std::to_string(offset) : "");
}

std::string ints(const std::vector<int64_t>& v, std::size_t n) {
  std::string s = "{";
  for (std::size_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(i < v.size() ? v[i] : 0);
  return s + "}";
}

}  // namespace

std::optional<std::size_t> libraryFailureStep(long long status) {
  const long long library = status % kStepStatus;
  if (status < kStepStatus || library < 10000 || library >= 30000) return std::nullopt;
  return static_cast<std::size_t>(status / kStepStatus - 1);
}

int groupCalls(const ConvCall& c) {
  return c.groups > 1 && c.groups < c.inShape[1] ? static_cast<int>(c.groups) : 1;
}

namespace {

// Shapes as cuDNN sees them: a 1-D convolution gets a unit height.
std::vector<int64_t> as2d(std::vector<int64_t> shape, bool oneD) {
  if (oneD) shape.insert(shape.begin() + 2, 1);
  return shape;
}
std::vector<int64_t> spatial2d(std::vector<int64_t> v, bool oneD, int64_t unit) {
  if (oneD) v.insert(v.begin(), unit);
  return v;
}

// The cuBLASLt epilogue that applies the call's bias and activation as the GEMM stores.
const char* gemmEpilogue(const GemmCall& g) {
  if (g.activation == "relu") return g.bias ? "CUBLASLT_EPILOGUE_RELU_BIAS" : "CUBLASLT_EPILOGUE_RELU";
  if (g.activation == "gelu_tanh") return g.bias ? "CUBLASLT_EPILOGUE_GELU_BIAS" : "CUBLASLT_EPILOGUE_GELU";
  return g.bias ? "CUBLASLT_EPILOGUE_BIAS" : "CUBLASLT_EPILOGUE_DEFAULT";
}

}  // namespace

std::string emitLibraryPrelude(bool gemm, bool conv, bool rnn, bool directDeconv, bool tensorCores) {
  if (!gemm && !conv && !rnn) return "";
  std::string s = "\n#define SC_STEP_STATUS " + std::to_string(kStepStatus) + kCommon;
  if (tensorCores && (gemm || conv)) s += kX3Common;  // the 3xTF32 forms are GEMMs' and convolutions'
  if (gemm) s += std::string(kGemm) + (tensorCores ? kGemmX3 : kGemmFp32Only);
  if (conv || rnn) s += kDnn;
  if (conv) s += std::string(kConv) + (directDeconv ? kDeconvDirect : "") + (tensorCores ? kConvX3 : kConvFp32Only);
  if (rnn) s += kRnn;
  return s;
}

namespace {

// The launcher of an RNN: its shape, and the parameters' pointers in PyTorch's order.
void emitRnn(std::ostringstream& o, const RnnCall& r, const std::string& name, const std::string& step,
             const std::map<std::string, int>& slots) {
  static const char* modes[] = {"CUDNN_RNN_RELU", "CUDNN_RNN_TANH", "CUDNN_LSTM", "CUDNN_GRU"};
  o << "static sc_rnn " << name << "_state;\n"
    << "static const sc_rnn_shape " << name << "_shape = {" << modes[r.mode] << ", " << r.seqLength << ", " << r.batch
    << ", " << r.inputSize << ", " << r.hiddenSize << ", " << r.layers << ", " << r.directions << ", " << r.weightElements
    << "LL, " << (r.persistSmallH() ? "CUDNN_RNN_ALGO_PERSIST_STATIC_SMALL_H" : "CUDNN_RNN_ALGO_STANDARD") << ", "
    << (r.tf32 ? "CUDNN_DEFAULT_MATH" : "CUDNN_FMA_MATH") << "};\n"
    << "static int launch_" << name << "(const StitchTensor* t, int64_t, cudaStream_t stream) {\n"
    << "  const float* const w[] = {";
  for (std::size_t i = 0; i < r.weights.size(); ++i) o << (i ? ", " : "") << ptr(slots, r.weights[i], 0, true);
  o << "};\n  return sc_step_status(sc_rnn_launch(&" << name << "_state, &" << name << "_shape, "
    << ptr(slots, r.input, r.inputOffset, true)
    << ", " << ptr(slots, r.hx, r.hxOffset, true) << ", "
    << (r.cx.empty() ? "nullptr" : ptr(slots, r.cx, r.cxOffset, true)) << ", w, " << ptr(slots, r.output, 0, false) << ", "
    << ptr(slots, r.hy, 0, false) << ", " << (r.cy.empty() ? "nullptr" : ptr(slots, r.cy, 0, false)) << ", stream), "
    << step << ");\n}\n";
}

}  // namespace

EmittedKernel emitLibraryCall(const LibraryCall& call, const std::string& name, std::size_t stepIndex,
                              const std::map<std::string, int>& slots) {
  std::ostringstream o;
  const std::string step = std::to_string(stepIndex);
  o << "// " << name << ": " << call.describe() << "\n";
  if (call.kind == LibraryCall::Kind::Rnn) {
    emitRnn(o, call.rnn, name, step, slots);
  } else if (call.kind == LibraryCall::Kind::Gemm) {
    const GemmCall& g = call.gemm;
    const bool rows = g.mPerRow || g.batchPerRow;
    o << "static " << (rows ? "sc_per_rows<sc_gemm> " : "sc_gemm ") << name << "_state;\n"
      << "static const sc_gemm_shape " << name << "_shape = {" << g.batch << ", " << g.m << ", " << g.n << ", " << g.k
      << ", " << g.a.rowStride << ", " << g.a.colStride << ", " << g.a.batchStride << ", " << g.b.rowStride << ", "
      << g.b.colStride << ", " << g.b.batchStride << ", " << floatLiteral(g.alpha) << ", " << (g.bias ? 1 : 0) << ", "
      << gemmEpilogue(g) << ", "
      << (g.tf32 ? "CUBLAS_COMPUTE_32F_FAST_TF32" : "CUBLAS_COMPUTE_32F") << "};\n"
      << "static int launch_" << name << "(const StitchTensor* t, int64_t" << (rows ? " rows" : "")
      << ", cudaStream_t stream) {\n";
    if (rows) {
      o << "  sc_gemm_shape s = " << name << "_shape;\n";
      if (g.mPerRow) o << "  s.m = rows * " << g.mPerRow << ";\n";
      if (g.batchPerRow) o << "  s.batch = rows * " << g.batchPerRow << ";\n";
    }
    o << "  return sc_step_status(sc_gemm_launch("
      << (rows ? "sc_gemm_for_rows(&" + name + "_state, rows), &s, " : "&" + name + "_state, &" + name + "_shape, ")
      << ptr(slots, g.a.tensorId, g.a.offset, true) << ", " << ptr(slots, g.b.tensorId, g.b.offset, true) << ", "
      << (g.bias ? ptr(slots, g.bias->tensorId, g.bias->offset, true) : "nullptr") << ", "
      << ptr(slots, g.output, 0, false) << ", stream), " << step << ");\n}\n";
  } else {
    const ConvCall& c = call.conv;
    const bool rows = c.nPerRow > 0;
    const bool oneD = c.inShape.size() == 3;
    const auto in = as2d(c.inShape, oneD), w = as2d(c.weightShape, oneD), out = as2d(c.outShape, oneD);
    const std::size_t nd = in.size();
    // The generated alternative for this shape (a direct kernel, or a pointwise convolution's
    // GEMM), measured against cuDNN's choice on the first call.
    std::string direct = "nullptr";
    auto directLauncher = [&](const std::string& body, const char* suffix = "_direct") {
      direct = name + suffix;
      o << "static int " << direct << "(const sc_conv_shape* s, const float* x, const float* w, float* y, "
        << "const sc_conv_epi* e, cudaStream_t stream) {\n" << body << "}\n";
    };
    const int64_t kh = w[2], kw = w[3];
    if (pointwiseGemm(c)) {
      // y[n] = weight[Cout, Cin] @ x[n][Cin, pixels]: one batch entry per image, the weight shared
      // (batch stride 0); the epilogue, if any, as its own pass. Exact fp32 whatever cuDNN's math
      // (an alternative closer to the truth, never a TF32 matmul eager does not run).
      int64_t pixels = 1;
      for (std::size_t d = 2; d < c.outShape.size(); ++d) pixels *= c.outShape[d];
      const int64_t cin = c.inShape[1], cout = c.outShape[1];
      o << "static " << (rows ? "sc_per_rows<sc_gemm> " : "sc_gemm ") << name << "_gemm;\n"
        << "static const sc_gemm_shape " << name << "_gemm_shape = {" << c.inShape[0] << ", " << cout << ", " << pixels
        << ", " << cin << ", " << cin << ", 1, 0, " << pixels << ", 1, " << cin * pixels << ", " << floatLiteral(1.0)
        << ", 0, CUBLASLT_EPILOGUE_DEFAULT, CUBLAS_COMPUTE_32F};\n";
      // Where the rows are the call's, one image per GEMM batch entry: the batch count is the call's N.
      const std::string gemm = rows ? "  sc_gemm_shape g = " + name + "_gemm_shape;\n  g.batch = s->in[0];\n" +
                                          "  const int st = sc_gemm_launch(sc_gemm_for_rows(&" + name + "_gemm, g.batch), &g, "
                                    : "  const int st = sc_gemm_launch(&" + name + "_gemm, &" + name + "_gemm_shape, ";
      directLauncher(gemm + "w, x, nullptr, y, stream);\n  return st ? st : sc_conv_epilogue(s, y, e, stream);\n",
                     "_pointwise");
    } else if (const int tile = directConvTile(c)) {
      const bool fixed = kh <= 7 && kw <= 7;
      directLauncher("  return sc_direct_launch<" + std::to_string(tile) + ", " + std::to_string(fixed ? kh : 0) +
                     ", " + std::to_string(fixed ? kw : 0) + ">(s, x, w, y, e, stream);\n");
    } else if (const int deconvTile = directDeconvTile(c)) {
      const auto stride = spatial2d(c.stride, oneD, 1);
      directLauncher("  const int st = sc_deconv_launch<" + std::to_string(deconvTile) + ", " + std::to_string(kh) + ", " +
                     std::to_string(kw) + ", " + std::to_string(stride[0]) + ", " + std::to_string(stride[1]) +
                     ">(s, x, w, y, stream);\n  return st ? st : sc_conv_epilogue(s, y, e, stream);\n");
    }
    o << "static " << (rows ? "sc_per_rows<sc_conv> " : "sc_conv ") << name << "_state;\n"
      << "static const sc_conv_shape " << name << "_shape = {" << nd << ", " << ints(in, 5) << ", " << ints(w, 5)
      << ", " << ints(out, 5) << ", " << ints(spatial2d(c.padding, oneD, 0), 3) << ", "
      << ints(spatial2d(c.stride, oneD, 1), 3) << ", " << ints(spatial2d(c.dilation, oneD, 1), 3) << ", " << c.groups
      << ", " << (c.transposed ? 1 : 0) << ", " << groupCalls(c) << ", "
      << (c.tf32 ? "{CUDNN_DEFAULT_MATH, CUDNN_TENSOR_OP_MATH}" : "{CUDNN_FMA_MATH, CUDNN_FMA_MATH}")
      << (c.channelsLast ? ", 1" : "") << "};\n"
      << "static int launch_" << name << "(const StitchTensor* t, int64_t" << (rows ? " rows" : "")
      << ", cudaStream_t stream) {\n";
    if (rows)
      o << "  sc_conv_shape s = " << name << "_shape;\n  s.in[0] = s.out[0] = (int)(rows * " << c.nPerRow << ");\n";
    const ConvEpilogue& ep = c.epilogue;
    if (!ep.empty()) {
      auto param = [&](const std::string& id) { return id.empty() ? std::string("nullptr") : ptr(slots, id, 0, true); };
      o << "  const sc_conv_epi e = {" << param(ep.bias) << ", " << param(ep.mean) << ", " << param(ep.var) << ", "
        << param(ep.scale) << ", " << param(ep.shift) << ", " << floatLiteral(ep.eps) << ", " << (ep.relu ? 1 : 0)
        << "};\n";
    }
    o << "  return sc_step_status(sc_conv_launch("
      << (rows ? "sc_conv_for_rows(&" + name + "_state, rows), &s, " : "&" + name + "_state, &" + name + "_shape, ")
      << ptr(slots, c.input, c.inputOffset, true) << ", " << ptr(slots, c.weight, c.weightOffset, true) << ", "
      << ptr(slots, c.output, 0, false) << ", " << (ep.empty() ? "nullptr" : "&e") << ", " << direct
      << ", stream), " << step << ");\n}\n";
  }
  return {o.str(), "launch_" + name};
}

}  // namespace stitch::agents::builtin
