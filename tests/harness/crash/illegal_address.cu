// Crash candidate: writes through a bad pointer; the CUDA context is lost (cudaErrorIllegalAddress).
#include "stitch_abi.h"

__global__ void write_bad(float* p) { p[threadIdx.x] = 1.0f; }

extern "C" int stitch_forward(const StitchTensor*, int32_t, cudaStream_t stream) {
  write_bad<<<1, 32, 0, stream>>>((float*)0x10);
  cudaStreamSynchronize(stream);
  return (int)cudaGetLastError();
}
