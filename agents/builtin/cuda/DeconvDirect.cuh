// The direct transposed convolution kernel (directDeconvTile in LibraryCall.h), only in programs
// that have one.
#pragma once
#include "ConvDirect.cuh"
// stitch-embed: a generated program holds what follows this line (README.md).

// A direct transposed convolution, gathered: each output sums the inputs whose window covers it,
// for the transposed convolutions cuDNN's fp32 backward-data algorithms ran at about 11 TFLOP/s
// on an H100 (83: a 4x4, stride-2 upsampling, 393 µs). An output at (oy, ox) is reached only by
// the taps ky = (oy + pad) mod S + S*a, so a block takes the outputs of one phase (oy mod SY,
// ox mod SX): all its threads use the same taps, with no divergence and none of the S*S-fold
// wasted tests of a scatter, and it stages just those taps of its COT output channels' weights in
// shared memory as [ci][a][b][COT]. A thread computes one output position for the COT channels.
// 1-D (a unit height) and 2-D, contiguous, dilation 1, any padding and groups. The
// block's work is split into host-callable steps so the CPU tests can run them thread by thread.
struct sc_deconv_block {
  int n, g, tile;    // image, group, channel tile
  int ry, rx;        // the phase's first taps: (py + pad) mod S
  int ny, nx;        // how many taps of the window reach this phase
  int py, px, first; // the phase and the block's first position within it
};

// Output positions of a stride phase, at most (every SY-th row, every SX-th column).
template <int SY, int SX>
__host__ __device__ inline int sc_deconv_per_phase(const sc_conv_shape& s) {
  return ((s.out[2] + SY - 1) / SY) * ((s.out[3] + SX - 1) / SX);
}

// Weights a block stages: each input channel's taps of one phase, for COT output channels.
template <int COT, int KH, int KW, int SY, int SX>
__host__ __device__ inline int sc_deconv_staged(const sc_conv_shape& s) {
  return s.in[1] / s.groups * ((KH + SY - 1) / SY) * ((KW + SX - 1) / SX) * COT;
}

// The grid: images x groups x channel tiles, then phases x 128-position chunks of a phase.
template <int COT, int SY, int SX>
__host__ __device__ inline dim3 sc_deconv_grid(const sc_conv_shape& s) {
  const int tiles = (s.out[1] / s.groups + COT - 1) / COT;
  const int chunks = (sc_deconv_per_phase<SY, SX>(s) + 127) / 128;
  return dim3((unsigned)(s.in[0] * s.groups * tiles), (unsigned)(SY * SX * chunks));
}

template <int COT, int KH, int KW, int SY, int SX>
__host__ __device__ inline sc_deconv_block sc_deconv_block_of(int bx, int by, const sc_conv_shape& s) {
  const int cout = s.out[1] / s.groups, tiles = (cout + COT - 1) / COT;
  const int chunks = (sc_deconv_per_phase<SY, SX>(s) + 127) / 128;
  sc_deconv_block b;
  b.tile = bx % tiles;
  bx /= tiles;
  b.g = bx % s.groups;
  b.n = bx / s.groups;
  const int phase = by / chunks;
  b.first = (by % chunks) * 128;
  b.py = phase / SX;
  b.px = phase % SX;
  b.ry = (b.py + s.pad[0]) % SY;
  b.rx = (b.px + s.pad[1]) % SX;
  b.ny = b.ry < KH ? (KH - b.ry + SY - 1) / SY : 0;
  b.nx = b.rx < KW ? (KW - b.rx + SX - 1) / SX : 0;
  return b;
}

// Staged weight `i` of the block, [ci][a][b][COT] (zero past the window or the channels).
template <int COT, int KH, int KW, int SY, int SX>
__host__ __device__ inline float sc_deconv_weight(const float* __restrict__ w, const sc_deconv_block& b,
                                                  const sc_conv_shape& s, int i) {
  constexpr int MY = (KH + SY - 1) / SY, MX = (KW + SX - 1) / SX;
  const int cin = s.in[1] / s.groups, cout = s.out[1] / s.groups;
  const int t = i % COT;
  int r = i / COT;
  const int bb = r % MX;
  r /= MX;
  const int a = r % MY, ci = r / MY, co = b.tile * COT + t;
  if (a >= b.ny || bb >= b.nx || co >= cout) return 0.0f;
  const int ky = b.ry + a * SY, kx = b.rx + bb * SX;
  return w[((int64_t)(b.g * cin + ci) * cout + co) * (KH * KW) + ky * KW + kx];
}

