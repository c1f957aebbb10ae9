// Which fp32 GEMM algorithms cuBLASLt has for the suite's GEMM shapes, and how fast each runs:
// cuBLAS's cublasSgemm (what eager PyTorch calls for torch.mm), cuBLASLt's heuristic pick, the best
// of its first 8 and of its first 64 suggestions, and the best of every configuration its
// algorithms accept (tile x stages x split-K x reduction scheme x swizzle), each measured with the
// L2 flushed before every run (median of 21 for the finalists). The built-in coder's GEMM launcher
// measures the heuristic's first 8 on the first call; this says what a wider search would gain.
//   nvcc -O2 -std=c++17 -arch=sm_90 bench/gemm_algos.cu -lcublasLt -lcublas -o gemm_algos && ./gemm_algos
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#define CK(x)                                                                 \
  do {                                                                        \
    auto e_ = (x);                                                            \
    if ((int)e_ != 0) {                                                       \
      fprintf(stderr, "%s:%d %s -> %d\n", __FILE__, __LINE__, #x, (int)e_);   \
      exit(1);                                                                \
    }                                                                         \
  } while (0)

struct Shape {
  const char* task;
  int batch, m, n, k;
  bool bTransposed;  // b is a [n, k] weight read through .t() (nn.Linear)
  bool bias;
};

static float* g_flush = nullptr;
static const size_t kFlushFloats = 2ull * 50 * 1024 * 1024 / 4 * 1;  // 100 MB, twice the H100's L2

__global__ void readAll(const float4* p, size_t n, float* sink) {
  float s = 0.f;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float4 v = p[i];
    s += v.x + v.y + v.z + v.w;
  }
  if (s == 12345.f) *sink = s;  // keeps the reads
}

// Values in [-1, 1): zeros would make the kernels draw less power than real data does.
__global__ void fill(float* p, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] = (float)((i * 2654435761u) % 2048u) / 1024.f - 1.f;
}

static float timeMedian(const std::function<bool()>& run, int reps) {
  std::vector<float> t;
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  if (!run()) return -1.f;
  for (int r = 0; r < reps; ++r) {
    readAll<<<1024, 256>>>(reinterpret_cast<const float4*>(g_flush), kFlushFloats / 4, g_flush);
    cudaEventRecord(a);
    if (!run()) return -1.f;
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms * 1000.f);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  if (cudaGetLastError() != cudaSuccess) return -1.f;
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Lt {
  cublasLtHandle_t h;
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t la, lb, ld;
  const float *A, *B, *bias;
  float* D;
  void* ws;
  size_t wsBytes;
  bool run(const cublasLtMatmulAlgo_t& algo, size_t workspace) const {
    const float one = 1.f, zero = 0.f;
    if (workspace > wsBytes) return false;
    return cublasLtMatmul(h, op, &one, B, la, A, lb, &zero, D, ld, D, ld, &algo, ws, workspace, 0) ==
           CUBLAS_STATUS_SUCCESS;
  }
};

template <typename T>
static std::vector<T> capArray(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoCapAttributes_t attr) {
  size_t bytes = 0;
  cublasLtMatmulAlgoCapGetAttribute(&algo, attr, nullptr, 0, &bytes);
  std::vector<T> v(bytes / sizeof(T));
  if (bytes) cublasLtMatmulAlgoCapGetAttribute(&algo, attr, v.data(), bytes, &bytes);
  return v;
}

template <typename T>
static T cap(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoCapAttributes_t attr) {
  T v{};
  size_t bytes = 0;
  cublasLtMatmulAlgoCapGetAttribute(&algo, attr, &v, sizeof(v), &bytes);
  return v;
}

template <typename T>
static T cfg(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  T v{};
  size_t bytes = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &v, sizeof(v), &bytes);
  return v;
}

static std::string describe(const cublasLtMatmulAlgo_t& a) {
  char s[160];
  snprintf(s, sizeof s, "id %d tile %u stages %u splitK %u red %u swz %u custom %u", cfg<int>(a, CUBLASLT_ALGO_CONFIG_ID),
           cfg<uint32_t>(a, CUBLASLT_ALGO_CONFIG_TILE_ID), cfg<uint32_t>(a, CUBLASLT_ALGO_CONFIG_STAGES_ID),
           cfg<uint32_t>(a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM), cfg<uint32_t>(a, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME),
           cfg<uint32_t>(a, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING), cfg<uint32_t>(a, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION));
  return s;
}

struct Timed {
  float us;
  cublasLtMatmulAlgo_t algo;
  size_t ws;
};

