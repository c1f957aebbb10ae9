// Honest GEMM kernel; the cheat of this candidate is the TF32 flag in tf32_flag.py.
#include "stitch_abi.h"

#define TILE 16

__global__ void linear_relu(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
                            float* __restrict__ out, int M, int N, int K) {
  __shared__ float xs[TILE][TILE + 1];
  __shared__ float ws[TILE][TILE + 1];
  int row = blockIdx.y * TILE + threadIdx.y;  // m
  int col = blockIdx.x * TILE + threadIdx.x;  // n
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    int kx = k0 + threadIdx.x, kw = k0 + threadIdx.y;
    xs[threadIdx.y][threadIdx.x] = (row < M && kx < K) ? x[(int64_t)row * K + kx] : 0.0f;
    int wn = blockIdx.x * TILE + threadIdx.x;
    ws[threadIdx.y][threadIdx.x] = (wn < N && kw < K) ? w[(int64_t)wn * K + kw] : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc = fmaf(xs[threadIdx.y][k], ws[k][threadIdx.x], acc);
    __syncthreads();
  }
  if (row < M && col < N) out[(int64_t)row * N + col] = fmaxf(acc + b[col], 0.0f);
}

extern "C" int stitch_forward(const StitchTensor* t, int32_t count, cudaStream_t stream) {
  if (count != 4) return (int)cudaErrorInvalidValue;
  int M = (int)t[0].sizes[0], K = (int)t[0].sizes[1], N = (int)t[1].sizes[0];
  dim3 block(TILE, TILE), grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
  linear_relu<<<grid, block, 0, stream>>>((const float*)t[0].data, (const float*)t[1].data, (const float*)t[2].data,
                                           (float*)t[3].data, M, N, K);
  return (int)cudaGetLastError();
}
