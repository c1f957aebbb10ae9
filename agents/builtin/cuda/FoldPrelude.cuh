// The states of folded reductions and their merges: softmax's max and sum of exponentials, a norm's
// mean and squared deviations, in one pass over a row (emitFoldPrelude in CudaEmitter.h, written
// after the prelude into a file with such a kernel).
#pragma once
#include "Prelude.cuh"
// stitch-embed: a generated program holds what follows this line (README.md).
// Softmax's statistics in one pass: the running max m and s = Σ exp(x − m) over the elements
// seen, rescaled when the max grows. While every element is −inf, s stays 0 (exp(−inf − −inf)
// would make it NaN where the softmax of a row with a finite element has none).
// The exponentials are the hardware's (__expf: ex2.approx of x·log2 e, as Triton's tl.exp): at most
// 2 + 1.17|x| ulps off, so the terms that make up s (x − m near 0) carry about 2e-7 of relative
// error and those 20 below the max a few 1e-6, far inside the verifier's 1e-4; expf's exact range reduction
// made the log-sum-exp of level1/95 issue-bound (0.188 ms, 68% of the memory floor, against
// 0.160 ms and 80% with __expf on an H200: bench/results/reductions_2026-11-29_h200).
struct MaxExpSum {
  float m, s;
  __device__ static MaxExpSum identity() { return {__int_as_float(0xff800000), 0.0f}; }
  __device__ static MaxExpSum merge(MaxExpSum a, MaxExpSum b) {
    const float m = sc_max(a.m, b.m);
    if (m == __int_as_float(0xff800000)) return {m, 0.0f};
    return {m, a.s * __expf(a.m - m) + b.s * __expf(b.m - m)};
  }
  template <int N>
  __device__ static MaxExpSum of(const float* x) {
    float m = x[0];
    for (int l = 1; l < N; ++l) m = sc_max(m, x[l]);
    if (m == __int_as_float(0xff800000)) return {m, 0.0f};
    float s = 0.0f;
    for (int l = 0; l < N; ++l) s += __expf(x[l] - m);
    return {m, s};
  }
  // N elements more (a row's chunk): one exponential each, and the sum rescaled only when the max
  // grows. merge(*this, of<N>(x)) takes two more per chunk, and with them the one-pass log-sum-exp
  // over rows of 4096 (level1/95_CrossEntropyLoss) was issue-bound at 49% of the memory ceiling.
  template <int N>
  __device__ void pushAll(const float* x) {
    float top = x[0];
    for (int l = 1; l < N; ++l) top = sc_max(top, x[l]);
    top = sc_max(m, top);
    if (top == __int_as_float(0xff800000)) return;  // every element so far −inf: s stays 0
    if (!(top == m)) {  // a larger max (or NaN, which sc_max keeps and makes s NaN as merge does)
      s *= __expf(m - top);
      m = top;
    }
    for (int l = 0; l < N; ++l) s += __expf(x[l] - m);
  }
  // One element more, as a loop over single elements (a column, a ragged row's ends) takes it.
  __device__ void push(float x) { pushAll<1>(&x); }
  __device__ static MaxExpSum load(const MaxExpSum* p) { return {__ldcg(&p->m), __ldcg(&p->s)}; }
  __device__ MaxExpSum shuffled(int o) const {
    return {__shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o)};
  }
};

// A norm's statistics in one pass: count, mean and M2 = Σ (x − mean)² (Welford), merged by
// Chan's formula, with no cancellation where the mean dwarfs the spread.
struct Moments {
  float n, mean, m2;
  __device__ static Moments identity() { return {0.0f, 0.0f, 0.0f}; }
  __device__ static Moments merge(Moments a, Moments b) {
    if (b.n == 0.0f) return a;
    if (a.n == 0.0f) return b;
    const float n = a.n + b.n, w = b.n / n, d = b.mean - a.mean;
    return {n, a.mean + d * w, a.m2 + b.m2 + d * d * a.n * w};
  }
  template <int N>
  __device__ static Moments of(const float* x) {
    float sum = 0.0f;
    for (int l = 0; l < N; ++l) sum += x[l];
    const float mean = sum / (float)N;
    float m2 = 0.0f;
    for (int l = 0; l < N; ++l) m2 += (x[l] - mean) * (x[l] - mean);
    return {(float)N, mean, m2};
  }
  template <int N>
  __device__ void pushAll(const float* x) { *this = merge(*this, of<N>(x)); }
  // One element more: Welford's update, what merge(*this, {1, x, 0}) computes, without merge's
  // branches and full-precision division. A column kernel merges its elements one at a time; with
  // merge, level2/52's per-channel moments over 520 MB ran at 1.8 TB/s where a plain sum pass ran
  // at 4 (H200).
  __device__ void push(float x) {
    n += 1.0f;
    const float d = x - mean;
    mean += __fdividef(d, n);
    m2 += d * (x - mean);
  }
  __device__ static Moments load(const Moments* p) { return {__ldcg(&p->n), __ldcg(&p->mean), __ldcg(&p->m2)}; }
  __device__ Moments shuffled(int o) const {
    return {__shfl_xor_sync(0xffffffffu, n, o), __shfl_xor_sync(0xffffffffu, mean, o), __shfl_xor_sync(0xffffffffu, m2, o)};
  }
};

// Warp-wide merge (with W < 32, within each aligned group of W lanes); the lower lane's state goes
// first in every merge, so all lanes end with the same bits (Chan's merge is not symmetric in
// rounding).
template <int W = 32, typename T>
__device__ __forceinline__ T warpMerge(T v) {
  for (int o = W / 2; o > 0; o >>= 1) {
    const T other = v.shuffled(o);
    v = (threadIdx.x & o) ? T::merge(other, v) : T::merge(v, other);
  }
  return v;
}

// Block-wide merge as blockReduce; `scratch` holds 33 states.
template <typename T>
__device__ __forceinline__ T blockMerge(T v, T* scratch) {
  v = warpMerge(v);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, warps = (blockDim.x + 31) >> 5;
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    T w = warpMerge(lane < warps ? scratch[lane] : T::identity());
    if (lane == 0) scratch[32] = w;
  }
  __syncthreads();
  const T r = scratch[32];
  __syncthreads();
  return r;
}
