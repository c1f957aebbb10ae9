// Column reductions (a reduction over a dim that is not the innermost, issue 32) at KernelBench's full
// size, launch shapes side by side against the copy floor, so the emitter's choice rests on a
// measurement: sum and argmax over dim 1 of [128, 4096, 4095] (level1/47 and 51) and over dim 1 of
// [16, 256, 256] (few outputs, long columns: the split over blocks matters there).
//   wW jJ sS uU: blocks of W warps along 32 W J neighbouring columns (J a thread) x S row groups, the
//                row loop unrolled U times (w1 j1 s8 u8: the generated kernel before this bench)
//   split:       the reduced dim also split over P blocks, partials combined by a second kernel
// Each kernel is timed with CUDA events after an L2 flush (median of 30); the table gives microseconds
// and the fraction of the copy floor (bytes moved / measured copy bandwidth).
//   nvcc -O3 -arch=sm_90 -o /tmp/cr bench/column_reductions.cu && /tmp/cr
#include "event_timer.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

static EventTimer* g_timer;

static float timeUs(const std::function<void()>& launch) { return g_timer->us(launch, 30); }

struct Sum {
  float v = 0.0f;
  long long i = 0;
  __device__ void begin(long long) {}
  __device__ void add(float x, long long) { v += x; }
  __device__ void merge(const Sum& o) { v += o.v; }
};
struct Argmax {
  float v = -INFINITY;
  long long i = 0x7fffffffffffffffLL;
  __device__ static bool better(float a, long long ia, float b, long long ib) {
    if (a != a) return b == b || ia < ib;
    if (b != b) return false;
    if (a == b) return ia < ib;
    return a > b;
  }
  __device__ void begin(long long) {}
  __device__ void add(float x, long long c) { if (better(x, c, v, i)) { v = x; i = c; } }
  __device__ void merge(const Argmax& o) { add(o.v, o.i); }
};
// A thread's rows arrive in index order, so a step needs no index comparison: a tie keeps the
// earlier, a NaN replaces a number, never an earlier NaN. Seeded with the thread's first index so
// that a run of -inf keeps it (the emitter's ArgOp::step).
struct ArgmaxInOrder : Argmax {
  __device__ void begin(long long first) { i = first; }
  __device__ void add(float x, long long c) {
    const bool take = x > v || (x != x && v == v);
    v = take ? x : v;
    i = take ? c : i;
  }
  __device__ void merge(const ArgmaxInOrder& o) { Argmax::add(o.v, o.i); }
};

// Uniform [0, 1) values from the element's index, so an argmax takes a new maximum now and then
// as it would on torch.rand's inputs.
__global__ void fillKernel(float* __restrict__ x, long long n) {
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < n; k += gridDim.x * (long long)blockDim.x) {
    unsigned h = (unsigned)k * 2654435761u ^ (unsigned)(k >> 32) * 40503u;
    h ^= h >> 15; h *= 2246822519u; h ^= h >> 13;
    x[k] = (h >> 8) * (1.0f / 16777216.0f);
  }
}

// A block of W warps along the columns x S row groups; each thread takes J columns (tx, tx + 32W, ...),
// so a block covers C = 32 W J neighbouring columns and each of its rows is read as C * 4 contiguous
// bytes. P > 1: blockIdx.y is the part of the reduced dim, partials to `part` [P][cols].
template <typename Acc, int W, int J, int S, int U>
__global__ void __launch_bounds__(32 * W * S) colKernel(const float* __restrict__ x, Acc* __restrict__ part, float* __restrict__ y,
                                                        long long* __restrict__ yi, long long cols, long long R, long long inner, int P) {
  constexpr int T = 32 * W, C = T * J;
  __shared__ Acc sh[S][C];
  const int tx = threadIdx.x % T, ty = threadIdx.x / T;
  const long long per = (R + P - 1) / P, r0 = blockIdx.y * per, r1 = min(R, r0 + per);
  for (long long t0 = blockIdx.x * (long long)C; t0 < cols; t0 += gridDim.x * (long long)C) {
    Acc acc[J];
    const float* p[J];
    for (int j = 0; j < J; ++j) {
      const long long t = min(t0 + tx + T * j, cols - 1), o = t / inner, i = t % inner;
      p[j] = x + (o * R) * inner + i;
      acc[j].begin(r0 + ty);
    }
#pragma unroll U
    for (long long c = r0 + ty; c < r1; c += S) {
      float v[J];
#pragma unroll
      for (int j = 0; j < J; ++j) v[j] = p[j][c * inner];
#pragma unroll
      for (int j = 0; j < J; ++j) acc[j].add(v[j], c);
    }
    for (int j = 0; j < J; ++j) sh[ty][tx + T * j] = acc[j];
    __syncthreads();
    if (ty == 0)
      for (int j = 0; j < J; ++j) {
        Acc a = sh[0][tx + T * j];
        for (int g = 1; g < S; ++g) a.merge(sh[g][tx + T * j]);
        const long long t = t0 + tx + T * j;
        if (t < cols) {
          if (P > 1) part[blockIdx.y * cols + t] = a;
          else if (yi) yi[t] = a.i;
          else y[t] = a.v;
        }
      }
    __syncthreads();
  }
}

