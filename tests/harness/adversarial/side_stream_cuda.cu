// Cheat: ignores the stream it is given and launches on a stream of its own, never synchronized.
#include "stitch_abi.h"

__global__ void chain(const float* x, const float* y, float* out, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    float a = fmaxf(x[i] * y[i] + 0.5f, 0.0f);
    out[i] = a * (1.0f / (1.0f + expf(-x[i])));
  }
}

static cudaStream_t own = nullptr;

extern "C" int stitch_forward(const StitchTensor* t, int32_t, cudaStream_t) {
  if (!own) cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking);
  int64_t n = 1;
  for (int d = 0; d < t[0].ndim; ++d) n *= t[0].sizes[d];
  chain<<<1024, 256, 0, own>>>((const float*)t[0].data, (const float*)t[1].data, (float*)t[2].data, n);
  return (int)cudaGetLastError();
}
