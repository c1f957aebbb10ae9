// The direct convolution kernel, the generated alternative cuDNN is measured against for shapes
// whose outputs sum few products (directConvTile in LibraryCall.h).
#pragma once
#include "ConvEngines.cuh"
// stitch-embed: a generated program holds what follows this line (README.md).

// acc[t] += v * w[t] for a tile of COT weights, read as 16-byte vectors (w 16-byte aligned).
template <int COT>
__host__ __device__ __forceinline__ void sc_fma_tile(float* acc, float v, const float* w) {
  const float4* w4 = reinterpret_cast<const float4*>(w);
#pragma unroll
  for (int t = 0; t < COT / 4; ++t) {
    const float4 f = w4[t];
    acc[4 * t] = fmaf(v, f.x, acc[4 * t]);
    acc[4 * t + 1] = fmaf(v, f.y, acc[4 * t + 1]);
    acc[4 * t + 2] = fmaf(v, f.z, acc[4 * t + 2]);
    acc[4 * t + 3] = fmaf(v, f.w, acc[4 * t + 3]);
  }
}

// A direct convolution, for the shapes where each output sums few products (LeNet's 1 and 6
// input channels, a CNN stem's 3, grouped convolutions' 8 per group), which cuDNN's fp32
// algorithms ran at 2.6-6.4 TFLOP/s on an H100 (bench/results/conv_direct_2026-11-23_h100.md).
// A thread takes one output position of one image and computes a tile of COT output channels of
// one group: each input it loads feeds COT products, the tile's weights wait in shared memory as
// [tap][COT] so a tap's COT weights are vector loads all threads of the block share. KH, KW: the
// window, when the emitter knows it at compile time (0: read from the shape). Contiguous
// tensors, forward 2-D (1-D with a unit height), any stride, padding, dilation and groups.
// Adds input channel `xc`'s window at (iy0, ix0) times the tile's weights of that channel to acc.
// CHECK: some of the window lies in the padding (zeros, skipped); without it no bound is tested.
template <int COT, int KH, int KW, bool CHECK>
__device__ __forceinline__ void sc_direct_taps(float* acc, const float* __restrict__ xc, const float* ws, int kh,
                                               int kw, int iy0, int ix0, const sc_conv_shape& s) {
  const int H = s.in[2], W = s.in[3];
#pragma unroll
  for (int r = 0; r < (KH ? KH : kh); ++r) {
    const int iy = iy0 + r * s.dilation[0];
    if (CHECK && (iy < 0 || iy >= H)) continue;
#pragma unroll
    for (int q = 0; q < (KW ? KW : kw); ++q) {
      const int ix = ix0 + q * s.dilation[1];
      if (CHECK && (ix < 0 || ix >= W)) continue;
      sc_fma_tile<COT>(acc, xc[iy * W + ix], ws + (r * kw + q) * COT);
    }
  }
}

template <int COT, int KH, int KW>
__global__ void __launch_bounds__(128) sc_direct_conv(const float* __restrict__ x, const float* __restrict__ w,
                                                       float* __restrict__ y, sc_conv_shape s, sc_conv_epi e) {
  extern __shared__ float4 sc_direct_smem[];
  float* ws = reinterpret_cast<float*>(sc_direct_smem);
  // The tile's epilogue parameters, read and combined once per block: per output, sqrtf and a
  // division for each of 16 channels made the stem's first convolution 1.5x slower (H100).
  __shared__ float eps_bias[COT], eps_mean[COT], eps_invstd[COT], eps_scale[COT], eps_shift[COT];
  const int kh = KH ? KH : s.w[2], kw = KW ? KW : s.w[3];
  const int H = s.in[2], W = s.in[3], OH = s.out[2], OW = s.out[3];
  const int cin = s.in[1] / s.groups, cout = s.out[1] / s.groups, taps = cin * kh * kw;
  const int tiles = (cout + COT - 1) / COT;
  int b = blockIdx.x;
  const int tile = b % tiles;
  b /= tiles;
  const int g = b % s.groups, n = b / s.groups;
  const int co0 = g * cout + tile * COT;
  for (int i = threadIdx.x; i < taps * COT; i += blockDim.x) {
    const int t = i % COT, tap = i / COT;
    ws[i] = tile * COT + t < cout ? w[(int64_t)(co0 + t) * taps + tap] : 0.0f;
  }
  if (threadIdx.x < COT && tile * COT + (int)threadIdx.x < cout) {
    const sc_conv_epi_channel ch(e, co0 + threadIdx.x);
    eps_bias[threadIdx.x] = ch.bias, eps_mean[threadIdx.x] = ch.mean, eps_invstd[threadIdx.x] = ch.invstd;
    eps_scale[threadIdx.x] = ch.scale, eps_shift[threadIdx.x] = ch.shift;
  }
  __syncthreads();
  const int p = blockIdx.y * blockDim.x + threadIdx.x;
  if (p >= OH * OW) return;
  const int iy0 = p / OW * s.stride[0] - s.pad[0], ix0 = p % OW * s.stride[1] - s.pad[1];
  const bool inside = iy0 >= 0 && iy0 + (kh - 1) * s.dilation[0] < H && ix0 >= 0 && ix0 + (kw - 1) * s.dilation[1] < W;
  float acc[COT];
#pragma unroll
  for (int t = 0; t < COT; ++t) acc[t] = 0.0f;
  const float* xg = x + ((int64_t)n * s.in[1] + (int64_t)g * cin) * H * W;
  for (int ci = 0; ci < cin; ++ci) {
    const float* xc = xg + (int64_t)ci * H * W;
    const float* wc = ws + ci * kh * kw * COT;
    if (inside) sc_direct_taps<COT, KH, KW, false>(acc, xc, wc, kh, kw, iy0, ix0, s);
    else sc_direct_taps<COT, KH, KW, true>(acc, xc, wc, kh, kw, iy0, ix0, s);
  }
  float* yo = y + ((int64_t)n * s.out[1] + co0) * OH * OW + p;
#pragma unroll
  for (int t = 0; t < COT; ++t)
    if (tile * COT + t < cout) {
      const sc_conv_epi_channel ch(eps_bias[t], eps_mean[t], eps_invstd[t], eps_scale[t], eps_shift[t]);
      yo[(int64_t)t * OH * OW] = ch.apply(e, acc[t]);
    }
}

template <int COT, int KH, int KW>
static int sc_direct_launch(const sc_conv_shape* s, const float* x, const float* w, float* y, const sc_conv_epi* e,
                            cudaStream_t stream) {
  const int cout = s->out[1] / s->groups, tiles = (cout + COT - 1) / COT;
  const dim3 grid((unsigned)(s->in[0] * s->groups * tiles), (unsigned)((s->out[2] * s->out[3] + 127) / 128));
  const size_t smem = (size_t)(s->in[1] / s->groups) * s->w[2] * s->w[3] * COT * sizeof(float);
  const sc_conv_epi none = {nullptr, nullptr, nullptr, nullptr, nullptr, 0.0f, 0};
  sc_direct_conv<COT, KH, KW><<<grid, 128, smem, stream>>>(x, w, y, *s, e ? *e : none);
  return (int)cudaGetLastError();
}
