// Just enough of the CUDA runtime for a generated candidate to compile as plain C++ and run its
// elementwise kernels on the CPU (generated_on_cpu.py): a launch runs the kernel for every thread
// of its grid in turn, which is exact for kernels whose threads never wait for one another (no
// shared memory, barriers or shuffles: those abort, and the script runs no candidate that has
// them). CUDA graphs are never made, so a segment runs its launchers directly.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)

struct alignas(16) float4 {
  float x, y, z, w;
};
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
};
inline dim3 threadIdx, blockIdx, blockDim, gridDim;

using std::max;
using std::min;

inline float __int_as_float(unsigned v) {
  float f;
  std::memcpy(&f, &v, sizeof f);
  return f;
}
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }

[[noreturn]] inline void sc_cpu_unsupported(const char* what) {
  std::fprintf(stderr, "%s cannot run on the CPU emulation\n", what);
  std::abort();
}
template <typename T>
T __shfl_xor_sync(unsigned, T, int) { sc_cpu_unsupported("__shfl_xor_sync"); }
template <typename T>
T __shfl_up_sync(unsigned, T, int) { sc_cpu_unsupported("__shfl_up_sync"); }
template <typename T>
T __shfl_sync(unsigned, T, int) { sc_cpu_unsupported("__shfl_sync"); }
template <typename T>
T __ldcg(const T*) { sc_cpu_unsupported("__ldcg"); }
template <typename T>
T atomicAdd(T*, T) { sc_cpu_unsupported("atomicAdd"); }
inline void __syncthreads() { sc_cpu_unsupported("__syncthreads"); }
inline void __syncwarp(unsigned = 0xffffffffu) { sc_cpu_unsupported("__syncwarp"); }
inline void __threadfence() { sc_cpu_unsupported("__threadfence"); }

// Every thread of the grid in turn, block by block.
template <typename Kernel, typename... Args>
void sc_cpu_launch(Kernel kernel, long long grid, long long block, Args... args) {
  gridDim.x = static_cast<unsigned>(grid);
  blockDim.x = static_cast<unsigned>(block);
  for (long long b = 0; b < grid; ++b)
    for (long long t = 0; t < block; ++t) {
      blockIdx.x = static_cast<unsigned>(b);
      threadIdx.x = static_cast<unsigned>(t);
      kernel(args...);
    }
}

typedef int cudaError_t;
enum : int { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorNotSupported = 801 };
typedef void* cudaStream_t;
typedef void* cudaGraph_t;
typedef void* cudaGraphExec_t;
enum { cudaStreamNonBlocking = 1 };
enum cudaStreamCaptureMode { cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeRelaxed };

inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned) {
  *s = nullptr;
  return cudaSuccess;
}
inline cudaError_t cudaStreamBeginCapture(cudaStream_t, cudaStreamCaptureMode) { return cudaErrorNotSupported; }
inline cudaError_t cudaStreamEndCapture(cudaStream_t, cudaGraph_t*) { return cudaErrorNotSupported; }
inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t*, cudaGraph_t, unsigned long long) { return cudaErrorNotSupported; }
inline cudaError_t cudaGraphLaunch(cudaGraphExec_t, cudaStream_t) { return cudaErrorNotSupported; }
inline cudaError_t cudaGraphDestroy(cudaGraph_t) { return cudaSuccess; }
inline cudaError_t cudaGraphExecDestroy(cudaGraphExec_t) { return cudaSuccess; }
