// Memory streams the roofline's bandwidth ceiling is measured with (bandwidth.py): a read-only sum
// and a copy over float4s, in a few shapes (loads in flight per thread, blocks per SM), so that the
// ceiling is the fastest stream we can write and not only PyTorch's copy and sum, which our
// generated kernels outran (a reduction at 104% of its floor, bench/results/kernelbench_2026-11-29_h200).
#include <cuda_runtime.h>
#include <stdint.h>

// Each thread keeps U independent float4 loads in flight per step. The sum is stored only when it
// equals -1, which a buffer of ones never gives: the loads stay, the write never happens.
template <int U>
__global__ void read_stream(const float4* __restrict__ p, size_t n, float* __restrict__ sink) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  for (; i + (U - 1) * stride < n; i += U * stride) {
    float4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = p[i + u * stride];
#pragma unroll
    for (int u = 0; u < U; ++u) acc += (v[u].x + v[u].y) + (v[u].z + v[u].w);
  }
  for (; i < n; i += stride) acc += p[i].x + p[i].y + p[i].z + p[i].w;
  if (acc == -1.0f) *sink = acc;
}

template <int U>
__global__ void copy_stream(const float4* __restrict__ src, float4* __restrict__ dst, size_t n) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + (U - 1) * stride < n; i += U * stride) {
    float4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = src[i + u * stride];
#pragma unroll
    for (int u = 0; u < U; ++u) dst[i + u * stride] = v[u];
  }
  for (; i < n; i += stride) dst[i] = src[i];
}

template <int U>
static void launch(int copy, int blocks, int threads, const float4* src, float4* dst, size_t n, cudaStream_t s) {
  if (copy)
    copy_stream<U><<<blocks, threads, 0, s>>>(src, dst, n);
  else
    read_stream<U><<<blocks, threads, 0, s>>>(src, n, (float*)dst);
}

// One pass over `n` float4s of `src`: read (copy 0; `dst` is the never-written sink) or copied
// into `dst` (copy 1), with `unroll` loads in flight per thread (1, 2, 4 or 8). Returns the
// launch's cudaError_t.
extern "C" int stitch_stream(int copy, int unroll, int blocks, int threads, const void* src, void* dst, size_t n,
                             void* stream) {
  const float4* in = (const float4*)src;
  float4* out = (float4*)dst;
  cudaStream_t s = (cudaStream_t)stream;
  switch (unroll) {
    case 1: launch<1>(copy, blocks, threads, in, out, n, s); break;
    case 2: launch<2>(copy, blocks, threads, in, out, n, s); break;
    case 4: launch<4>(copy, blocks, threads, in, out, n, s); break;
    case 8: launch<8>(copy, blocks, threads, in, out, n, s); break;
    default: return (int)cudaErrorInvalidValue;
  }
  return (int)cudaGetLastError();
}
