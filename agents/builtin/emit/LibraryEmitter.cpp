// Library launchers; see LibraryEmitter.h. The shared helpers live in the generated file's
// prelude (agents/builtin/cuda/*.cuh, embedded) so each call adds only its shapes and slots.
#include "agents/builtin/emit/LibraryEmitter.h"

#include "agents/builtin/cuda/EmbeddedCuda.h"

#include <sstream>

namespace stitch::agents::builtin {
namespace {

std::string ptr(const std::map<std::string, int>& slots, const std::string& id, int64_t offset, bool isConst) {
  return std::string("(") + (isConst ? "const float*" : "float*") + ")t[" + std::to_string(slots.at(id)) + "].data" +
         (offset ? " + " + std::to_string(offset) : "");
}

std::string ints(const std::vector<int64_t>& v, std::size_t n) {
  std::string s = "{";
  for (std::size_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(i < v.size() ? v[i] : 0);
  return s + "}";
}

}  // namespace

std::optional<std::size_t> libraryFailureStep(long long status) {
  const long long library = status % kStepStatus;
  if (status < kStepStatus || library < 10000 || library >= 30000) return std::nullopt;
  return static_cast<std::size_t>(status / kStepStatus - 1);
}

int groupCalls(const ConvCall& c) {
  return c.groups > 1 && c.groups < c.inShape[1] ? static_cast<int>(c.groups) : 1;
}

namespace {

// Shapes as cuDNN sees them: a 1-D convolution gets a unit height.
std::vector<int64_t> as2d(std::vector<int64_t> shape, bool oneD) {
  if (oneD) shape.insert(shape.begin() + 2, 1);
  return shape;
}
std::vector<int64_t> spatial2d(std::vector<int64_t> v, bool oneD, int64_t unit) {
  if (oneD) v.insert(v.begin(), unit);
  return v;
}

// The cuBLASLt epilogue that applies the call's bias and activation as the GEMM stores.
const char* gemmEpilogue(const GemmCall& g) {
  switch (g.activation) {
    case GemmActivation::Relu: return g.bias ? "CUBLASLT_EPILOGUE_RELU_BIAS" : "CUBLASLT_EPILOGUE_RELU";
    case GemmActivation::GeluTanh: return g.bias ? "CUBLASLT_EPILOGUE_GELU_BIAS" : "CUBLASLT_EPILOGUE_GELU";
    case GemmActivation::None: break;
  }
  return g.bias ? "CUBLASLT_EPILOGUE_BIAS" : "CUBLASLT_EPILOGUE_DEFAULT";
}

}  // namespace

std::string emitLibraryPrelude(bool gemm, bool conv, bool rnn, bool directDeconv, bool tensorCores) {
  if (!gemm && !conv && !rnn) return "";
  std::string s = "\n#define SC_STEP_STATUS " + std::to_string(kStepStatus) + cuda::kLibraryCommon;
  if (tensorCores && (gemm || conv)) s += cuda::kX3Common;  // the 3xTF32 forms are GEMMs' and convolutions'
  if (gemm) s += std::string(cuda::kGemm) + (tensorCores ? cuda::kGemmX3 : cuda::kGemmFp32Only);
  if (conv || rnn) s += cuda::kDnn;
  if (conv) {
    s += std::string(cuda::kConv) + cuda::kConvEngines + cuda::kConvDirect + cuda::kConvLaunch;
    if (directDeconv) s += cuda::kDeconvDirect;
    s += tensorCores ? cuda::kConvX3 : cuda::kConvFp32Only;
  }
  if (rnn) s += cuda::kRnn;
  return s;
}

namespace {

// The launcher of an RNN: its shape, and the parameters' pointers in PyTorch's order.
void emitRnn(std::ostringstream& o, const RnnCall& r, const std::string& name, const std::string& step,
             const std::map<std::string, int>& slots) {
  static const char* modes[] = {"CUDNN_RNN_RELU", "CUDNN_RNN_TANH", "CUDNN_LSTM", "CUDNN_GRU"};
  o << "static sc_rnn " << name << "_state;\n"
    << "static const sc_rnn_shape " << name << "_shape = {" << modes[r.mode] << ", " << r.seqLength << ", " << r.batch
    << ", " << r.inputSize << ", " << r.hiddenSize << ", " << r.layers << ", " << r.directions << ", " << r.weightElements
    << "LL, " << (r.persistSmallH() ? "CUDNN_RNN_ALGO_PERSIST_STATIC_SMALL_H" : "CUDNN_RNN_ALGO_STANDARD") << ", "
    << (r.tf32 ? "CUDNN_DEFAULT_MATH" : "CUDNN_FMA_MATH") << "};\n"
    << "static int launch_" << name << "(const StitchTensor* t, int64_t, cudaStream_t stream) {\n"
    << "  const float* const w[] = {";
  for (std::size_t i = 0; i < r.weights.size(); ++i) o << (i ? ", " : "") << ptr(slots, r.weights[i], 0, true);
  o << "};\n  return sc_step_status(sc_rnn_launch(&" << name << "_state, &" << name << "_shape, "
    << ptr(slots, r.input, r.inputOffset, true)
    << ", " << ptr(slots, r.hx, r.hxOffset, true) << ", "
    << (r.cx.empty() ? "nullptr" : ptr(slots, r.cx, r.cxOffset, true)) << ", w, " << ptr(slots, r.output, 0, false) << ", "
    << ptr(slots, r.hy, 0, false) << ", " << (r.cy.empty() ? "nullptr" : ptr(slots, r.cy, 0, false)) << ", stream), "
    << step << ");\n}\n";
}

// The launcher of a GEMM: its shape with the epilogue and compute type, and its operands' pointers.
void emitGemm(std::ostringstream& o, const GemmCall& g, const std::string& name, const std::string& step,
              const std::map<std::string, int>& slots) {
  const bool rows = g.mPerRow || g.batchPerRow;
  o << "static " << (rows ? "sc_per_rows<sc_gemm> " : "sc_gemm ") << name << "_state;\n"
    << "static const sc_gemm_shape " << name << "_shape = {" << g.batch << ", " << g.m << ", " << g.n << ", " << g.k
    << ", " << g.a.rowStride << ", " << g.a.colStride << ", " << g.a.batchStride << ", " << g.b.rowStride << ", "
    << g.b.colStride << ", " << g.b.batchStride << ", " << floatLiteral(g.alpha) << ", " << (g.bias ? 1 : 0) << ", "
    << gemmEpilogue(g) << ", "
    << (g.tf32 ? "CUBLAS_COMPUTE_32F_FAST_TF32" : "CUBLAS_COMPUTE_32F") << "};\n"
    << "static int launch_" << name << "(const StitchTensor* t, int64_t" << (rows ? " rows" : "")
    << ", cudaStream_t stream) {\n";
  if (rows) {
    o << "  sc_gemm_shape s = " << name << "_shape;\n";
    if (g.mPerRow) o << "  s.m = rows * " << g.mPerRow << ";\n";
    if (g.batchPerRow) o << "  s.batch = rows * " << g.batchPerRow << ";\n";
  }
  o << "  return sc_step_status(sc_gemm_launch("
    << (rows ? "sc_gemm_for_rows(&" + name + "_state, rows), &s, " : "&" + name + "_state, &" + name + "_shape, ")
    << ptr(slots, g.a.tensorId, g.a.offset, true) << ", " << ptr(slots, g.b.tensorId, g.b.offset, true) << ", "
    << (g.bias ? ptr(slots, g.bias->tensorId, g.bias->offset, true) : "nullptr") << ", "
    << ptr(slots, g.output, 0, false) << ", stream), " << step << ");\n}\n";
}

// The launcher of a convolution: the generated alternative measured against cuDNN (a direct kernel or a
// pointwise GEMM) where one applies, its shape as cuDNN sees it, and its epilogue's parameters.
void emitConv(std::ostringstream& o, const ConvCall& c, const std::string& name, const std::string& step,
              const std::map<std::string, int>& slots) {
  const bool rows = c.nPerRow > 0;
  const bool oneD = c.inShape.size() == 3;
  const auto in = as2d(c.inShape, oneD), w = as2d(c.weightShape, oneD), out = as2d(c.outShape, oneD);
  const std::size_t nd = in.size();
  // The generated alternative for this shape (a direct kernel, or a pointwise convolution's
  // GEMM), measured against cuDNN's choice on the first call.
  std::string direct = "nullptr";
  auto directLauncher = [&](const std::string& body, const char* suffix = "_direct") {
    direct = name + suffix;
    o << "static int " << direct << "(const sc_conv_shape* s, const float* x, const float* w, float* y, "
      << "const sc_conv_epi* e, cudaStream_t stream) {\n" << body << "}\n";
  };
  const int64_t kh = w[2], kw = w[3];
  if (pointwiseGemm(c)) {
    // y[n] = weight[Cout, Cin] @ x[n][Cin, pixels]: one batch entry per image, the weight shared
    // (batch stride 0); the epilogue, if any, as its own pass. Exact fp32 whatever cuDNN's math
    // (an alternative closer to the truth, never a TF32 matmul eager does not run).
    int64_t pixels = 1;
    for (std::size_t d = 2; d < c.outShape.size(); ++d) pixels *= c.outShape[d];
    const int64_t cin = c.inShape[1], cout = c.outShape[1];
    o << "static " << (rows ? "sc_per_rows<sc_gemm> " : "sc_gemm ") << name << "_gemm;\n"
      << "static const sc_gemm_shape " << name << "_gemm_shape = {" << c.inShape[0] << ", " << cout << ", " << pixels
      << ", " << cin << ", " << cin << ", 1, 0, " << pixels << ", 1, " << cin * pixels << ", " << floatLiteral(1.0)
      << ", 0, CUBLASLT_EPILOGUE_DEFAULT, CUBLAS_COMPUTE_32F};\n";
    // Where the rows are the call's, one image per GEMM batch entry: the batch count is the call's N.
    const std::string gemm = rows ? "  sc_gemm_shape g = " + name + "_gemm_shape;\n  g.batch = s->in[0];\n" +
                                        "  const int st = sc_gemm_launch(sc_gemm_for_rows(&" + name + "_gemm, g.batch), &g, "
                                  : "  const int st = sc_gemm_launch(&" + name + "_gemm, &" + name + "_gemm_shape, ";
    directLauncher(gemm + "w, x, nullptr, y, stream);\n  return st ? st : sc_conv_epilogue(s, y, e, stream);\n",
                   "_pointwise");
  } else if (const int tile = directConvTile(c)) {
    const bool fixed = kh <= 7 && kw <= 7;
    directLauncher("  return sc_direct_launch<" + std::to_string(tile) + ", " + std::to_string(fixed ? kh : 0) +
                   ", " + std::to_string(fixed ? kw : 0) + ">(s, x, w, y, e, stream);\n");
  } else if (const int deconvTile = directDeconvTile(c)) {
    const auto stride = spatial2d(c.stride, oneD, 1);
    directLauncher("  const int st = sc_deconv_launch<" + std::to_string(deconvTile) + ", " + std::to_string(kh) + ", " +
                   std::to_string(kw) + ", " + std::to_string(stride[0]) + ", " + std::to_string(stride[1]) +
                   ">(s, x, w, y, stream);\n  return st ? st : sc_conv_epilogue(s, y, e, stream);\n");
  }
  o << "static " << (rows ? "sc_per_rows<sc_conv> " : "sc_conv ") << name << "_state;\n"
    << "static const sc_conv_shape " << name << "_shape = {" << nd << ", " << ints(in, 5) << ", " << ints(w, 5)
    << ", " << ints(out, 5) << ", " << ints(spatial2d(c.padding, oneD, 0), 3) << ", "
    << ints(spatial2d(c.stride, oneD, 1), 3) << ", " << ints(spatial2d(c.dilation, oneD, 1), 3) << ", " << c.groups
    << ", " << (c.transposed ? 1 : 0) << ", " << groupCalls(c) << ", "
    << (c.tf32 ? "{CUDNN_DEFAULT_MATH, CUDNN_TENSOR_OP_MATH}" : "{CUDNN_FMA_MATH, CUDNN_FMA_MATH}")
    << (c.channelsLast ? ", 1" : "") << "};\n"
    << "static int launch_" << name << "(const StitchTensor* t, int64_t" << (rows ? " rows" : "")
    << ", cudaStream_t stream) {\n";
  if (rows)
    o << "  sc_conv_shape s = " << name << "_shape;\n  s.in[0] = s.out[0] = (int)(rows * " << c.nPerRow << ");\n";
  const ConvEpilogue& ep = c.epilogue;
  if (!ep.empty()) {
    auto param = [&](const std::string& id) { return id.empty() ? std::string("nullptr") : ptr(slots, id, 0, true); };
    o << "  const sc_conv_epi e = {" << param(ep.bias) << ", " << param(ep.mean) << ", " << param(ep.var) << ", "
      << param(ep.scale) << ", " << param(ep.shift) << ", " << floatLiteral(ep.eps) << ", " << (ep.relu ? 1 : 0)
      << "};\n";
  }
  o << "  return sc_step_status(sc_conv_launch("
    << (rows ? "sc_conv_for_rows(&" + name + "_state, rows), &s, " : "&" + name + "_state, &" + name + "_shape, ")
    << ptr(slots, c.input, c.inputOffset, true) << ", " << ptr(slots, c.weight, c.weightOffset, true) << ", "
    << ptr(slots, c.output, 0, false) << ", " << (ep.empty() ? "nullptr" : "&e") << ", " << direct
    << ", stream), " << step << ");\n}\n";
}

}  // namespace

EmittedKernel emitLibraryCall(const LibraryCall& call, const std::string& name, std::size_t stepIndex,
                              const std::map<std::string, int>& slots) {
  std::ostringstream o;
  const std::string step = std::to_string(stepIndex);
  o << "// " << name << ": " << call.describe() << "\n";
  if (call.kind == LibraryCall::Kind::Rnn) {
    emitRnn(o, call.rnn, name, step, slots);
  } else if (call.kind == LibraryCall::Kind::Gemm) {
    emitGemm(o, call.gemm, name, step, slots);
  } else {
    emitConv(o, call.conv, name, step, slots);
  }
  return {o.str(), "launch_" + name};
}

}  // namespace stitch::agents::builtin
