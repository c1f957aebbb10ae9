// A heavy operator that runs through a library (design §8): a GEMM through cuBLASLt, with the
// scaling, bias and activation that follow it folded into cuBLASLt's epilogue where the library
// has one, a convolution (plain or transposed, 1-D to 3-D, strided, dilated, grouped) through
// cuDNN, or a stack of recurrent layers (nn.LSTM, nn.GRU, nn.RNN) through cuDNN's RNN API.
// Matching reads the captured strides, so transposed weights (linear's `t`) and batched views need
// no copy.
#pragma once

#include "agents/ir/GraphIR.h"
#include "profiling/ComputeFloor.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stitch::agents::builtin {

// A [rows, cols] matrix (or a batch of them) inside an ABI tensor.
struct MatrixOperand {
  std::string tensorId;  // the tensor the ABI passes (root of the view chain)
  int64_t offset = 0;    // elements from its data pointer
  int64_t rowStride = 0, colStride = 1, batchStride = 0;
  bool operator==(const MatrixOperand&) const = default;
};

// The activation a GEMM's epilogue applies (cuBLASLt's GELU is the tanh form).
enum class GemmActivation { None, Relu, GeluTanh };

struct GemmCall {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  MatrixOperand a, b;  // out[m, n] = alpha * a[m, k] @ b[k, n] (+ bias[n]), then the activation
  double alpha = 1.0;
  std::optional<MatrixOperand> bias;  // a [n] vector broadcast over rows
  GemmActivation activation = GemmActivation::None;
  std::string output;                 // written contiguous [batch, m, n]
  // Computes in TF32 on tensor cores (CUBLAS_COMPUTE_32F_FAST_TF32), as eager runs its matmuls
  // while torch.backends.cuda.matmul.allow_tf32 is on; else exact fp32.
  bool tf32 = false;
  // The batch as a run-time parameter (RuntimeRows.h): `m` or `batch` is this many times the rows
  // a call is given; 0 where fixed.
  int64_t mPerRow = 0, batchPerRow = 0;
  bool operator==(const GemmCall&) const = default;
};

// The elementwise tail folded into a forward convolution: per output channel, the split-off
// bias, an inference batch norm and a ReLU, each optional, in that order and in the arithmetic of
// the generated kernel it replaces. The direct kernel applies it as it stores; cuDNN's fused
// bias-activation call takes it (the batch norm folded into the weights and bias) where that
// measures faster; else it is one in-place pass after the convolution, what the generated tail
// kernel would have cost.
struct ConvEpilogue {
  std::string bias;                        // [C] ABI tensor, or ""
  std::string mean, var, scale, shift;     // batch norm: mean and var together; scale, shift optional
  double eps = 1e-5;
  bool relu = false;
  bool empty() const { return bias.empty() && mean.empty() && !relu; }
  std::vector<std::string> reads() const;
  bool operator==(const ConvEpilogue&) const = default;
};

struct ConvCall {
  bool transposed = false;
  std::string input, weight, output;  // ABI tensors; input and weight are read contiguous, or all channels-last
  int64_t inputOffset = 0, weightOffset = 0;
  std::vector<int64_t> inShape, weightShape, outShape;  // N, C, spatial... as PyTorch has them
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups = 1;
  ConvEpilogue epilogue;
  // cuDNN may use TF32 tensor cores (its default and tensor-op math types, each measured), as
  // eager runs its convolutions while torch.backends.cudnn.allow_tf32 is on; else FMA math, exact
  // fp32. The generated alternatives (direct kernels, a pointwise convolution's GEMM) are fp32
  // either way.
  bool tf32 = false;
  // The batch as a run-time parameter (RuntimeRows.h): N (inShape[0], outShape[0]) is this many
  // times the rows a call is given; 0 where fixed.
  int64_t nPerRow = 0;
  // Input, output and filter are channels-last (NHWC / NDHWC; the filter KRSC), as the layout pass
  // chose (MemoryFormat.h): cuDNN is told so, and the NCHW alternatives (the direct kernel, the
  // pointwise GEMM) are not measured.
  bool channelsLast = false;
  bool operator==(const ConvCall&) const = default;
};

// nn.LSTM / nn.GRU / nn.RNN as PyTorch runs them on a GPU: `aten::_cudnn_rnn` over the
// parameters' one flat buffer, configured as PyTorch configures cuDNN (so that buffer is in the
// layout cuDNN expects). Sequence-major: GraphNormalize turns a batch_first call into a
// transposed copy of the input, a sequence-major call and a transposed view of its output, as
// _cudnn_rnn itself does.
struct RnnCall {
  int mode = 2;  // cudnnRNNMode_t, as _cudnn_rnn's `mode`: 0 RNN_RELU, 1 RNN_TANH, 2 LSTM, 3 GRU
  int64_t seqLength = 0, batch = 0, inputSize = 0, hiddenSize = 0, layers = 1, directions = 1;
  // ABI tensors, read contiguous: x [T, N, I], hx and cx [layers * directions, N, H] (cx "" but
  // for an LSTM); their element offsets.
  std::string input, hx, cx;
  int64_t inputOffset = 0, hxOffset = 0, cxOffset = 0;
  // The parameters (w_ih, w_hh, b_ih, b_hh per layer and direction), views into one flat buffer of
  // `weightElements` floats that starts at the first one's pointer; the first call checks each
  // pointer against where cuDNN expects that matrix or bias.
  std::vector<std::string> weights;
  int64_t weightElements = 0;
  std::string output, hy, cy;  // written contiguous: [T, N, directions * H], hy and cy as hx (cy "" but for an LSTM)
  // cuDNN's default math (TF32 tensor cores allowed), as eager runs its RNNs while
  // torch.backends.cudnn.allow_tf32 is on; else FMA math, exact fp32.
  bool tf32 = false;
  // cuDNN's algorithm as PyTorch picks it (get_algo): the persistent small-hidden kernel for
  // unpacked fp32 inputs with small hidden sizes, else the standard one.
  bool persistSmallH() const;
  const char* modeName() const;
  bool operator==(const RnnCall&) const = default;
};

