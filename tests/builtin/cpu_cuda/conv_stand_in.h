// A reference convolution in place of cuDNN for candidates run on the CPU (conv_on_cpu.py): it
// reads and writes the tensors in the layout the candidate tells cuDNN they have (NCHW, or
// channels-last with the filter KRSC: sc_conv_shape::channels_last), so a layout the program and
// its descriptors disagree on gives wrong numbers here as it would on the GPU, and then runs the
// candidate's own epilogue pass, as its cuDNN path does. conv_on_cpu.py puts the candidate's
// definitions of the structs and of that pass before this header. Forward and transposed
// convolutions (cuDNN's backward-data); the generated rivals of cuDNN (the direct kernels, the
// pointwise GEMM) are never chosen here.
#pragma once

#include <cstdint>
#include <vector>

#define SC_ROW_STATES 8
template <class State>
struct sc_per_rows {
  int64_t rows[SC_ROW_STATES];
  State state[SC_ROW_STATES];
  int next;
};

template <class State, class Release>
static State* sc_for_rows(sc_per_rows<State>* r, int64_t rows, Release release) {
  for (int i = 0; i < SC_ROW_STATES; ++i)
    if (r->rows[i] == rows) return &r->state[i];
  const int i = r->next;
  r->next = (i + 1) % SC_ROW_STATES;
  if (r->rows[i]) release(&r->state[i]);
  r->rows[i] = rows;
  return &r->state[i];
}

struct sc_conv {};
static void sc_conv_release(sc_conv*) {}
static sc_conv* sc_conv_for_rows(sc_per_rows<sc_conv>* r, int64_t rows) { return sc_for_rows(r, rows, sc_conv_release); }

typedef int (*sc_direct_fn)(const sc_conv_shape*, const float*, const float*, float*, const sc_conv_epi*, cudaStream_t);

template <int COT, int KH, int KW>
static int sc_direct_launch(const sc_conv_shape*, const float*, const float*, float*, const sc_conv_epi*, cudaStream_t) {
  return (int)cudaErrorNotSupported;
}

// Element strides of a dense tensor of `dims` (rank nd): NCHW, or channels innermost.
static std::vector<int64_t> sc_stand_in_strides(const int* dims, int nd, bool channels_last) {
  std::vector<int64_t> s(nd, 1);
  if (channels_last) {
    int64_t step = dims[1];
    for (int i = nd - 1; i > 1; --i) s[i] = step, step *= dims[i];
    s[0] = step;
  } else {
    for (int i = nd - 1; i > 0; --i) s[i - 1] = s[i] * dims[i];
  }
  return s;
}

// A transposed convolution as cuDNN's backward-data computes it, scattered: each input position
// adds its taps into the outputs its window covers, o = i * stride - pad + r * dilation. The filter
// is [Cin, Cout / groups, taps...] (KRSC when channels-last).
__attribute__((optimize("O3"))) static void sc_stand_in_deconv(const sc_conv_shape* s, const float* x, const float* w,
                                                               float* y, const std::vector<int64_t>& xs,
                                                               const std::vector<int64_t>& ws,
                                                               const std::vector<int64_t>& ys) {
  const int nd = s->nd, sp = nd - 2;
  const int cin = s->in[1] / s->groups, cout = s->out[1] / s->groups;
  int64_t outputs = 1, positions = 1, taps = 1;
  for (int d = 0; d < nd; ++d) outputs *= s->out[d];
  for (int d = 2; d < nd; ++d) positions *= s->in[d], taps *= s->w[d];
  std::vector<int64_t> out_index(outputs);  // dense NCHW order -> the element's place in y
  for (int64_t i = 0; i < outputs; ++i) {
    int64_t at = 0;
    for (int64_t rest = i, d = nd - 1; d >= 0; --d) at += rest % s->out[d] * ys[d], rest /= s->out[d];
    out_index[i] = at;
  }
  for (int64_t i = 0; i < outputs; ++i) y[out_index[i]] = 0.0f;
  for (int n = 0; n < s->in[0]; ++n)
    for (int ci = 0; ci < s->in[1]; ++ci) {
      const int g = ci / cin;
      for (int64_t p = 0; p < positions; ++p) {
        int i[3] = {0, 0, 0};
        int64_t xi = n * xs[0] + (int64_t)ci * xs[1];
        for (int64_t rest = p, d = sp - 1; d >= 0; --d) i[d] = (int)(rest % s->in[2 + d]), rest /= s->in[2 + d];
        for (int d = 0; d < sp; ++d) xi += (int64_t)i[d] * xs[2 + d];
        const float v = x[xi];
        for (int64_t t = 0; t < taps; ++t) {
          int64_t dense = 0, placed = 1, wi = (int64_t)ci * ws[0];
          bool inside = true;
          for (int64_t tr = t, d = sp - 1; d >= 0; --d) {  // the tap's offsets, last dim first
            const int r = (int)(tr % s->w[2 + d]);
            tr /= s->w[2 + d];
            wi += (int64_t)r * ws[2 + d];
            const int o = i[d] * s->stride[d] - s->pad[d] + r * s->dilation[d];
            inside = inside && o >= 0 && o < s->out[2 + d];
            dense += (int64_t)o * placed;  // the output position, row-major over the spatial dims
            placed *= s->out[2 + d];
          }
          if (!inside) continue;
          for (int k = 0; k < cout; ++k) {
            const int co = g * cout + k;
            y[out_index[((int64_t)n * s->out[1] + co) * placed + dense]] += v * w[wi + (int64_t)k * ws[1]];
          }
        }
      }
    }
}

