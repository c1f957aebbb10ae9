// The device helpers every generated file starts with: math functions with PyTorch's semantics
// (NaN-propagating max/min, the loss terms), block reductions of values and of (value, index)
// pairs, and the block scan the row scans use (emitPrelude in CudaEmitter.h).
#pragma once
// stitch-embed: a generated program holds what follows this line (README.md).
#include "stitch_abi.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

__device__ __forceinline__ float sc_gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.7071067811865476f)); }
__device__ __forceinline__ float sc_gelu_tanh(float x) {
  return 0.5f * x * (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
}
__device__ __forceinline__ float sc_silu(float x) { return x / (1.0f + expf(-x)); }
__device__ __forceinline__ float sc_softplus(float x, float beta, float threshold) {
  return x * beta > threshold ? x : log1pf(expf(x * beta)) / beta;
}
__device__ __forceinline__ float sc_mish(float x) { return x * tanhf(sc_softplus(x, 1.0f, 20.0f)); }
__device__ __forceinline__ float sc_elu(float x, float alpha, float scale, float input_scale) {
  return x > 0.0f ? x * scale : alpha * scale * expm1f(x * input_scale);
}
// torch.maximum/minimum, max/min reductions, relu, clamp and the hard* activations propagate NaN
// (fmaxf would drop it).
__device__ __forceinline__ float sc_max(float a, float b) { return (a > b || a != a) ? a : b; }
__device__ __forceinline__ float sc_min(float a, float b) { return (a < b || a != a) ? a : b; }
__device__ __forceinline__ float sc_xlogy(float x, float y) {
  if (y != y) return y;
  return x == 0.0f ? 0.0f : x * logf(y);
}
__device__ __forceinline__ float sc_smooth_l1(float z, float beta) {
  return beta == 0.0f ? z : (z < beta ? 0.5f * z * z / beta : z - 0.5f * beta);
}
__device__ __forceinline__ float sc_huber(float z, float delta) {
  return z < delta ? 0.5f * z * z : delta * (z - 0.5f * delta);
}
// As ATen's CUDA binary_cross_entropy: logs clamped at -100.
__device__ __forceinline__ float sc_bce(float x, float y) {
  return (y - 1.0f) * fmaxf(log1pf(-x), -100.0f) - y * fmaxf(logf(x), -100.0f);
}

// identity(): what a lane with no warp partial contributes; it must leave the result unchanged
// (a repeated partial would be counted twice by a sum or a product).
struct SumOp {
  __device__ static float identity() { return 0.0f; }
  __device__ static float apply(float a, float b) { return a + b; }
};
struct ProdOp {
  __device__ static float identity() { return 1.0f; }
  __device__ static float apply(float a, float b) { return a * b; }
};
struct MaxOp {
  __device__ static float identity() { return __int_as_float(0xff800000); }
  __device__ static float apply(float a, float b) { return sc_max(a, b); }
};
struct MinOp {
  __device__ static float identity() { return __int_as_float(0x7f800000); }
  __device__ static float apply(float a, float b) { return sc_min(a, b); }
};

// Warp-wide reduction by shuffles; every lane gets the result. With W < 32, within each aligned
// group of W lanes (a short row's segment): xor offsets below W stay inside it.
template <typename Op, int W = 32>
__device__ __forceinline__ float warpReduce(float v) {
  for (int o = W / 2; o > 0; o >>= 1) v = Op::apply(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Block-wide reduction: warp shuffles, then one value per warp through shared memory; every
// thread gets the result. `scratch` holds 33 floats; the trailing barrier lets the caller reuse it.
template <typename Op>
__device__ __forceinline__ float blockReduce(float v, float* scratch) {
  v = warpReduce<Op>(v);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, warps = (blockDim.x + 31) >> 5;
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    float w = lane < warps ? scratch[lane] : Op::identity();
    for (int o = 16; o > 0; o >>= 1) w = Op::apply(w, __shfl_xor_sync(0xffffffffu, w, o));
    if (lane == 0) scratch[32] = w;
  }
  __syncthreads();
  const float r = scratch[32];
  __syncthreads();
  return r;
}

// argmax/argmin as ATen's GreaterOrNan/LessOrNan: NaN wins, ties go to the lower index, so the
// result does not depend on the order partial results meet.
template <bool IsMax>
struct ArgOp {
  __device__ static bool better(float a, long long ia, float b, long long ib) {
    if (a != a) return b == b || ia < ib;
    if (b != b) return false;
    if (a == b) return ia < ib;
    return IsMax ? a > b : a < b;
  }
  __device__ static void apply(float& acc, long long& ai, float v, long long vi) {
    if (better(v, vi, acc, ai)) { acc = v; ai = vi; }
  }
  // One element of a thread's scan in index order (vi past every index acc holds): a tie keeps
  // the earlier and a NaN replaces a number, never an earlier NaN, with no index comparison. The
  // scan starts from the identity at its first index, so that a run of values equal to the
  // identity (-inf for argmax) keeps its first. Argmax over dim 1 of [128,4096,4095] went from 60%
  // to 97% of the copy floor on an H200 (bench/results/argmax_2026-11-29_h200).
  __device__ static void step(float& acc, long long& ai, float v, long long vi) {
    const bool take = (IsMax ? v > acc : v < acc) || (v != v && acc == acc);
    acc = take ? v : acc;
    ai = take ? vi : ai;
  }
};

template <bool IsMax, int W = 32>
__device__ __forceinline__ void warpArgReduce(float& v, long long& i) {
  for (int o = W / 2; o > 0; o >>= 1) {
    const float ov = __shfl_xor_sync(0xffffffffu, v, o);
    const long long oi = __shfl_xor_sync(0xffffffffu, i, o);
    ArgOp<IsMax>::apply(v, i, ov, oi);
  }
}

template <bool IsMax>
__device__ __forceinline__ void blockArgReduce(float& v, long long& i, float* scratch, long long* iscratch) {
  warpArgReduce<IsMax>(v, i);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, warps = (blockDim.x + 31) >> 5;
  if (lane == 0) { scratch[warp] = v; iscratch[warp] = i; }
  __syncthreads();
  if (warp == 0) {
    float w = lane < warps ? scratch[lane] : scratch[0];
    long long wi = lane < warps ? iscratch[lane] : iscratch[0];
    for (int o = 16; o > 0; o >>= 1) {
      const float ov = __shfl_xor_sync(0xffffffffu, w, o);
      const long long oi = __shfl_xor_sync(0xffffffffu, wi, o);
      ArgOp<IsMax>::apply(w, wi, ov, oi);
    }
    if (lane == 0) { scratch[32] = w; iscratch[32] = wi; }
  }
  __syncthreads();
  v = scratch[32];
  i = iscratch[32];
  __syncthreads();
}

// Scans accumulate in double: a running fp32 sum drifts by about sqrt(n) ulps of the partial
// sums, which near a zero crossing exceeds the verifier's 1e-4.
struct ScanSum { __device__ static double identity() { return 0.0; } __device__ static double apply(double a, double b) { return a + b; } };
struct ScanProd { __device__ static double identity() { return 1.0; } __device__ static double apply(double a, double b) { return a * b; } };

// Exclusive block scan of one value per thread (blockDim a multiple of 32): returns the combined
// values of the lower threads and sets `total` to the whole block's. `scratch` holds 33 doubles.
template <typename Op>
__device__ __forceinline__ double blockExclusiveScan(double v, double* scratch, double& total) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, warps = (blockDim.x + 31) >> 5;
  double inc = v;
  for (int o = 1; o < 32; o <<= 1) {
    const double n = __shfl_up_sync(0xffffffffu, inc, o);
    if (lane >= o) inc = Op::apply(n, inc);
  }
  double below = __shfl_up_sync(0xffffffffu, inc, 1);
  if (lane == 0) below = Op::identity();
  if (lane == 31) scratch[warp] = inc;
  __syncthreads();
  if (warp == 0) {
    double w = lane < warps ? scratch[lane] : Op::identity();
    for (int o = 1; o < 32; o <<= 1) {
      const double n = __shfl_up_sync(0xffffffffu, w, o);
      if (lane >= o) w = Op::apply(n, w);
    }
    scratch[lane] = w;
  }
  __syncthreads();
  const double before = warp == 0 ? Op::identity() : scratch[warp - 1];
  total = scratch[warps - 1];
  __syncthreads();
  return Op::apply(before, below);
}

// The blocks a launch takes for `work` items at `per` a block: at least one, at most `most` (a
// kernel whose rows are the call's computes its grid at run time).
static inline unsigned int sc_blocks(int64_t work, int64_t per, int64_t most) {
  const int64_t blocks = (work + per - 1) / per;
  return (unsigned int)(blocks < 1 ? 1 : blocks > most ? most : blocks);
}

