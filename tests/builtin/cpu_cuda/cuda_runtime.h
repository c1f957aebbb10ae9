// Just enough of the CUDA runtime for a generated candidate to compile as plain C++ and run its
// kernels on the CPU (generated_on_cpu.py). A launch runs the threads of each block as fibers on
// one CPU thread: a thread runs until it waits at a barrier (__syncthreads, __syncwarp) or a
// warp shuffle, and the waiting threads go on together once every live thread of the block (of
// the warp) waits there, so block reductions, shuffles and shared memory behave as on the GPU.
// Blocks run one after another, which is one order the GPU may choose (the last-block combines
// of split rows and their atomic counters see it). A block 0 that never waits marks a kernel
// whose threads never wait: its other blocks run each thread as a plain call, much faster; a
// thread that waits there aborts. CUDA graphs are never made, so a segment runs its launchers
// directly.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

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
// The GPU's fast division is within 2 ulp of the quotient; the exact one stands in for it.
inline float __fdividef(float x, float y) { return x / y; }
// The GPU's __expf is within 2 + 1.17|x| ulp of e^x; the exact one stands in for it.
inline float __expf(float x) { return std::exp(x); }

[[noreturn]] inline void sc_cpu_abort(const char* what) {
  std::fprintf(stderr, "%s\n", what);
  std::abort();
}

// A fiber's stack pointer is saved by sc_cpu_switch (callee-saved registers pushed on the stack
// being left, popped from the one entered): no signal mask is saved, unlike swapcontext, whose
// system calls would dominate a reduction's many waits.
#if !defined(__x86_64__)
#error "the CPU emulation switches fibers with x86-64 code"
#endif
extern "C" void sc_cpu_switch(void** from, void* to);
asm(R"(
  .text
  .globl sc_cpu_switch
  .hidden sc_cpu_switch
  .type sc_cpu_switch, @function
sc_cpu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size sc_cpu_switch, .-sc_cpu_switch
)");

namespace sc_cpu {
enum class Wait { None, Warp, Block };
struct Fiber {
  void* sp = nullptr;
  Wait wait = Wait::None;
  bool done = false;
};
constexpr std::size_t kStack = 64 * 1024;
inline std::vector<Fiber> fibers;
inline std::vector<char> stacks;
inline void* scheduler = nullptr;
inline int current = -1;        // the fiber running, or -1: threads are plain calls
inline bool waited = false;     // some thread of the launch waited
inline std::function<void()> body;
alignas(8) inline unsigned char exchange[32][32][8];  // a shuffle's value per warp and lane

[[noreturn]] inline void entry() {
  body();
  fibers[current].done = true;
  sc_cpu_switch(&fibers[current].sp, scheduler);
  sc_cpu_abort("a finished CPU fiber was resumed");
}

inline void wait(Wait w) {
  if (current < 0) sc_cpu_abort("a thread waits (barrier or shuffle) in a kernel whose block 0 never did");
  waited = true;
  fibers[current].wait = w;
  sc_cpu_switch(&fibers[current].sp, scheduler);
}

// Runs the block's `n` threads as fibers until every one has returned.
inline void runBlock(int n) {
  fibers.assign(n, Fiber{});
  stacks.resize(static_cast<std::size_t>(n) * kStack);
  for (int t = 0; t < n; ++t) {
    // The first switch pops six registers and returns into entry() as if it had been called.
    auto top = reinterpret_cast<std::uintptr_t>(stacks.data() + (t + 1) * kStack) & ~std::uintptr_t{15};
    void** sp = reinterpret_cast<void**>(top - 16);
    *sp = reinterpret_cast<void*>(&entry);
    for (int r = 0; r < 6; ++r) *--sp = nullptr;
    fibers[t].sp = sp;
  }
  for (;;) {
    for (int t = 0; t < n; ++t) {
      if (fibers[t].done || fibers[t].wait != Wait::None) continue;
      current = t;
      threadIdx.x = static_cast<unsigned>(t);
      sc_cpu_switch(&scheduler, fibers[t].sp);
    }
    current = -1;
    bool live = false, released = false, allAtBlock = true;
    for (int w = 0; w * 32 < n; ++w) {
      bool all = true, any = false;
      for (int t = w * 32; t < std::min(n, w * 32 + 32); ++t) {
        if (fibers[t].done) continue;
        live = any = true;
        all = all && fibers[t].wait == Wait::Warp;
        allAtBlock = allAtBlock && fibers[t].wait == Wait::Block;
      }
      if (any && all) {
        for (int t = w * 32; t < std::min(n, w * 32 + 32); ++t) fibers[t].wait = Wait::None;
        released = true;
      }
    }
    if (!live) return;
    if (released) continue;
    if (!allAtBlock) sc_cpu_abort("the threads of a block wait at different barriers (a deadlock on the GPU)");
    for (auto& f : fibers) f.wait = Wait::None;
  }
}

template <typename T>
T shuffle(T v, int from) {
  static_assert(sizeof(T) <= 8, "a shuffle moves at most 8 bytes");
  const int warp = current >> 5, lane = current & 31;
  std::memcpy(exchange[warp][lane], &v, sizeof v);
  wait(Wait::Warp);
  T r;
  std::memcpy(&r, exchange[warp][from & 31], sizeof r);
  wait(Wait::Warp);  // no lane overwrites its value before every lane has read
  return r;
}
}  // namespace sc_cpu

template <typename T>
T __shfl_xor_sync(unsigned, T v, int mask) { return sc_cpu::shuffle(v, (sc_cpu::current & 31) ^ mask); }
template <typename T>
T __shfl_up_sync(unsigned, T v, int delta) {
  const int lane = sc_cpu::current & 31;
  return sc_cpu::shuffle(v, lane >= delta ? lane - delta : lane);
}
template <typename T>
T __shfl_sync(unsigned, T v, int src) { return sc_cpu::shuffle(v, src); }
template <typename T>
T __ldcg(const T* p) { return *p; }
template <typename T>
T atomicAdd(T* p, T v) {  // one thread runs at a time
  const T old = *p;
  *p = old + v;
  return old;
}
inline void __syncthreads() { sc_cpu::wait(sc_cpu::Wait::Block); }
inline void __syncwarp(unsigned = 0xffffffffu) { sc_cpu::wait(sc_cpu::Wait::Warp); }
inline void __threadfence() {}

// Block by block: block 0 as fibers; the others too where a thread of block 0 waited, else
// each thread as a plain call.
template <typename Kernel, typename... Args>
void sc_cpu_launch(Kernel kernel, long long grid, long long block, Args... args) {
  if (block > 1024) sc_cpu_abort("a block of more than 1024 threads");
  gridDim.x = static_cast<unsigned>(grid);
  blockDim.x = static_cast<unsigned>(block);
  sc_cpu::body = [&] { kernel(args...); };
  sc_cpu::waited = false;
  for (long long b = 0; b < grid; ++b) {
    blockIdx.x = static_cast<unsigned>(b);
    if (b == 0 || sc_cpu::waited) {
      sc_cpu::runBlock(static_cast<int>(block));
      continue;
    }
    for (long long t = 0; t < block; ++t) {
      threadIdx.x = static_cast<unsigned>(t);
      kernel(args...);
    }
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
