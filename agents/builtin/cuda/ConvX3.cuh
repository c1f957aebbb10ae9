// A convolution's 3xTF32 form (X3Common.cuh says why), tried where the job allows TF32.
#pragma once
#include "ConvLaunch.cuh"
#include "X3Common.cuh"
// stitch-embed: a generated program holds what follows this line (README.md).

struct sc_conv_x3 {
  cudnnConvolutionDescriptor_t conv = nullptr;  // tensor-op math
  int algo = 0;
  size_t workspace = 0;
  float* parts = nullptr;  // hi and lo of the input, then of the weight
  int64_t x_n = 0, w_n = 0;
};

// The small products first, the large one last.
static int sc_conv_x3_run(sc_conv* c, const sc_conv_shape* s, const float* x, const float* w, float* y,
                          cudaStream_t stream) {
  sc_conv_x3* t = c->x3;
  float *x_hi = t->parts, *x_lo = x_hi + t->x_n, *w_hi = x_lo + t->x_n, *w_lo = w_hi + t->w_n;
  int st;
  if ((st = sc_split(x, x_hi, x_lo, t->x_n, stream)) != 0 || (st = sc_split(w, w_hi, w_lo, t->w_n, stream)) != 0 ||
      (st = sc_conv_run(c, s, t->conv, t->algo, t->workspace, 0.0f, x_hi, w_lo, y, stream)) != 0 ||
      (st = sc_conv_run(c, s, t->conv, t->algo, t->workspace, 1.0f, x_lo, w_hi, y, stream)) != 0)
    return st;
  return sc_conv_run(c, s, t->conv, t->algo, t->workspace, 1.0f, x_hi, w_hi, y, stream);
}

// Keeps the 3xTF32 form when the whole of it (splits and the epilogue's pass included) measures
// faster than the fp32 choice (cuDNN's FMA algorithm or the direct kernel) timed the same way;
// any failure keeps the fp32 choice.
static int sc_conv_x3_try(sc_conv* c, const sc_conv_shape* s, const float* x, const float* w, float* y,
                          const sc_conv_epi* e, cudaStream_t stream) {
  sc_conv_x3* t = new sc_conv_x3();
  t->x_n = sc_elements(s->in, 0, s->nd);
  t->w_n = sc_elements(s->w, 0, s->nd);
  bool ok = cudaMalloc(&t->parts, 2 * (t->x_n + t->w_n) * sizeof(float)) == cudaSuccess;
  float* x_hi = t->parts;
  float* w_hi = t->parts + 2 * t->x_n;
  ok = ok && sc_split(x, x_hi, x_hi + t->x_n, t->x_n, stream) == 0 &&
       sc_split(w, w_hi, w_hi + t->w_n, t->w_n, stream) == 0 && sc_conv_desc(&t->conv, s, CUDNN_TENSOR_OP_MATH) == 0 &&
       sc_conv_choose(c, s, t->conv, x_hi, w_hi, y, &t->algo, &t->workspace, nullptr, stream);
  if (ok) {
    const float fp32_ms = sc_median_ms([&] { return sc_conv_fp32(c, s, x, w, y, e, stream); }, stream);
    ok = sc_x3_keep(&c->x3, t, [&] {
      const int st = sc_conv_x3_run(c, s, x, w, y, stream);
      return st ? st : sc_conv_epilogue(s, y, e, stream);
    }, fp32_ms, stream);
  }
  if (!ok) sc_conv_x3_release(t);
  cudaGetLastError();
  return 0;
}

static void sc_conv_x3_release(sc_conv_x3* t) {
  if (t->conv) cudnnDestroyConvolutionDescriptor(t->conv);
  if (t->parts) cudaFree(t->parts);
  delete t;
}