// Built optimized whatever the candidate's flags: a fixture's convolution is billions of products.
__attribute__((optimize("O3"))) static int sc_conv_launch(sc_conv*, const sc_conv_shape* s, const float* x,
                                                          const float* w, float* y, const sc_conv_epi* e,
                                                          sc_direct_fn, cudaStream_t) {
  if (s->nd < 4 || s->nd > 5) return (int)cudaErrorNotSupported;
  const int nd = s->nd, sp = nd - 2;
  const bool cl = s->channels_last != 0;
  const auto xs = sc_stand_in_strides(s->in, nd, cl), ws = sc_stand_in_strides(s->w, nd, cl),
             ys = sc_stand_in_strides(s->out, nd, cl);
  if (s->transposed) {
    sc_stand_in_deconv(s, x, w, y, xs, ws, ys);
    return sc_conv_epilogue(s, y, e, nullptr);
  }
  const int cin = s->in[1] / s->groups, cout = s->out[1] / s->groups;
  int64_t positions = 1, taps = 1;
  for (int d = 2; d < nd; ++d) positions *= s->out[d], taps *= s->w[d];
  for (int n = 0; n < s->out[0]; ++n)
    for (int64_t p = 0; p < positions; ++p) {
      int o[3] = {0, 0, 0};
      for (int64_t rest = p, d = sp - 1; d >= 0; --d) o[d] = (int)(rest % s->out[2 + d]), rest /= s->out[2 + d];
      for (int k = 0; k < s->out[1]; ++k) {
        const int g = k / cout;
        float acc = 0.0f;
        for (int64_t t = 0; t < taps; ++t) {
          int64_t xi = n * xs[0] + (int64_t)g * cin * xs[1], wi = k * ws[0];
          bool inside = true;
          for (int64_t tr = t, d = sp - 1; d >= 0; --d) {
            const int r = (int)(tr % s->w[2 + d]);
            tr /= s->w[2 + d];
            const int at = o[d] * s->stride[d] - s->pad[d] + r * s->dilation[d];
            inside = inside && at >= 0 && at < s->in[2 + d];
            xi += (int64_t)at * xs[2 + d];
            wi += (int64_t)r * ws[2 + d];
          }
          if (!inside) continue;
          const float* xc = x + xi;
          const float* wc = w + wi;
          const int64_t xstep = xs[1], wstep = ws[1];
          for (int c = 0; c < cin; ++c) acc += xc[c * xstep] * wc[c * wstep];
        }
        const float v = acc;
        int64_t yi = n * ys[0] + (int64_t)k * ys[1];
        for (int d = 0; d < sp; ++d) yi += (int64_t)o[d] * ys[2 + d];
        y[yi] = v;
      }
    }
  return sc_conv_epilogue(s, y, e, nullptr);
}
