// Convolutions through cuDNN, first part: the shape and state of a call, the epilogue folded into
// it (bias, inference batch norm, ReLU) as its own pass, one cuDNN run, and cuDNN's fused
// bias-activation form. The direct kernel (ConvDirect.cuh) and the algorithm choice and launch
// (ConvLaunch.cuh) follow it in a program.
#pragma once
#include "Dnn.cuh"
// stitch-embed: a generated program holds what follows this line (README.md).

// A convolution as cuDNN sees it: 1-D ones get a unit height (cuDNN wants 2 spatial dims or
// more). A transposed convolution is cuDNN's backward-data of the forward convolution whose
// filter is the weight ([Cin, Cout/g, k...]): x is the forward's output (our output), y its
// input (our input).
struct sc_conv_x3;  // the 3xTF32 form: defined only in candidates of jobs that allow TF32
struct sc_conv_engine;  // a cuDNN backend engine's plan (ConvEngines.cuh)
struct sc_conv_shape;

// The elementwise tail folded into the convolution (ConvEpilogue in LibraryCall.h), per output
// channel: the bias, an inference batch norm, a ReLU, each optional (a null pointer, relu 0), in
// the arithmetic of the generated kernel it replaces.
struct sc_conv_epi {
  const float* bias;
  const float *mean, *var, *scale, *shift;  // mean null: no batch norm; scale, shift optional
  float eps;
  int relu;
};

// One channel's epilogue with its parameters read once: what a thread applies to many outputs.
struct sc_conv_epi_channel {
  float bias, mean, invstd, scale, shift;
  __device__ __forceinline__ sc_conv_epi_channel(const sc_conv_epi& e, int c)
      : bias(e.bias ? e.bias[c] : 0.0f), mean(e.mean ? e.mean[c] : 0.0f),
        invstd(e.mean ? (1.0f / sqrtf((e.var[c] + e.eps))) : 1.0f), scale(e.scale ? e.scale[c] : 1.0f),
        shift(e.shift ? e.shift[c] : 0.0f) {}
  __device__ __forceinline__ sc_conv_epi_channel(float b, float m, float i, float sc, float sh)
      : bias(b), mean(m), invstd(i), scale(sc), shift(sh) {}
  __device__ __forceinline__ float apply(const sc_conv_epi& e, float v) const {
    if (e.bias) v = (v + bias);
    if (e.mean) {
      v = ((v - mean) * invstd);
      if (e.scale) v = (v * scale);
      if (e.shift) v = (v + shift);
    }
    if (e.relu) v = sc_max(v, 0.0f);  // a NaN stays NaN, as PyTorch's relu keeps it
    return v;
  }
};

// In place over y: `per_plane` blocks per channel plane of `plane` elements (V at a time, 16-byte
// accesses where planes are a multiple of 4 floats), so a block finds its channel by one division
// and reads that channel's parameters once. A division per element made this pass slower than the
// generated kernel it replaces.
template <int V>
__global__ void __launch_bounds__(256) sc_conv_epi_pass(float* __restrict__ y, int64_t plane, int per_plane,
                                                        int channels, sc_conv_epi e) {
  const int64_t p = blockIdx.x / per_plane;
  const int64_t i = (int64_t)(blockIdx.x % per_plane) * 256 + threadIdx.x;
  if (i * V >= plane) return;
  const sc_conv_epi_channel ch(e, (int)(p % channels));
  float* yp = y + p * plane;
  if (V == 4) {
    float4 v = reinterpret_cast<float4*>(yp)[i];
    v.x = ch.apply(e, v.x);
    v.y = ch.apply(e, v.y);
    v.z = ch.apply(e, v.z);
    v.w = ch.apply(e, v.w);
    reinterpret_cast<float4*>(yp)[i] = v;
  } else {
    yp[i] = ch.apply(e, yp[i]);
  }
}