// The output position `thread` of the block, all COT channels, from the staged weights `ws`.
template <int COT, int KH, int KW, int SY, int SX>
__host__ __device__ inline void sc_deconv_output(const float* __restrict__ x, const float* ws, float* __restrict__ y,
                                                 const sc_deconv_block& b, const sc_conv_shape& s, int thread) {
  constexpr int MY = (KH + SY - 1) / SY, MX = (KW + SX - 1) / SX;
  const int H = s.in[2], W = s.in[3], OH = s.out[2], OW = s.out[3];
  const int cin = s.in[1] / s.groups, cout = s.out[1] / s.groups;
  const int PW = (OW + SX - 1) / SX, q = b.first + thread;
  const int oy = b.py + q / PW * SY, ox = b.px + q % PW * SX;
  if (q >= sc_deconv_per_phase<SY, SX>(s) || oy >= OH || ox >= OW) return;
  // Tap (ry + SY*a) of this output reads input row iy0 - a (exact: oy + pad - ry is a multiple of SY).
  const int iy0 = (oy + s.pad[0] - b.ry) / SY, ix0 = (ox + s.pad[1] - b.rx) / SX;
  float acc[COT];
#pragma unroll
  for (int t = 0; t < COT; ++t) acc[t] = 0.0f;
  const float* xg = x + ((int64_t)b.n * s.in[1] + (int64_t)b.g * cin) * H * W;
  for (int ci = 0; ci < cin; ++ci) {
    const float* xc = xg + (int64_t)ci * H * W;
    const float* wc = ws + ci * MY * MX * COT;
#pragma unroll
    for (int a = 0; a < MY; ++a) {
      const int iy = iy0 - a;
      if (a >= b.ny || iy < 0 || iy >= H) continue;
#pragma unroll
      for (int bb = 0; bb < MX; ++bb) {
        const int ix = ix0 - bb;
        if (bb >= b.nx || ix < 0 || ix >= W) continue;
        sc_fma_tile<COT>(acc, xc[iy * W + ix], wc + (a * MX + bb) * COT);
      }
    }
  }
  float* yo = y + ((int64_t)b.n * s.out[1] + b.g * cout + b.tile * COT) * OH * OW + (int64_t)oy * OW + ox;
#pragma unroll
  for (int t = 0; t < COT; ++t)
    if (b.tile * COT + t < cout) yo[(int64_t)t * OH * OW] = acc[t];
}

template <int COT, int KH, int KW, int SY, int SX>
__global__ void __launch_bounds__(128) sc_direct_deconv(const float* __restrict__ x, const float* __restrict__ w,
                                                         float* __restrict__ y, sc_conv_shape s) {
  extern __shared__ float4 sc_deconv_smem[];
  float* ws = reinterpret_cast<float*>(sc_deconv_smem);
  const sc_deconv_block b = sc_deconv_block_of<COT, KH, KW, SY, SX>(blockIdx.x, blockIdx.y, s);
  const int staged = sc_deconv_staged<COT, KH, KW, SY, SX>(s);
  for (int i = threadIdx.x; i < staged; i += blockDim.x) ws[i] = sc_deconv_weight<COT, KH, KW, SY, SX>(w, b, s, i);
  __syncthreads();
  sc_deconv_output<COT, KH, KW, SY, SX>(x, ws, y, b, s, threadIdx.x);
}

template <int COT, int KH, int KW, int SY, int SX>
static int sc_deconv_launch(const sc_conv_shape* s, const float* x, const float* w, float* y, cudaStream_t stream) {
  const size_t smem = (size_t)sc_deconv_staged<COT, KH, KW, SY, SX>(*s) * sizeof(float);
  sc_direct_deconv<COT, KH, KW, SY, SX><<<sc_deconv_grid<COT, SY, SX>(*s), 128, smem, stream>>>(x, w, y, *s);
  return (int)cudaGetLastError();
}
