// Launch patterns for the built-in coder's memory-bound kernel shapes, timed side by side against
// the device's copy bandwidth in one run, so the emitter's choices rest on measurements:
//   flat:    one 16-byte chunk per thread vs several per thread, all loaded before any store;
//   rows:    a block per row (block-wide combine) vs a warp per row (shuffles only);
//   columns: arg-reduction over a middle dim, one thread per output vs a split of the reduced dim.
// Each kernel is timed with CUDA events after an L2 flush (median of 50); the table gives
// microseconds and the fraction of the copy floor (bytes moved / measured copy bandwidth).
//   nvcc -O3 -arch=sm_90 -o /tmp/kp bench/kernel_patterns.cu && /tmp/kp
#include "event_timer.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>

static EventTimer* g_timer;

static float timeUs(const std::function<void()>& launch) { return g_timer->us(launch, 50); }

// ---- flat ---------------------------------------------------------------------------------
__global__ void flatOne(const float4* __restrict__ x, float4* __restrict__ y, long n4) {
  long c = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (c < n4) { float4 v = x[c]; y[c] = make_float4(fmaxf(v.x, 0.f), fmaxf(v.y, 0.f), fmaxf(v.z, 0.f), fmaxf(v.w, 0.f)); }
}
template <int IT>
__global__ void flatItems(const float4* __restrict__ x, float4* __restrict__ y, long n4) {
  const long base = blockIdx.x * (long)blockDim.x * IT + threadIdx.x;
  float4 v[IT];
#pragma unroll
  for (int i = 0; i < IT; ++i) { long c = base + (long)i * blockDim.x; if (c < n4) v[i] = x[c]; }
#pragma unroll
  for (int i = 0; i < IT; ++i) {
    long c = base + (long)i * blockDim.x;
    if (c < n4) y[c] = make_float4(fmaxf(v[i].x, 0.f), fmaxf(v[i].y, 0.f), fmaxf(v[i].z, 0.f), fmaxf(v[i].w, 0.f));
  }
}

// ---- rows (sum over the last dim) ---------------------------------------------------------
__global__ void rowBlock(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
  __shared__ float s[32];
  for (int r = blockIdx.x; r < rows; r += gridDim.x) {
    const float4* p = reinterpret_cast<const float4*>(x + (long)r * cols);
    float acc = 0.f;
    for (int c = threadIdx.x; c < cols / 4; c += blockDim.x) { float4 v = p[c]; acc += v.x + v.y + v.z + v.w; }
    for (int o = 16; o; o >>= 1) acc += __shfl_xor_sync(~0u, acc, o);
    if ((threadIdx.x & 31) == 0) s[threadIdx.x >> 5] = acc;
    __syncthreads();
    if (threadIdx.x < 32) {
      float w = threadIdx.x < blockDim.x / 32 ? s[threadIdx.x] : 0.f;
      for (int o = 16; o; o >>= 1) w += __shfl_xor_sync(~0u, w, o);
      if (threadIdx.x == 0) y[r] = w;
    }
    __syncthreads();
  }
}
template <int UNROLL>
__global__ void rowWarp(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
  const int lane = threadIdx.x & 31;
  const long r = blockIdx.x * (long)(blockDim.x / 32) + (threadIdx.x >> 5);
  if (r >= rows) return;
  const float4* p = reinterpret_cast<const float4*>(x + r * cols);
  float acc = 0.f;
  const int n4 = cols / 4;
  int c = lane;
  for (; c + 32 * (UNROLL - 1) < n4; c += 32 * UNROLL) {
    float4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) v[u] = p[c + 32 * u];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc += v[u].x + v[u].y + v[u].z + v[u].w;
  }
  for (; c < n4; c += 32) { float4 v = p[c]; acc += v.x + v.y + v.z + v.w; }
  for (int o = 16; o; o >>= 1) acc += __shfl_xor_sync(~0u, acc, o);
  if (lane == 0) y[r] = acc;
}