// Why a library call runs in its precision, for the plan's technique (LibraryCall::describe).
enum class PrecisionWhy {
  Unstated,  // no reason given (eager's flags unknown): exact fp32
  Eager,     // as eager runs the operator (the reference's torch.backends flags)
  JobFp32,   // the job asks for exact fp32 (--precision fp32)
};

struct LibraryCall {
  enum class Kind { Gemm, Conv, Rnn };
  Kind kind = Kind::Gemm;
  GemmCall gemm;
  ConvCall conv;
  RnnCall rnn;
  std::vector<int> nodeIds;  // the anchor and the epilogue nodes folded into it
  PrecisionWhy precisionWhy = PrecisionWhy::Unstated;
  bool operator==(const LibraryCall&) const = default;
  bool tf32() const { return kind == Kind::Gemm ? gemm.tf32 : kind == Kind::Conv ? conv.tf32 : rnn.tf32; }
  void setTf32(bool on) { gemm.tf32 = conv.tf32 = rnn.tf32 = on; }

  std::vector<std::string> reads() const;
  // The tensor an epilogue would replace (an RNN's `output`), and every tensor the call writes.
  std::string output() const;
  std::vector<std::string> outputs() const;
  double flops() const;
  // Its math for the compute floor: the units it may run on (TF32 tensor cores where tf32(); the
  // 3xTF32 form where `tensorCores`, the job allowing TF32, and it is an exact-fp32 GEMM or
  // convolution) and, for a convolution cuDNN may run as Winograd in fp32, the fewest products.
  profiling::LibraryMath math(bool tensorCores) const;
  // "cuBLASLt GEMM 4096x1024x512, bias + relu epilogue, exact fp32, as eager runs this matmul
  // (cuda.matmul.allow_tf32 off), ...": the call, its epilogue, its precision and why.
  std::string describe() const;
  // ", TF32 tensor cores, as eager runs this convolution (cudnn.allow_tf32)": describe()'s part.
  std::string precisionText() const;
};

// The channel tile of the direct convolution kernel the first call measures against cuDNN's
// fastest algorithm, or 0 where it does not apply: forward 1-D and 2-D convolutions whose outputs
// sum at most 512 products each (the tile's weights then fit 32 KiB of shared memory), with a grid
// within CUDA's limits.
int directConvTile(const ConvCall& c);

// Whether a convolution is a batched GEMM over pixels that the first call measures through
// cuBLASLt against cuDNN's fastest algorithm: forward, 1x1 window, stride 1, no padding, one
// group, operands at the start of their tensors (cuBLASLt's kernels assume aligned pointers).
// Such a convolution takes that GEMM instead of the direct kernel.
bool pointwiseGemm(const ConvCall& c);

// The channel tile of the direct gather kernel for a transposed convolution, or 0 where it does
// not apply: NCHW, 1-D and 2-D, dilation 1, windows and strides up to 8, with the weights of one stride
// phase for the tile within 32 KiB of shared memory and a grid within CUDA's limits.
int directDeconvTile(const ConvCall& c);

// The anchors of library calls: the registry's (mm, bmm, convolution; ops::LibraryKind) and
// _cudnn_rnn (after normalizeGraph, addmm/baddbmm are mm/bmm plus explicit nodes).
bool isLibraryOp(const std::string& op);
// Any of ATen's batch norm forms, which a convolution's epilogue folds in inference mode; the
// forms that never train, whatever their arguments (the registry's ops::BatchNorm::inference).
bool isBatchNorm(const std::string& op);
bool inferenceOnlyBatchNorm(const std::string& op);
// Says why when the operands do not fit (a dtype, a layout neither row- nor column-major, ...).
Outcome<LibraryCall> matchLibraryCall(const Graph& graph, const Node& node);
// Folds `node` into the call's epilogue when the call can apply it there and it reads the call's
// output (an RNN takes none). A GEMM's is cuBLASLt's: a scalar multiply (alpha, before anything else), a
// row-broadcast bias add, then ReLU or tanh-GELU (cuBLASLt's GELU is the tanh form, so erf-GELU
// stays in a generated kernel). A forward convolution's is ConvEpilogue. The caller makes sure
// nothing else reads the output being replaced.
bool foldEpilogue(LibraryCall& call, const Graph& graph, const Node& node);

}  // namespace stitch::agents::builtin