template <typename Acc>
__global__ void combineParts(const Acc* __restrict__ part, float* __restrict__ y, long long* __restrict__ yi, long long cols, int P) {
  const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t >= cols) return;
  Acc a = part[t];
  for (int q = 1; q < P; ++q) a.merge(part[q * cols + t]);
  if (yi) yi[t] = a.i;
  else y[t] = a.v;
}

__global__ void copyKernel(const float4* __restrict__ x, float4* __restrict__ y, long long n4) {
  for (long long c = blockIdx.x * (long long)blockDim.x + threadIdx.x; c < n4; c += gridDim.x * (long long)blockDim.x) y[c] = x[c];
}

struct Shape { long long outer, R, inner; };

template <typename Acc, int W, int J, int S, int U>
static float run(const Shape& s, const float* x, float* y, long long* yi, Acc* part, int P, int most) {
  constexpr int C = 32 * W * J;
  const long long cols = s.outer * s.inner;
  const long long blocks = std::min<long long>((cols + C - 1) / C, most);
  dim3 grid((unsigned)blocks, P);
  return timeUs([&] {
    colKernel<Acc, W, J, S, U><<<grid, 32 * W * S>>>(x, part, y, yi, cols, s.R, s.inner, P);
    if (P > 1) combineParts<Acc><<<(unsigned)((cols + 255) / 256), 256>>>(part, y, yi, cols, P);
  });
}

