// Honest fast-path candidate that computes on the host: it lets CI machines (no GPU) run the
// whole fast path — nvcc build, ctypes call, every verify check — on CPU tensors.
#include <math.h>
#include "stitch_abi.h"

extern "C" int stitch_forward(const StitchTensor* t, int32_t count, cudaStream_t) {
  if (count != 3) return (int)cudaErrorInvalidValue;
  int64_t n = 1;
  for (int d = 0; d < t[0].ndim; ++d) n *= t[0].sizes[d];
  const float* x = (const float*)t[0].data;
  const float* y = (const float*)t[1].data;
  float* out = (float*)t[2].data;
  for (int64_t i = 0; i < n; ++i) {
    float a = fmaxf(x[i] * y[i] + 0.5f, 0.0f);
    out[i] = a * (1.0f / (1.0f + expf(-x[i])));
  }
  return 0;
}
