// Convolutions through cuDNN, last part: every algorithm timed on the first call against the
// generated alternative, the batch run in parts where cuDNN's 32-bit tensors need it, and the
// launch each later call makes.
#pragma once
#include "ConvDirect.cuh"
// stitch-embed: a generated program holds what follows this line (README.md).

static int sc_conv_x3_try(sc_conv* c, const sc_conv_shape* s, const float* x, const float* w, float* y,
                          const sc_conv_epi* e, cudaStream_t stream);
static int sc_conv_fp32(sc_conv* c, const sc_conv_shape* s, const float* x, const float* w, float* y,
                        const sc_conv_epi* e, cudaStream_t stream);
static int sc_conv_x3_run(sc_conv* c, const sc_conv_shape* s, const float* x, const float* w, float* y,
                          cudaStream_t stream);
static void sc_conv_x3_release(sc_conv_x3* t);
static void sc_conv_release(sc_conv* c);

static int sc_conv_desc(cudnnConvolutionDescriptor_t* d, const sc_conv_shape* s, cudnnMathType_t math) {
  SC_DNN(cudnnCreateConvolutionDescriptor(d));
  SC_DNN(cudnnSetConvolutionNdDescriptor(*d, s->nd - 2, s->pad, s->stride, s->dilation, CUDNN_CROSS_CORRELATION,
                                         CUDNN_DATA_FLOAT));
  SC_DNN(cudnnSetConvolutionGroupCount(*d, s->groups / s->split));
  SC_DNN(cudnnSetConvolutionMathType(*d, math));
  return 0;
}

// Every algorithm cuDNN has for this convolution in `desc`'s math type, each timed by our own
// median of 5 runs on these buffers; the fastest is kept (into `*ms` where given). Find's ranking
// is not used: its pick for a 1x1 convolution ran 1.6x slower (314 against 196 µs) than the
// kernel eager's cuDNN chose for the same shape (93, H100), and timing Find's list again kept
// that pick: the faster algorithm was not on the list. The FFT algorithms are left out: they
// fork onto cuDNN's own streams (a captured graph then runs them as parallel branches), which
// the verifier cannot tell from side-stream work (seen on an H100: a ResNet block's 3x3
// convolutions). Workspace up to sc_workspace_limit(). False if none ran.
static bool sc_conv_choose(sc_conv* c, const sc_conv_shape* s, cudnnConvolutionDescriptor_t desc, const float* x,
                           const float* w, float* y, int* algo, size_t* workspace, float* ms, cudaStream_t stream) {
  static const int forward[] = {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
                                CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
                                CUDNN_CONVOLUTION_FWD_ALGO_GEMM,
                                CUDNN_CONVOLUTION_FWD_ALGO_DIRECT,
                                CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD,
                                CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED};
  static const int backward[] = {CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1,
                                 CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD,
                                 CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED};
  const int* algos = s->transposed ? backward : forward;
  const int count = s->transposed ? 4 : 6;
  const size_t limit = sc_workspace_limit();
  float best_ms = -1.0f;
  for (int i = 0; i < count; ++i) {
    size_t need = 0;
    const cudnnStatus_t st =
        s->transposed ? cudnnGetConvolutionBackwardDataWorkspaceSize(sc_dnn, c->w, c->in, desc, c->out,
                                                                     (cudnnConvolutionBwdDataAlgo_t)algos[i], &need)
                      : cudnnGetConvolutionForwardWorkspaceSize(sc_dnn, c->in, c->w, desc, c->out,
                                                                (cudnnConvolutionFwdAlgo_t)algos[i], &need);
    if (st != CUDNN_STATUS_SUCCESS || need > limit || sc_reserve_workspace(need) != 0) continue;
    const float t =
        sc_median_ms([&] { return sc_conv_run(c, s, desc, algos[i], need, 0.0f, x, w, y, stream); }, stream);
    if (t >= 0.0f && (best_ms < 0.0f || t < best_ms)) best_ms = t, *algo = algos[i], *workspace = need;
  }
  cudaGetLastError();
  if (best_ms < 0.0f) return false;
  if (ms) *ms = best_ms;
  return true;
}

// How many images one cuDNN call takes: cuDNN refuses a tensor of 2^31 elements or more, so a
// larger batch runs as calls of the largest divisor of N that keeps each within 2^28 elements, as
// PyTorch splits it (split_batch_dim_to_32bit_out); 0 where one image is too large already.
static int sc_conv_images(const sc_conv_shape* s) {
  const int64_t in = sc_elements(s->in, 1, s->nd), out = sc_elements(s->out, 1, s->nd);
  const int64_t image = in > out ? in : out, most = (int64_t)1 << 28, int_max = 0x7fffffff;
  if (image > int_max) return 0;
  if (image * s->in[0] <= int_max) return s->in[0];
  int images = (int)(most / image > 1 ? most / image : 1);
  while (s->in[0] % images) --images;
  return images;
}

