// The library calls' tensor-core form, only in candidates of jobs that allow TF32 (the
// verifier's static check flags TF32 in any other). fp32-accurate products on TF32 tensor cores
// ("3xTF32"): x = hi + lo with hi = x rounded to TF32 and lo = x - hi (exact in fp32). A bilinear
// product is then hi*hi + hi*lo + lo*hi up to lo*lo, 2^-22 of it, below the rounding of an fp32
// accumulation over the same terms: three TF32 calls accumulating in fp32 replace one FMA call.
#pragma once
#include "LibraryCommon.cuh"
// stitch-embed: a generated program holds what follows this line (README.md).

// Splits `n` elements from `x` (a view's whole span) into hi and lo.
__global__ void sc_split_tf32(const float* __restrict__ x, float* __restrict__ hi, float* __restrict__ lo, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    const float v = x[i];
    unsigned h;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(h) : "f"(v));
    hi[i] = __uint_as_float(h);
    lo[i] = isfinite(v) ? v - __uint_as_float(h) : 0.0f;  // inf and NaN stay in hi alone
  }
}
static int sc_split(const float* x, float* hi, float* lo, int64_t n, cudaStream_t stream) {
  const int64_t blocks = (n + 255) / 256 < 132 * 16 ? (n + 255) / 256 : 132 * 16;
  sc_split_tf32<<<(unsigned)blocks, 256, 0, stream>>>(x, hi, lo, n);
  return (int)cudaGetLastError();
}

// Installs `form` in `*slot` and keeps it only when the whole of it, `run` (splits included),
// measures faster than `fp32_ms` by the same protocol; otherwise clears the slot and says no.
template <typename Form, typename Run>
static bool sc_x3_keep(Form** slot, Form* form, Run run, float fp32_ms, cudaStream_t stream) {
  *slot = form;
  const float ms = sc_median_ms(run, stream);
  if (fp32_ms >= 0.0f && ms >= 0.0f && ms < fp32_ms) return true;
  *slot = nullptr;
  return false;
}