int main() {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  EventTimer timer;
  g_timer = &timer;
  const long long n = 128LL * 4096 * 4095;
  float *x, *y, *cx, *cy;
  long long* yi;
  void* part;
  CK(cudaMalloc(&x, n * 4));
  CK(cudaMalloc(&y, 4LL << 20));
  CK(cudaMalloc(&yi, 8LL << 20));
  CK(cudaMalloc(&part, 64LL << 20));
  fillKernel<<<sms * 8, 512>>>(x, n);
  const long long cn = 1LL << 28;
  CK(cudaMalloc(&cx, cn * 4));
  CK(cudaMalloc(&cy, cn * 4));
  const float copyUs = timeUs([&] { copyKernel<<<sms * 8, 512>>>((const float4*)cx, (float4*)cy, cn / 4); });
  const double bw = 2.0 * cn * 4 / (copyUs * 1e-6);
  std::printf("copy of %lld MB: %.1f us, %.0f GB/s (the floor's bandwidth)\n\n", cn * 4 >> 20, copyUs, bw / 1e9);
  std::printf("| shape | op | kernel | us | %% of copy floor |\n|---|---|---|---|---|\n");
  const Shape shapes[] = {{128, 4096, 4095}, {16, 256, 65536}, {16, 4096, 256}};
  for (const Shape& s : shapes) {
    const long long cols = s.outer * s.inner;
    const double sumBytes = 4.0 * (s.outer * s.R * s.inner + cols), argBytes = 4.0 * s.outer * s.R * s.inner + 8.0 * cols;
    char shape[64];
    std::snprintf(shape, sizeof shape, "[%lld,%lld,%lld] dim 1", s.outer, s.R, s.inner);
    auto row = [&](const char* op, const char* name, double bytes, float us) {
      std::printf("| %s | %s | %s | %.1f | %.0f%% |\n", shape, op, name, us, 100.0 * bytes / bw / (us * 1e-6));
    };
    const int most = 1 << 30;
    // name: W warps along columns x J columns a thread x S row groups, unroll U
    row("sum", "w1 j1 s8 u8", sumBytes, run<Sum, 1, 1, 8, 8>(s, x, y, nullptr, (Sum*)part, 1, most));
    row("sum", "w1 j4 s8 u2", sumBytes, run<Sum, 1, 4, 8, 2>(s, x, y, nullptr, (Sum*)part, 1, most));
    row("sum", "w1 j2 s8 u4", sumBytes, run<Sum, 1, 2, 8, 4>(s, x, y, nullptr, (Sum*)part, 1, most));
    row("sum", "w4 j1 s2 u8", sumBytes, run<Sum, 4, 1, 2, 8>(s, x, y, nullptr, (Sum*)part, 1, most));
    row("sum", "w4 j1 s4 u8", sumBytes, run<Sum, 4, 1, 4, 8>(s, x, y, nullptr, (Sum*)part, 1, most));
    row("sum", "w2 j1 s4 u8", sumBytes, run<Sum, 2, 1, 4, 8>(s, x, y, nullptr, (Sum*)part, 1, most));
    row("sum", "w8 j1 s1 u8", sumBytes, run<Sum, 8, 1, 1, 8>(s, x, y, nullptr, (Sum*)part, 1, most));
    row("sum", "w2 j2 s4 u4", sumBytes, run<Sum, 2, 2, 4, 4>(s, x, y, nullptr, (Sum*)part, 1, most));
    row("argmax", "w1 j1 s8 u8", argBytes, run<Argmax, 1, 1, 8, 8>(s, x, nullptr, yi, (Argmax*)part, 1, most));
    row("argmax", "w1 j4 s8 u2", argBytes, run<Argmax, 1, 4, 8, 2>(s, x, nullptr, yi, (Argmax*)part, 1, most));
    row("argmax", "w4 j1 s2 u8", argBytes, run<Argmax, 4, 1, 2, 8>(s, x, nullptr, yi, (Argmax*)part, 1, most));
    row("argmax", "w4 j1 s4 u8", argBytes, run<Argmax, 4, 1, 4, 8>(s, x, nullptr, yi, (Argmax*)part, 1, most));
    row("argmax", "w2 j2 s4 u4", argBytes, run<Argmax, 2, 2, 4, 4>(s, x, nullptr, yi, (Argmax*)part, 1, most));
    {  // the in-order step picks the same indices as the full comparison
      std::vector<long long> a(cols), b(cols);
      run<Argmax, 1, 1, 8, 8>(s, x, nullptr, yi, (Argmax*)part, 1, most);
      CK(cudaMemcpy(a.data(), yi, cols * 8, cudaMemcpyDeviceToHost));
      run<ArgmaxInOrder, 1, 4, 8, 2>(s, x, nullptr, yi, (ArgmaxInOrder*)part, 1, most);
      CK(cudaMemcpy(b.data(), yi, cols * 8, cudaMemcpyDeviceToHost));
      if (a != b) std::printf("| %s | argmax in order | DIFFERENT INDICES | | |\n", shape);
    }
    row("argmax in order", "w1 j1 s8 u8", argBytes, run<ArgmaxInOrder, 1, 1, 8, 8>(s, x, nullptr, yi, (ArgmaxInOrder*)part, 1, most));
    row("argmax in order", "w1 j2 s8 u4", argBytes, run<ArgmaxInOrder, 1, 2, 8, 4>(s, x, nullptr, yi, (ArgmaxInOrder*)part, 1, most));
    row("argmax in order", "w1 j4 s8 u2", argBytes, run<ArgmaxInOrder, 1, 4, 8, 2>(s, x, nullptr, yi, (ArgmaxInOrder*)part, 1, most));
    row("argmax in order", "w4 j1 s4 u8", argBytes, run<ArgmaxInOrder, 4, 1, 4, 8>(s, x, nullptr, yi, (ArgmaxInOrder*)part, 1, most));
    // Few columns: the reduced dim split over P blocks so that about 8 blocks per SM run.
    const long long colBlocks = (cols + 31) / 32;
    const int P = (int)std::max<long long>(1, std::min<long long>(s.R / 64, (sms * 8 + colBlocks - 1) / colBlocks));
    if (P > 1) {
      row("sum", "w1 j1 s8 u8 split", sumBytes, run<Sum, 1, 1, 8, 8>(s, x, y, nullptr, (Sum*)part, P, most));
      row("argmax", "w1 j1 s8 u8 split", argBytes, run<Argmax, 1, 1, 8, 8>(s, x, nullptr, yi, (Argmax*)part, P, most));
      row("argmax", "w1 j1 s16 u8 split", argBytes, run<Argmax, 1, 1, 16, 8>(s, x, nullptr, yi, (Argmax*)part, P, most));
      row("argmax in order", "w1 j1 s8 u8 split", argBytes, run<ArgmaxInOrder, 1, 1, 8, 8>(s, x, nullptr, yi, (ArgmaxInOrder*)part, P, most));
    }
  }
  return 0;
}