// cuDNN's descriptors and its fastest algorithm, with its time in `*dnn_ms`; a cuDNN status where
// it cannot run the convolution here (a tensor it refuses, no algorithm that ran within the
// workspace limit). The math type is the shape's, eager's precision for this convolution: FMA math
// keeps fp32 exact (cuDNN would otherwise use TF32 tensor cores for fp32 data); where eager runs
// it in TF32, every algorithm is measured in the default and in the tensor-op math type and the
// fastest pair kept.
static int sc_conv_dnn_prepare(sc_conv* c, const sc_conv_shape* s, const float* x, const float* w, float* y,
                               float* dnn_ms, cudaStream_t stream) {
  SC_DNN(cudnnSetStream(sc_dnn, stream));
  if (!(c->images = sc_conv_images(s))) {
    fprintf(stderr, "cuDNN: one image of this convolution holds more than 2^31 - 1 elements\n");
    return 20000 + (int)CUDNN_STATUS_NOT_SUPPORTED;
  }
  int in_slice[5], out_slice[5], w_slice[5];  // one call's: images, channels (filter rows) divided by `split`
  for (int i = 0; i < s->nd; ++i) in_slice[i] = s->in[i], out_slice[i] = s->out[i], w_slice[i] = s->w[i];
  in_slice[0] = out_slice[0] = c->images;
  in_slice[1] /= s->split;
  out_slice[1] /= s->split;
  w_slice[0] /= s->split;
  int st;
  if ((st = sc_tensor(&c->in, s->nd, in_slice, s->in, s->channels_last)) != 0 ||
      (st = sc_tensor(&c->out, s->nd, out_slice, s->out, s->channels_last)) != 0)
    return st;
  SC_DNN(cudnnCreateFilterDescriptor(&c->w));
  SC_DNN(cudnnSetFilterNdDescriptor(c->w, CUDNN_DATA_FLOAT, s->channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                    s->nd, w_slice));
  if ((st = sc_conv_desc(&c->conv, s, s->math[0])) != 0) return st;
  bool found = sc_conv_choose(c, s, c->conv, x, w, y, &c->algo, &c->workspace, dnn_ms, stream);
  if (s->math[1] != s->math[0]) {
    cudnnConvolutionDescriptor_t other = nullptr;
    int algo = 0;
    size_t workspace = 0;
    float ms = 0.0f;
    if (sc_conv_desc(&other, s, s->math[1]) == 0 &&
        sc_conv_choose(c, s, other, x, w, y, &algo, &workspace, &ms, stream) && (!found || ms < *dnn_ms)) {
      cudnnDestroyConvolutionDescriptor(c->conv);
      c->conv = other, c->algo = algo, c->workspace = workspace, *dnn_ms = ms, found = true;
    } else if (other) {
      cudnnDestroyConvolutionDescriptor(other);
    }
    cudaGetLastError();
  }
  // The backend's engines for the whole batch in one call: where one beats the legacy algorithm
  // (or none of those ran), later calls run it.
  if (s->split == 1 && c->images == s->in[0]) {
    float ms = found ? *dnn_ms : 3.0e38f;
    if ((c->engine = sc_conv_engine_choose(s, x, w, y, &ms, stream)) != nullptr) *dnn_ms = ms, found = true;
  }
  if (!found) {
    fprintf(stderr, "cuDNN: no algorithm for this convolution in its math type (%s) ran within the workspace limit\n",
            s->math[0] == CUDNN_FMA_MATH ? "FMA, exact fp32" : "TF32 allowed");
    return 20000 + (int)CUDNN_STATUS_NOT_SUPPORTED;
  }
  return 0;
}

