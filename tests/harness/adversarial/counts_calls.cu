// The honest fused elementwise chain (honest/elementwise_chain): counts_calls.py, its ModelNew, stops
// calling it once the correctness checks are past. tensors: x, y, out (contiguous float32).
#include "stitch_abi.h"

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

__global__ void chain_scalar(const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ out, int64_t start, int64_t n) {
  for (int64_t i = start + blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    out[i] = chain(x[i], y[i]);
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
  if (n % 4) chain_scalar<<<1, 32, 0, stream>>>(x, y, out, n4 * 4, n);
  return (int)cudaGetLastError();
}
