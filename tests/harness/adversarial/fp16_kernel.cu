// Cheat: computes in half precision when fp32 was asked.
#include <cuda_fp16.h>
#include "stitch_abi.h"

__global__ void chain_half(const float* x, const float* y, float* out, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    __half a = __float2half(x[i]), b = __float2half(y[i]);
    float v = fmaxf(__half2float(__hmul(a, b)) + 0.5f, 0.0f);
    out[i] = v * __half2float(__float2half(1.0f / (1.0f + expf(-x[i]))));
  }
}

extern "C" int stitch_forward(const StitchTensor* t, int32_t, cudaStream_t stream) {
  int64_t n = 1;
  for (int d = 0; d < t[0].ndim; ++d) n *= t[0].sizes[d];
  chain_half<<<1024, 256, 0, stream>>>((const float*)t[0].data, (const float*)t[1].data, (float*)t[2].data, n);
  return (int)cudaGetLastError();
}