// The algorithm by measurement, falling back in order where cuDNN cannot run the convolution: the
// generated alternative (the direct kernel, or a pointwise convolution's cuBLASLt GEMM) alone,
// where there is one and it runs; else cuDNN's status, which the launcher returns tagged with its
// step (sc_step_status) so that the refine step leaves this convolution to PyTorch. An epilogue
// runs as its own pass after cuDNN's fastest or, where that measures faster, in cuDNN's fused
// bias-activation call; the generated alternative (the direct kernel, which applies the epilogue
// as it stores, or the pointwise GEMM and the epilogue's pass) is timed against the faster of the
// two (those are fp32 whatever cuDNN's math). Where the job allows TF32 and cuDNN's math is FMA,
// the 3xTF32 form is measured next and kept only if faster.
static int sc_conv_prepare(sc_conv* c, const sc_conv_shape* s, const float* x, const float* w, float* y,
                           const sc_conv_epi* e, sc_direct_fn direct, cudaStream_t stream) {
  if (!sc_dnn) SC_DNN(cudnnCreate(&sc_dnn));
  float dnn_ms = 0.0f;  // cuDNN's time for the algorithm chosen
  const int st = sc_conv_dnn_prepare(c, s, x, w, y, &dnn_ms, stream);
  if (st != 0) {
    cudaGetLastError();
    const int alone = direct ? direct(s, x, w, y, e, stream) : st;
    if (alone != 0 || cudaStreamSynchronize(stream) != cudaSuccess) {
      cudaGetLastError();
      fprintf(stderr, "cuDNN cannot run this convolution here (status %d)%s\n", st - 20000,
              direct ? ", nor could its generated form" : " and it has no generated form");
      sc_conv_release(c);  // what cuDNN's try made; a later call prepares afresh
      return st;
    }
    fprintf(stderr, "cuDNN cannot run this convolution here (status %d): its generated form runs it\n", st - 20000);
    c->direct = direct;
    c->ready = true;
    return 0;
  }
  c->ready = true;
  if (e) {
    const float with_pass = sc_median_ms([&] { return sc_conv_fp32(c, s, x, w, y, e, stream); }, stream);
    if (with_pass >= 0.0f) dnn_ms = with_pass;
    if (!s->transposed && s->split == 1 && c->images == s->in[0]) sc_conv_fused_try(c, s, x, w, y, e, &dnn_ms, stream);
  }
  if (direct) {
    const float direct_ms = sc_median_ms([&] { return direct(s, x, w, y, e, stream); }, stream);
    if (direct_ms >= 0.0f && direct_ms < dnn_ms) c->direct = direct;
    cudaGetLastError();
  }
  // Already on TF32 tensor cores where cuDNN's math allows them (eager's precision): the 3xTF32
  // form would only be slower.
  if (s->math[0] != CUDNN_FMA_MATH) return 0;
  return sc_conv_x3_try(c, s, x, w, y, e, stream);
}

// The form chosen without the 3xTF32 split, epilogue included: the generated alternative, cuDNN's
// fused call, or cuDNN's algorithm and the epilogue's pass (cuDNN's in the shape's math: exact
// fp32, or TF32 where eager runs the convolution so).
static int sc_conv_fp32(sc_conv* c, const sc_conv_shape* s, const float* x, const float* w, float* y,
                        const sc_conv_epi* e, cudaStream_t stream) {
  if (c->direct) return c->direct(s, x, w, y, e, stream);
  if (c->fused) return sc_conv_fused_run(c, s, x, w, y, e, stream);
  const int st = c->engine && sc_conv_engine_fits(c->engine, x, w, y)
                     ? sc_conv_engine_run(c->engine, x, w, y, stream)
                     : sc_conv_run(c, s, c->conv, c->algo, c->workspace, 0.0f, x, w, y, stream);
  return st ? st : sc_conv_epilogue(s, y, e, stream);
}

static int sc_conv_launch(sc_conv* c, const sc_conv_shape* s, const float* x, const float* w, float* y,
                          const sc_conv_epi* e, sc_direct_fn direct, cudaStream_t stream) {
  if (!c->ready) {
    int st = sc_conv_prepare(c, s, x, w, y, e, direct, stream);
    if (st != 0) return st;
  }
  if (c->x3) {
    const int st = sc_conv_x3_run(c, s, x, w, y, stream);
    return st ? st : sc_conv_epilogue(s, y, e, stream);
  }
  return sc_conv_fp32(c, s, x, w, y, e, stream);
}

static void sc_conv_release(sc_conv* c) {
  if (c->in) cudnnDestroyTensorDescriptor(c->in);
  if (c->out) cudnnDestroyTensorDescriptor(c->out);
  if (c->w) cudnnDestroyFilterDescriptor(c->w);
  if (c->conv) cudnnDestroyConvolutionDescriptor(c->conv);
  sc_conv_fused_release(c);
  if (c->engine) sc_conv_engine_release(c->engine);
  if (c->x3) sc_conv_x3_release(c->x3);
  *c = sc_conv();
}

static sc_conv* sc_conv_for_rows(sc_per_rows<sc_conv>* r, int64_t rows) { return sc_for_rows(r, rows, sc_conv_release); }