// The same over a channels-last output, rows of `channels` (V at a time where channels are a
// multiple of 4): each thread keeps one group of V channels, their parameters read once, and walks
// the rows its block takes, so no element pays a division for its channel.
template <int V>
__global__ void __launch_bounds__(256) sc_conv_epi_pass_nhwc(float* __restrict__ y, int64_t rows, int channels,
                                                             sc_conv_epi e) {
  const int groups = channels / V, width = groups < 256 ? groups : 256, per = 256 / width;
  const int sub = threadIdx.x / width;
  if (sub >= per) return;
  for (int g = threadIdx.x % width; g < groups; g += width) {
    const int c = g * V;
    const sc_conv_epi_channel c0(e, c), c1(e, V == 4 ? c + 1 : c), c2(e, V == 4 ? c + 2 : c), c3(e, V == 4 ? c + 3 : c);
    for (int64_t r = (int64_t)blockIdx.x * per + sub; r < rows; r += (int64_t)gridDim.x * per) {
      float* p = y + r * channels + c;
      if (V == 4) {
        float4 v = *reinterpret_cast<float4*>(p);
        v.x = c0.apply(e, v.x);
        v.y = c1.apply(e, v.y);
        v.z = c2.apply(e, v.z);
        v.w = c3.apply(e, v.w);
        *reinterpret_cast<float4*>(p) = v;
      } else {
        *p = c0.apply(e, *p);
      }
    }
  }
}

// The epilogue as its own pass over the convolution's output, where no kernel applied it.
static int sc_conv_epilogue(const sc_conv_shape* s, float* y, const sc_conv_epi* e, cudaStream_t stream);

// The generated alternative to cuDNN for one shape (the direct kernel, or a pointwise
// convolution's cuBLASLt GEMM), or nullptr where none applies. It applies the epilogue `e`
// (null: none).
typedef int (*sc_direct_fn)(const sc_conv_shape*, const float*, const float*, float*, const sc_conv_epi*,
                            cudaStream_t);

struct sc_conv {
  bool ready = false;
  cudnnTensorDescriptor_t in = nullptr, out = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  int algo = 0;
  size_t workspace = 0;
  sc_conv_engine* engine = nullptr;  // set where a backend engine measured faster than `algo`
  sc_conv_x3* x3 = nullptr;  // set when the job allows TF32 and that form measured faster
  sc_direct_fn direct = nullptr;  // the generated alternative, where it measured faster than cuDNN or cuDNN could not
  int images = 0;                 // per cuDNN call: the batch, or a part of it (sc_conv_images)
  // cuDNN's fused bias-activation form of the epilogue (sc_conv_fused_run), where it measured
  // faster than the convolution and the epilogue's pass: its descriptors, workspace, and room for
  // the folded weights and per-channel bias.
  bool fused = false;
  cudnnTensorDescriptor_t bias = nullptr;
  cudnnActivationDescriptor_t act = nullptr;
  size_t fused_workspace = 0;
  float* folded = nullptr;
};

// `split` > 1: the groups run as that many calls, each on its slice of the whole tensors, all on
// the caller's stream. cuDNN's own grouped convolution ran its groups on internal streams (seen
// on an H100 for 32 groups of 8 channels), which the verifier cannot tell from side-stream work;
// depthwise convolutions (one channel per group) did not and keep cuDNN's grouping.
struct sc_conv_shape {
  int nd;  // tensor rank as cuDNN sees it (4 or 5)
  int in[5], w[5], out[5];
  int pad[3], stride[3], dilation[3];
  int groups;
  int transposed;
  int split;
  // The math types whose algorithms are measured: CUDNN_FMA_MATH twice (exact fp32), or, where
  // eager runs this convolution in TF32 (its cuDNN TF32 flag on), cuDNN's default math (as eager's
  // descriptor has it) and its tensor-op math (the math type cuDNN's tensor-core algorithms
  // report): written only in the shapes, so a candidate names TF32 math only where a call uses it.
  cudnnMathType_t math[2];
  // Input, output and filter are channels-last (NHWC / NDHWC, the filter KRSC): ConvCall::channelsLast.
  int channels_last;
};

// The strides of a dense tensor of `whole`, NCHW or, with `channels_last`, channels innermost.
template <typename Index>
static void sc_dense_strides(Index* strides, int nd, const int* whole, int channels_last) {
  if (channels_last) {
    strides[1] = 1;
    Index step = whole[1];
    for (int i = nd - 1; i > 1; --i) strides[i] = step, step *= whole[i];
    strides[0] = step;
  } else {
    strides[nd - 1] = 1;
    for (int i = nd - 1; i > 0; --i) strides[i - 1] = strides[i] * whole[i];
  }
}