int main() {
  const Shape shapes[] = {
      {"54 matmul_square", 1, 3072, 3072, 3072, false, false},
      {"55 mm_irregular", 1, 4099, 1000, 777, false, false},
      {"56 tall_skinny", 1, 65536, 128, 256, false, false},
      {"57 small_k_wide", 1, 8192, 8192, 64, false, false},
      {"58 bmm", 64, 512, 512, 512, false, false},
      {"59 broadcast", 1, 16384, 1024, 1024, false, false},
      {"60 linear_bias", 1, 8192, 2048, 1024, true, true},
      {"86 fc1", 1, 8192, 1024, 512, true, true},
      {"86 fc2", 1, 8192, 1024, 1024, true, true},
      {"86 fc3", 1, 8192, 256, 1024, true, true},
      {"90 fc1", 1, 4096, 3072, 768, true, true},
      {"90 fc2", 1, 4096, 768, 3072, true, true},
  };
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  int driver = 0;
  cudaDriverGetVersion(&driver);
  printf("%s, driver API %d, cuBLASLt %zu; fp32 (CUBLAS_COMPUTE_32F), L2 flushed before each run, µs\n\n", prop.name,
         driver, cublasLtGetVersion());
  CK(cudaMalloc(&g_flush, kFlushFloats * 4));
  CK(cudaMemset(g_flush, 0, kFlushFloats * 4));
  cublasLtHandle_t lt;
  CK(cublasLtCreate(&lt));
  cublasHandle_t blas;
  CK(cublasCreate(&blas));
  const size_t wsBytes = 64ull << 20;
  void* ws;
  CK(cudaMalloc(&ws, wsBytes));
  CK(cublasSetWorkspace(blas, ws, wsBytes));

  printf("| task | cublasSgemm | heuristic #0 | best of 8 | best of 64 (count) | best enumerated (tried) | best config |\n");
  printf("|---|---|---|---|---|---|---|\n");
  for (const Shape& s : shapes) {
    float *A, *B, *D, *bias;
    const size_t na = (size_t)s.batch * s.m * s.k, nb = (size_t)s.batch * s.k * s.n, nd = (size_t)s.batch * s.m * s.n;
    CK(cudaMalloc(&A, na * 4));
    CK(cudaMalloc(&B, nb * 4));
    CK(cudaMalloc(&D, nd * 4));
    CK(cudaMalloc(&bias, s.n * 4));
    fill<<<1024, 256>>>(A, na);
    fill<<<1024, 256>>>(B, nb);
    fill<<<1024, 256>>>(bias, s.n);

    // Row-major out[m,n] = a[m,k] @ b[k,n], seen column-major as out^T = b^T @ a^T: cuBLAS's A is b.
    const cublasOperation_t ta = s.bTransposed ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int lda = s.bTransposed ? s.k : s.n;
    float sgemm = timeMedian(
        [&] {
          const float one = 1.f, zero = 0.f;
          if (s.batch > 1)
            return cublasSgemmStridedBatched(blas, ta, CUBLAS_OP_N, s.n, s.m, s.k, &one, B, lda, (long long)s.k * s.n, A,
                                             s.k, (long long)s.m * s.k, &zero, D, s.n, (long long)s.m * s.n,
                                             s.batch) == CUBLAS_STATUS_SUCCESS;
          return cublasSgemm(blas, ta, CUBLAS_OP_N, s.n, s.m, s.k, &one, B, lda, A, s.k, &zero, D, s.n) ==
                 CUBLAS_STATUS_SUCCESS;
        },
        21);

    Lt L{lt, nullptr, nullptr, nullptr, nullptr, A, B, bias, D, ws, wsBytes};
    CK(cublasLtMatmulDescCreate(&L.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CK(cublasLtMatmulDescSetAttribute(L.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    cublasLtEpilogue_t epi = s.bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    CK(cublasLtMatmulDescSetAttribute(L.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    if (s.bias) CK(cublasLtMatmulDescSetAttribute(L.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
    auto layout = [&](cublasLtMatrixLayout_t* l, int rows, int cols, int ld, long long stride) {
      CK(cublasLtMatrixLayoutCreate(l, CUDA_R_32F, rows, cols, ld));
      if (s.batch > 1) {
        int32_t c = s.batch;
        CK(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &c, sizeof c));
        CK(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
      }
    };
    layout(&L.la, s.bTransposed ? s.k : s.n, s.bTransposed ? s.n : s.k, lda, (long long)s.k * s.n);
    layout(&L.lb, s.k, s.m, s.k, (long long)s.m * s.k);
    layout(&L.ld, s.n, s.m, s.n, (long long)s.m * s.n);

    cublasLtMatmulPreference_t pref;
    CK(cublasLtMatmulPreferenceCreate(&pref));
    CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsBytes, sizeof wsBytes));
    std::vector<cublasLtMatmulHeuristicResult_t> heur(64);
    int count = 0;
    CK(cublasLtMatmulAlgoGetHeuristic(lt, L.op, L.la, L.lb, L.ld, L.ld, pref, 64, heur.data(), &count));
    std::vector<Timed> hs;
    for (int i = 0; i < count; ++i)
      hs.push_back({timeMedian([&] { return L.run(heur[i].algo, heur[i].workspaceSize); }, 7), heur[i].algo,
                    heur[i].workspaceSize});
    const float h0 = hs.empty() ? -1.f : hs[0].us;
    auto bestOf = [](const std::vector<Timed>& v, size_t n) {
      float b = -1.f;
      for (size_t i = 0; i < std::min(n, v.size()); ++i)
        if (v[i].us > 0 && (b < 0 || v[i].us < b)) b = v[i].us;
      return b;
    };
    const float b8 = bestOf(hs, 8), b64 = bestOf(hs, 64);

    // Every configuration of every algorithm id cuBLASLt lists for fp32.
    int ids[128], nIds = 0;
    CK(cublasLtMatmulAlgoGetIds(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, 128,
                                ids, &nIds));
    std::vector<Timed> all;
    int tried = 0;
    for (int a = 0; a < nIds; ++a) {
      cublasLtMatmulAlgo_t algo;
      if (cublasLtMatmulAlgoInit(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                                 ids[a], &algo) != CUBLAS_STATUS_SUCCESS)
        continue;
      auto tiles = capArray<uint32_t>(algo, CUBLASLT_ALGO_CAP_TILE_IDS);
      auto stages = capArray<uint32_t>(algo, CUBLASLT_ALGO_CAP_STAGES_IDS);
      if (tiles.empty()) tiles = {CUBLASLT_MATMUL_TILE_UNDEFINED};
      if (stages.empty()) stages = {CUBLASLT_MATMUL_STAGES_UNDEFINED};
      const int splitk = cap<int>(algo, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT);
      const uint32_t redMask = cap<uint32_t>(algo, CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK);
      const int swz = cap<uint32_t>(algo, CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT);
      const int custom = cap<int>(algo, CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX);
      for (uint32_t tile : tiles)
        for (uint32_t stage : stages)
          for (int c = 0; c <= std::min(custom, 3); ++c)
            for (uint32_t sk : {1u, 2u, 3u, 4u, 6u, 8u, 16u}) {
              if (sk > 1 && !splitk) continue;
              for (uint32_t red : {0u, 1u, 2u, 4u}) {
                if ((sk == 1) != (red == 0)) continue;
                if (red && !(redMask & red)) continue;
                for (uint32_t sw = 0; sw <= (uint32_t)(swz ? 1 : 0); ++sw) {
                  cublasLtMatmulAlgo_t x = algo;
                  cublasLtMatmulAlgoConfigSetAttribute(&x, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile);
                  cublasLtMatmulAlgoConfigSetAttribute(&x, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stage, sizeof stage);
                  cublasLtMatmulAlgoConfigSetAttribute(&x, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &c, sizeof c);
                  cublasLtMatmulAlgoConfigSetAttribute(&x, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &sk, sizeof sk);
                  cublasLtMatmulAlgoConfigSetAttribute(&x, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &red, sizeof red);
                  cublasLtMatmulAlgoConfigSetAttribute(&x, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &sw, sizeof sw);
                  cublasLtMatmulHeuristicResult_t check;
                  if (cublasLtMatmulAlgoCheck(lt, L.op, L.la, L.lb, L.ld, L.ld, &x, &check) != CUBLAS_STATUS_SUCCESS)
                    continue;
                  if (check.workspaceSize > wsBytes || ++tried > 600) continue;
                  const float us = timeMedian([&] { return L.run(x, check.workspaceSize); }, 3);
                  if (us > 0) all.push_back({us, x, check.workspaceSize});
                }
              }
            }
    }
    std::sort(all.begin(), all.end(), [](const Timed& a, const Timed& b) { return a.us < b.us; });
    if (all.size() > 8) all.resize(8);
    for (Timed& t : all) t.us = timeMedian([&] { return L.run(t.algo, t.ws); }, 21);
    std::sort(all.begin(), all.end(), [](const Timed& a, const Timed& b) { return a.us < b.us; });
    // The reference rows again, as finalists are: the same 21 reps.
    const float h0f = hs.empty() ? -1.f : timeMedian([&] { return L.run(hs[0].algo, hs[0].ws); }, 21);
    printf("| %s | %.1f | %.1f (%.1f) | %.1f | %.1f (%d) | %.1f (%d) | %s |\n", s.task, sgemm, h0f, h0, b8, b64, count,
           all.empty() ? -1.f : all[0].us, tried, all.empty() ? "-" : describe(all[0].algo).c_str());
    fflush(stdout);
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(L.la);
    cublasLtMatrixLayoutDestroy(L.lb);
    cublasLtMatrixLayoutDestroy(L.ld);
    cublasLtMatmulDescDestroy(L.op);
    cudaFree(A);
    cudaFree(B);
    cudaFree(D);
    cudaFree(bias);
  }
  return 0;
}
