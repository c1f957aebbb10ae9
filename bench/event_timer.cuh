// The timer of the standalone launch-shape benchmarks (kernel_patterns.cu, column_reductions.cu): a
// launch's median time in microseconds over CUDA events, each run after flushing the L2 with a
// memset of a buffer twice its size, so every run reads from DRAM as a full-size problem does.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e)); std::exit(1); } } while (0)

class EventTimer {
public:
  // The flush buffer, twice the device's L2.
  EventTimer() {
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    flushBytes_ = 2 * (size_t)prop.l2CacheSize;
    CK(cudaMalloc(&flush_, flushBytes_));
    CK(cudaEventCreate(&a_));
    CK(cudaEventCreate(&b_));
  }

  // Median of `runs` timed launches after 3 untimed ones.
  float us(const std::function<void()>& launch, int runs) {
    for (int i = 0; i < 3; ++i) launch();
    std::vector<float> t;
    for (int i = 0; i < runs; ++i) {
      CK(cudaMemsetAsync(flush_, 0, flushBytes_));
      CK(cudaEventRecord(a_));
      launch();
      CK(cudaEventRecord(b_));
      CK(cudaEventSynchronize(b_));
      float ms;
      CK(cudaEventElapsedTime(&ms, a_, b_));
      t.push_back(ms * 1e3f);
    }
    CK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }

private:
  void* flush_ = nullptr;
  size_t flushBytes_ = 0;
  cudaEvent_t a_, b_;
};