// A descriptor of `dims` inside a dense tensor of `whole` (the same but for channels).
static int sc_tensor(cudnnTensorDescriptor_t* d, int nd, const int* dims, const int* whole, int channels_last) {
  int strides[5];
  sc_dense_strides(strides, nd, whole, channels_last);
  SC_DNN(cudnnCreateTensorDescriptor(d));
  SC_DNN(cudnnSetTensorNdDescriptor(*d, CUDNN_DATA_FLOAT, nd, dims, strides));
  return 0;
}

static int64_t sc_elements(const int* dims, int from, int nd) {
  int64_t n = 1;
  for (int i = from; i < nd; ++i) n *= dims[i];
  return n;
}

static int sc_conv_epilogue(const sc_conv_shape* s, float* y, const sc_conv_epi* e, cudaStream_t stream) {
  if (!e) return 0;
  if (s->channels_last) {
    const int channels = s->out[1], v = channels % 4 == 0 ? 4 : 1;
    const int groups = channels / v, per = groups < 256 ? 256 / groups : 1;
    const int64_t rows = sc_elements(s->out, 0, s->nd) / channels, blocks = (rows + per - 1) / per;
    const unsigned grid = (unsigned)(blocks < 65536 ? blocks : 65536);
    if (v == 4) sc_conv_epi_pass_nhwc<4><<<grid, 256, 0, stream>>>(y, rows, channels, *e);
    else sc_conv_epi_pass_nhwc<1><<<grid, 256, 0, stream>>>(y, rows, channels, *e);
    return (int)cudaGetLastError();
  }
  const int64_t plane = sc_elements(s->out, 2, s->nd), planes = sc_elements(s->out, 0, 2);
  const int v = plane % 4 == 0 ? 4 : 1;
  const int per_plane = (int)((plane / v + 255) / 256);
  const unsigned grid = (unsigned)(planes * per_plane);
  if (v == 4) sc_conv_epi_pass<4><<<grid, 256, 0, stream>>>(y, plane, per_plane, s->out[1], *e);
  else sc_conv_epi_pass<1><<<grid, 256, 0, stream>>>(y, plane, per_plane, s->out[1], *e);
  return (int)cudaGetLastError();
}

// One convolution (a call per part of the batch and group slice) with `desc`, blending into y with
// `beta` (0: overwrite).
static int sc_conv_run(sc_conv* c, const sc_conv_shape* s, cudnnConvolutionDescriptor_t desc, int algo,
                       size_t workspace, float beta, const float* x, const float* w, float* y, cudaStream_t stream) {
  const float one = 1.0f;
  SC_DNN(cudnnSetStream(sc_dnn, stream));
  const int64_t in_step = s->in[1] / s->split * sc_elements(s->in, 2, s->nd);
  const int64_t out_step = s->out[1] / s->split * sc_elements(s->out, 2, s->nd);
  const int64_t w_step = sc_elements(s->w, 0, s->nd) / s->split;
  const int64_t in_image = sc_elements(s->in, 1, s->nd), out_image = sc_elements(s->out, 1, s->nd);
  for (int64_t n = 0; n < s->in[0]; n += c->images)
    for (int g = 0; g < s->split; ++g) {
      const float* xg = x + n * in_image + g * in_step;
      const float* wg = w + g * w_step;
      float* yg = y + n * out_image + g * out_step;
      if (s->transposed)
        SC_DNN(cudnnConvolutionBackwardData(sc_dnn, &one, c->w, wg, c->in, xg, desc,
                                            (cudnnConvolutionBwdDataAlgo_t)algo, sc_workspace, workspace, &beta,
                                            c->out, yg));
      else
        SC_DNN(cudnnConvolutionForward(sc_dnn, &one, c->in, xg, c->w, wg, desc, (cudnnConvolutionFwdAlgo_t)algo,
                                       sc_workspace, workspace, &beta, c->out, yg));
    }
  return 0;
}

