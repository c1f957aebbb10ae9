// A stack of recurrent layers (RnnCall in LibraryCall.h) through cuDNN's v8 RNN API, configured as
// PyTorch's _cudnn_rnn configures it (aten/src/ATen/native/cudnn/RNN.cpp and cudnn/Descriptors.h):
// double bias, linear input, fp32 data and math precision, projection size = hidden size, a
// no-dropout descriptor, padded I/O with every sequence full length, sequence-major data,
// [layers * directions, batch, hidden] states. PyTorch's flat parameter buffer is then in the
// layout cuDNN expects, which the first call checks pointer by pointer. Descriptors, the checks and
// the workspace are made on the first call; each call after is one cudnnRNNForward.
#pragma once
#include "Dnn.cuh"
// stitch-embed: a generated program holds what follows this line (README.md).

#include <vector>

struct sc_rnn_shape {
  cudnnRNNMode_t mode;
  int seq, batch, input, hidden, layers, dirs;
  long long weight_elements;  // the parameters' flat buffer
  cudnnRNNAlgo_t algo;        // as PyTorch's get_algo picks it
  cudnnMathType_t math;       // DEFAULT (TF32 allowed) or FMA, as eager's cudnn.allow_tf32
};

struct sc_rnn {
  bool ready = false;
  cudnnRNNDescriptor_t rnn = nullptr;
  cudnnDropoutDescriptor_t dropout = nullptr;
  cudnnRNNDataDescriptor_t x = nullptr, y = nullptr;
  cudnnTensorDescriptor_t h = nullptr, matrix = nullptr, bias = nullptr;
  size_t weight_bytes = 0, workspace = 0;
};

static int sc_rnn_data(cudnnRNNDataDescriptor_t* d, const sc_rnn_shape* s, int vector) {
  SC_DNN(cudnnCreateRNNDataDescriptor(d));
  std::vector<int> lengths(s->batch, s->seq);
  SC_DNN(cudnnSetRNNDataDescriptor(*d, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, s->seq, s->batch,
                                   vector, lengths.data(), nullptr));
  return 0;
}

static int sc_rnn_descriptors(sc_rnn* r, const sc_rnn_shape* s) {
  SC_DNN(cudnnCreateDropoutDescriptor(&r->dropout));
  SC_DNN(cudnnSetDropoutDescriptor(r->dropout, sc_dnn, 0.0f, nullptr, 0, 0));
  SC_DNN(cudnnCreateRNNDescriptor(&r->rnn));
  SC_DNN(cudnnSetRNNDescriptor_v8(r->rnn, s->algo, s->mode, CUDNN_RNN_DOUBLE_BIAS,
                                  s->dirs == 2 ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT,
                                  CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, s->math, s->input, s->hidden, s->hidden,
                                  s->layers, r->dropout, CUDNN_RNN_PADDED_IO_ENABLED));
  int st;
  if ((st = sc_rnn_data(&r->x, s, s->input)) != 0 || (st = sc_rnn_data(&r->y, s, s->dirs * s->hidden)) != 0) return st;
  const int dims[3] = {s->layers * s->dirs, s->batch, s->hidden}, strides[3] = {s->batch * s->hidden, s->hidden, 1};
  SC_DNN(cudnnCreateTensorDescriptor(&r->h));
  SC_DNN(cudnnSetTensorNdDescriptor(r->h, CUDNN_DATA_FLOAT, 3, dims, strides));
  SC_DNN(cudnnCreateTensorDescriptor(&r->matrix));
  SC_DNN(cudnnCreateTensorDescriptor(&r->bias));
  return 0;
}

// Each parameter is where cuDNN expects it in the flat buffer, as PyTorch's try_get_weight_buf
// checks before it passes the buffer (get_expected_data_ptrs): per pseudo-layer the input and the
// recurrent matrix (linear layers 0 and gates), then their biases, in the order w_ih, w_hh, b_ih,
// b_hh. ModelNew's parameters are such views once nn.RNNBase has flattened them (on .to(device));
// separate tensors would leave cuDNN reading past the first one.
static int sc_rnn_check_weights(sc_rnn* r, const sc_rnn_shape* s, const float* const* w) {
  if (r->weight_bytes != (size_t)s->weight_elements * sizeof(float)) {
    fprintf(stderr, "cuDNN RNN: the parameters' flat buffer holds %lld floats; cuDNN's weight space is %zu bytes\n",
            s->weight_elements, r->weight_bytes);
    return 20000 + (int)CUDNN_STATUS_BAD_PARAM;
  }
  const int gates = s->mode == CUDNN_LSTM ? 4 : s->mode == CUDNN_GRU ? 3 : 1;
  for (int layer = 0; layer < s->layers * s->dirs; ++layer)
    for (int k = 0; k < 2; ++k) {
      void *m = nullptr, *b = nullptr;
      SC_DNN(cudnnGetRNNWeightParams(sc_dnn, r->rnn, layer, r->weight_bytes, w[0], k * gates, r->matrix, &m, r->bias, &b));
      if (m != (const void*)w[4 * layer + k] || b != (const void*)w[4 * layer + 2 + k]) {
        fprintf(stderr, "cuDNN RNN: parameter %d of pseudo-layer %d is not where cuDNN expects it in the flat buffer "
                "(the RNN's parameters must be one flattened buffer)\n", k, layer);
        return 20000 + (int)CUDNN_STATUS_BAD_PARAM;
      }
    }
  return 0;
}

static int sc_rnn_prepare(sc_rnn* r, const sc_rnn_shape* s, const float* const* w) {
  if (!sc_dnn) SC_DNN(cudnnCreate(&sc_dnn));
  int st;
  if ((st = sc_rnn_descriptors(r, s)) != 0) return st;
  SC_DNN(cudnnGetRNNWeightSpaceSize(sc_dnn, r->rnn, &r->weight_bytes));
  if ((st = sc_rnn_check_weights(r, s, w)) != 0) return st;
  SC_DNN(cudnnGetRNNTempSpaceSizes(sc_dnn, r->rnn, CUDNN_FWD_MODE_INFERENCE, r->x, &r->workspace, nullptr));
  if ((st = sc_reserve_workspace(r->workspace)) != 0) return st;
  r->ready = true;
  return 0;
}

// Inference mode: the output equals training's with no dropout drawn, and no reserve space is
// written. The sequence lengths live in the data descriptors (PyTorch passes no device copy).
static int sc_rnn_launch(sc_rnn* r, const sc_rnn_shape* s, const float* x, const float* hx, const float* cx,
                         const float* const* w, float* y, float* hy, float* cy, cudaStream_t stream) {
  int st;
  if (!r->ready && (st = sc_rnn_prepare(r, s, w)) != 0) return st;
  SC_DNN(cudnnSetStream(sc_dnn, stream));
  SC_DNN(cudnnRNNForward(sc_dnn, r->rnn, CUDNN_FWD_MODE_INFERENCE, nullptr, r->x, x, r->y, y, r->h, hx, hy, r->h, cx, cy,
                         r->weight_bytes, w[0], r->workspace, sc_workspace, 0, nullptr));
  return 0;
}