// ---- columns (argmin over the middle dim of [outer, R, inner]) ----------------------------
__global__ void colThread(const float* __restrict__ x, long long* __restrict__ y, int outer, int R, int inner) {
  long t = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (t >= (long)outer * inner) return;
  const int o = t / inner, i = t % inner;
  float best = __int_as_float(0x7f800000);
  long long bi = 0;
  for (int c = 0; c < R; ++c) { float v = x[((long)o * R + c) * inner + i]; if (v < best) { best = v; bi = c; } }
  y[t] = bi;
}
// Block (32 inner columns) x (SPLIT row groups): each thread walks R/SPLIT rows, then the
// groups combine through shared memory in a fixed order (lower index wins ties).
template <int SPLIT>
__global__ void colSplit(const float* __restrict__ x, long long* __restrict__ y, int outer, int R, int inner) {
  __shared__ float sv[SPLIT][32];
  __shared__ long long si[SPLIT][32];
  const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
  const long col = blockIdx.x * 32L + tx;
  const int o = col / inner, i = col % inner;
  float best = __int_as_float(0x7f800000);
  long long bi = 0;
  if (col < (long)outer * inner)
    for (int c = ty; c < R; c += SPLIT) { float v = x[((long)o * R + c) * inner + i]; if (v < best) { best = v; bi = c; } }
  sv[ty][tx] = best;
  si[ty][tx] = bi;
  __syncthreads();
  if (ty == 0 && col < (long)outer * inner) {
    for (int s = 1; s < SPLIT; ++s)
      if (sv[s][tx] < best || (sv[s][tx] == best && si[s][tx] < bi)) { best = sv[s][tx]; bi = si[s][tx]; }
    y[col] = bi;
  }
}

// ---- depthwise 3x3 convolution, pad 1, [32,256,56,56]: one thread per output, shapes as constants
constexpr int DN = 32, DC = 256, DH = 56, DW = 56;
__global__ void dwOne(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y) {
  const long lin = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (lin >= (long)DN * DC * DH * DW) return;
  const int ow = lin % DW, oh = (lin / DW) % DH;
  const long nc = lin / (DH * DW);
  const int c = nc % DC;
  const float* xp = x + nc * DH * DW;
  float s = 0.f;
#pragma unroll
  for (int kh = 0; kh < 3; ++kh)
#pragma unroll
    for (int kw = 0; kw < 3; ++kw) {
      const int ih = oh - 1 + kh, iw = ow - 1 + kw;
      if (ih < 0 || ih >= DH || iw < 0 || iw >= DW) continue;
      s += xp[ih * DW + iw] * w[c * 9 + kh * 3 + kw];
    }
  y[lin] = s;
}