// An inference batch norm is affine per channel, so the whole epilogue is act(a[c] * v + b[c]):
// cuDNN's fused call computes act(conv(x, w') + b) with w' = w * a[c], folded here on every call
// (the weights and statistics are the forward's inputs). One thread per weight; the first of each
// channel also writes b[c].
__global__ void sc_conv_fold(const float* __restrict__ w, float* __restrict__ wf, float* __restrict__ bf,
                             int64_t per_channel, int64_t n, sc_conv_epi e) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int c = (int)(i / per_channel);
  const sc_conv_epi_channel ch(e, c);
  wf[i] = w[i] * (e.mean ? ch.invstd * ch.scale : 1.0f);
  if (i % per_channel == 0) bf[c] = e.mean ? ((ch.bias - ch.mean) * ch.invstd) * ch.scale + ch.shift : ch.bias;
}

// The convolution with its epilogue in one cuDNN call (cudnnConvolutionBiasActivationForward,
// which takes a ReLU only with the precomputed implicit GEMM), after the fold.
static int sc_conv_fused_run(sc_conv* c, const sc_conv_shape* s, const float* x, const float* w, float* y,
                             const sc_conv_epi* e, cudaStream_t stream) {
  const int64_t n = sc_elements(s->w, 0, s->nd);
  float *wf = c->folded, *bf = c->folded + n;
  sc_conv_fold<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(w, wf, bf, sc_elements(s->w, 1, s->nd), n, *e);
  const float one = 1.0f, zero = 0.0f;
  SC_DNN(cudnnSetStream(sc_dnn, stream));
  SC_DNN(cudnnConvolutionBiasActivationForward(sc_dnn, &one, c->in, x, c->w, wf, c->conv,
                                               CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, sc_workspace,
                                               c->fused_workspace, &zero, c->out, y, c->bias, bf, c->act, c->out, y));
  return (int)cudaGetLastError();
}

// Frees what the fused bias-activation form holds (its descriptors and folded weights).
static void sc_conv_fused_release(sc_conv* c) {
  if (c->folded) cudaFree(c->folded);
  if (c->bias) cudnnDestroyTensorDescriptor(c->bias);
  if (c->act) cudnnDestroyActivationDescriptor(c->act);
  c->folded = nullptr, c->bias = nullptr, c->act = nullptr;
}

// Keeps the fused form where it measures faster than `*ms` (updated), for a forward convolution
// in one call (no group split) with an epilogue.
static void sc_conv_fused_try(sc_conv* c, const sc_conv_shape* s, const float* x, const float* w, float* y,
                              const sc_conv_epi* e, float* ms, cudaStream_t stream) {
  int dims[5] = {1, s->out[1], 1, 1, 1}, strides[5] = {s->out[1], 1, 1, 1, 1};
  size_t need = 0;
  const bool ready =
      cudnnCreateTensorDescriptor(&c->bias) == CUDNN_STATUS_SUCCESS &&
      cudnnSetTensorNdDescriptor(c->bias, CUDNN_DATA_FLOAT, s->nd, dims, strides) == CUDNN_STATUS_SUCCESS &&
      cudnnCreateActivationDescriptor(&c->act) == CUDNN_STATUS_SUCCESS &&
      cudnnSetActivationDescriptor(c->act, e->relu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY,
                                   CUDNN_NOT_PROPAGATE_NAN, 0.0) == CUDNN_STATUS_SUCCESS &&
      cudnnGetConvolutionForwardWorkspaceSize(sc_dnn, c->in, c->w, c->conv, c->out,
                                              CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
                                              &need) == CUDNN_STATUS_SUCCESS &&
      need <= sc_workspace_limit() && sc_reserve_workspace(need) == 0 &&
      cudaMalloc(&c->folded, (sc_elements(s->w, 0, s->nd) + s->out[1]) * sizeof(float)) == cudaSuccess;
  if (ready) {
    c->fused_workspace = need;
    const float t = sc_median_ms([&] { return sc_conv_fused_run(c, s, x, w, y, e, stream); }, stream);
    if (t >= 0.0f && t < *ms) {
      c->fused = true;
      *ms = t;
      return;
    }
  }
  sc_conv_fused_release(c);
  cudaGetLastError();
}
