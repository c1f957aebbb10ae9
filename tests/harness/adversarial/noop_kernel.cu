// Cheat: a kernel that launches and does nothing; the output is whatever the memory held.
#include "stitch_abi.h"

__global__ void nothing() {}

extern "C" int stitch_forward(const StitchTensor*, int32_t, cudaStream_t stream) {
  nothing<<<1, 1, 0, stream>>>();
  return (int)cudaGetLastError();
}