int main() {
  int dev = 0;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, dev));
  EventTimer timer;
  g_timer = &timer;
  const long N = 8192L * 8192L;
  float *x, *y;
  long long* yi;
  CK(cudaMalloc(&x, N * 4));
  CK(cudaMalloc(&y, N * 4));
  CK(cudaMalloc(&yi, N * 8 / 4));
  CK(cudaMemset(x, 0, N * 4));
  const float copyUs = timeUs([&] { CK(cudaMemcpyAsync(y, x, N * 4, cudaMemcpyDeviceToDevice)); });
  const double gbps = 2.0 * N * 4 / (copyUs * 1e-6) / 1e9;
  std::printf("%s, %d SMs; copy of %ld MiB: %.1f us, %.0f GB/s\n\n", prop.name, prop.multiProcessorCount, N * 4 >> 20,
              copyUs, gbps);
  std::printf("| shape | pattern | us | floor fraction |\n|---|---|---|---|\n");
  auto row = [&](const char* shape, const char* pattern, double bytes, float us) {
    std::printf("| %s | %s | %.1f | %.0f%% |\n", shape, pattern, us, 100.0 * bytes / (gbps * 1e9) / (us * 1e-6));
  };
  const long n4 = N / 4;
  const double flatBytes = 2.0 * N * 4;
  row("relu 8192x8192", "1 chunk/thread, b256", flatBytes, timeUs([&] { flatOne<<<(n4 + 255) / 256, 256>>>((float4*)x, (float4*)y, n4); }));
  row("relu 8192x8192", "1 chunk/thread, b128", flatBytes, timeUs([&] { flatOne<<<(n4 + 127) / 128, 128>>>((float4*)x, (float4*)y, n4); }));
  row("relu 8192x8192", "2 chunks/thread, b256", flatBytes, timeUs([&] { flatItems<2><<<(n4 + 511) / 512, 256>>>((float4*)x, (float4*)y, n4); }));
  row("relu 8192x8192", "4 chunks/thread, b256", flatBytes, timeUs([&] { flatItems<4><<<(n4 + 1023) / 1024, 256>>>((float4*)x, (float4*)y, n4); }));
  row("relu 8192x8192", "4 chunks/thread, b128", flatBytes, timeUs([&] { flatItems<4><<<(n4 + 511) / 512, 128>>>((float4*)x, (float4*)y, n4); }));
  row("relu 8192x8192", "8 chunks/thread, b128", flatBytes, timeUs([&] { flatItems<8><<<(n4 + 1023) / 1024, 128>>>((float4*)x, (float4*)y, n4); }));

  for (int cols : {1024, 4096, 16384}) {
    const int rows = (int)(8192L * 4096 / cols);
    char shape[64];
    std::snprintf(shape, sizeof shape, "row sum %dx%d", rows, cols);
    const double bytes = (double)rows * cols * 4;
    row(shape, "block/row b256", bytes, timeUs([&] { rowBlock<<<rows, 256>>>(x, y, rows, cols); }));
    row(shape, "block/row b512", bytes, timeUs([&] { rowBlock<<<rows, 512>>>(x, y, rows, cols); }));
    row(shape, "warp/row unroll 1, b256", bytes, timeUs([&] { rowWarp<1><<<(rows + 7) / 8, 256>>>(x, y, rows, cols); }));
    row(shape, "warp/row unroll 4, b256", bytes, timeUs([&] { rowWarp<4><<<(rows + 7) / 8, 256>>>(x, y, rows, cols); }));
    row(shape, "warp/row unroll 8, b128", bytes, timeUs([&] { rowWarp<8><<<(rows + 3) / 4, 128>>>(x, y, rows, cols); }));
  }

  const int outer = 64, R = 1024, inner = 256;
  const double cbytes = (double)outer * R * inner * 4;
  const long outs = (long)outer * inner;
  row("argmin 64x1024x256 dim1", "thread/output", cbytes, timeUs([&] { colThread<<<(outs + 255) / 256, 256>>>(x, yi, outer, R, inner); }));
  row("argmin 64x1024x256 dim1", "split 8", cbytes, timeUs([&] { colSplit<8><<<(outs + 31) / 32, 256>>>(x, yi, outer, R, inner); }));
  row("argmin 64x1024x256 dim1", "split 16", cbytes, timeUs([&] { colSplit<16><<<(outs + 31) / 32, 512>>>(x, yi, outer, R, inner); }));
  row("argmin 64x1024x256 dim1", "split 32", cbytes, timeUs([&] { colSplit<32><<<(outs + 31) / 32, 1024>>>(x, yi, outer, R, inner); }));
  {
    const long n = (long)DN * DC * DH * DW;
    const double bytes = 2.0 * n * 4;
    float* w;
    CK(cudaMalloc(&w, DC * 9 * 4));
    CK(cudaMemset(w, 0, DC * 9 * 4));
    row("depthwise 3x3 [32,256,56,56]", "thread/output b256", bytes, timeUs([&] { dwOne<<<(n + 255) / 256, 256>>>(x, w, y); }));
    row("depthwise 3x3 [32,256,56,56]", "thread/output b128", bytes, timeUs([&] { dwOne<<<(n + 127) / 128, 128>>>(x, w, y); }));
  }
  return 0;
}
