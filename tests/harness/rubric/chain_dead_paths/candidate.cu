// The fused elementwise chain with code its forward never runs on the task's shape, for the rubric's
// measured-evidence tests: the float4 kernel chain_vec4 is the honest candidate's
// (tests/harness/honest/elementwise_chain), launched the same way; the tail of a size that is not a
// multiple of 4 goes through a shared-memory staged kernel, and an earlier draft's FP64 tensor-core
// GEMM is left in the file, never launched. Read from the code it has shared memory, tiling and
// tensor cores; Nsight Compute sees only chain_vec4. tensors: x, y, out (contiguous float32).
#include "stitch_abi.h"

#include <mma.h>

__device__ __forceinline__ float chain(float x, float y) {
  float a = fmaxf(x * y + 0.5f, 0.0f);
  return a * (1.0f / (1.0f + expf(-x)));
}

__global__ void chain_vec4(const float4* __restrict__ x, const float4* __restrict__ y, float4* __restrict__ out, int64_t n4) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n4; i += (int64_t)gridDim.x * blockDim.x) {
    float4 a = x[i], b = y[i];
    out[i] = make_float4(chain(a.x, b.x), chain(a.y, b.y), chain(a.z, b.z), chain(a.w, b.w));
  }
}

// The last n % 4 elements, staged through shared memory (one block of 32 threads).
__global__ void chain_tail_staged(const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ out,
                                  int64_t start, int64_t n) {
  __shared__ float xs[32], ys[32];
  const int64_t i = start + threadIdx.x;
  xs[threadIdx.x] = i < n ? x[i] : 0.0f;
  ys[threadIdx.x] = i < n ? y[i] : 0.0f;
  __syncthreads();
  if (i < n) out[i] = chain(xs[threadIdx.x], ys[threadIdx.x]);
}

// An earlier draft's FP64 tensor-core GEMM (one 8x8 tile per warp): never launched.
__global__ void gemm_f64_draft(const double* __restrict__ a, const double* __restrict__ b, double* __restrict__ c, int n) {
  using namespace nvcuda;
  wmma::fragment<wmma::matrix_a, 8, 8, 4, double, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 8, 8, 4, double, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 8, 8, 4, double> fc;
  wmma::fill_fragment(fc, 0.0);
  const int row = blockIdx.y * 8, col = blockIdx.x * 8;
  for (int k = 0; k < n; k += 4) {
    wmma::load_matrix_sync(fa, a + row * n + k, n);
    wmma::load_matrix_sync(fb, b + col * n + k, n);
    wmma::mma_sync(fc, fa, fb, fc);
  }
  wmma::store_matrix_sync(c + row * n + col, fc, n, wmma::mem_row_major);
}

extern "C" int stitch_forward(const StitchTensor* t, int32_t count, cudaStream_t stream) {
  if (count != 3) return (int)cudaErrorInvalidValue;
  int64_t n = 1;
  for (int d = 0; d < t[0].ndim; ++d) n *= t[0].sizes[d];
  const float* x = (const float*)t[0].data;
  const float* y = (const float*)t[1].data;
  float* out = (float*)t[2].data;
  int64_t n4 = n / 4;
  if (n4 > 0) {
    int blocks = (int)((n4 + 255) / 256 < 65535 ? (n4 + 255) / 256 : 65535);
    chain_vec4<<<blocks, 256, 0, stream>>>((const float4*)x, (const float4*)y, (float4*)out, n4);
  }
  if (n % 4) chain_tail_staged<<<1, 32, 0, stream>>>(x, y, out, n4 * 4, n);
  return (int)cudaGetLastError();
}
