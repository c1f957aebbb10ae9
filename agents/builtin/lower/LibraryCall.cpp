// Matching library calls and folding epilogues; see LibraryCall.h.
#include "agents/builtin/lower/LibraryCall.h"

#include "agents/builtin/kernel/ChannelsLast.h"
#include "agents/builtin/kernel/NodeArgs.h"
#include "agents/builtin/ops/OpDef.h"

#include <algorithm>
#include <optional>
#include <tuple>

namespace stitch::agents::builtin {
namespace {

// The tensor as the ABI passes it: its root, and the element offset of the view.
Outcome<std::pair<const TensorInfo*, int64_t>> abiTensor(const Graph& g, const std::string& id, const Node& node) {
  const TensorInfo* t = g.tensor(id);
  if (!t) return Failure{node.where() + ": unknown tensor " + id};
  if (t->dtype != "float32") return Failure{node.where() + ": " + id + " is " + t->dtype + "; library calls are generated for float32"};
  auto root = g.abiRoot(*t);
  if (!root) return Failure{node.where() + ": " + root.error().message};
  return std::make_pair(root.value(), t->storageOffset - root.value()->storageOffset);
}

// The last two dims of `id` as a matrix: row-major (unit column stride) or column-major (unit
// row stride, a transposed view); cuBLASLt reads either without a copy.
Outcome<MatrixOperand> matrix(const Graph& g, const std::string& id, const Node& node) {
  auto r = abiTensor(g, id, node);
  if (!r) return r.error();
  const TensorInfo* t = g.tensor(id);
  const std::size_t d = t->shape.size();
  MatrixOperand m;
  m.tensorId = r.value().first->id;
  m.offset = r.value().second;
  const int64_t rows = t->shape[d - 2], cols = t->shape[d - 1];
  int64_t rs = t->strides[d - 2], cs = t->strides[d - 1];
  if (cols == 1) cs = 1;
  if (rows == 1) rs = cs == 1 ? cols : 1;
  if (cs == 1 && rs >= cols) {
    m.rowStride = rs, m.colStride = 1;
  } else if (rs == 1 && cs >= rows) {
    m.rowStride = 1, m.colStride = cs;
  } else {
    return Failure{node.where() + ": operand " + id + " is neither row- nor column-major (strides " +
                   std::to_string(t->strides[d - 2]) + ", " + std::to_string(t->strides[d - 1]) + ")"};
  }
  if (d == 3) m.batchStride = t->shape[0] == 1 ? 0 : t->strides[0];
  return m;
}

// An operand that is the call's output or a same-sized contiguous view of it.
bool readsOutput(const Graph& g, const std::string& id, const std::string& output) {
  const TensorInfo* t = g.tensor(id);
  const TensorInfo* out = g.tensor(output);
  if (!t || !out) return false;
  if (t->id == output) return true;
  if (!t->contiguous() || t->numel() != out->numel() || t->storageOffset != out->storageOffset) return false;
  auto root = g.abiRoot(*t);
  return root && root.value()->id == output;
}

std::string dims(const std::vector<int64_t>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "x" : "") + std::to_string(v[i]);
  return s;
}

// A GEMM of rank-2 matrices (mm) or rank-3 batches of them (bmm).
Outcome<LibraryCall> matchGemm(const Graph& g, const Node& node, std::size_t rank) {
  const Argument* self = node.arg("self");
  const Argument* other = node.arg("mat2");
  if (!self || !other || !self->tensor || !other->tensor || node.outputs.size() != 1)
    return Failure{node.where() + ": expected two tensor operands"};
  const TensorInfo* a = g.tensor(*self->tensor);
  const TensorInfo* b = g.tensor(*other->tensor);
  const TensorInfo* out = g.tensor(node.outputs[0]);
  if (a->shape.size() != rank || b->shape.size() != rank || out->shape.size() != rank)
    return Failure{node.where() + ": operands of rank " + std::to_string(a->shape.size()) + " and " +
                   std::to_string(b->shape.size())};
  LibraryCall c;
  c.kind = LibraryCall::Kind::Gemm;
  GemmCall& gm = c.gemm;
  gm.batch = rank == 3 ? a->shape[0] : 1;
  gm.m = a->shape[rank - 2];
  gm.k = a->shape[rank - 1];
  gm.n = b->shape[rank - 1];
  if (b->shape[rank - 2] != gm.k || (rank == 3 && b->shape[0] != gm.batch))
    return Failure{node.where() + ": operand shapes " + dims(a->shape) + " and " + dims(b->shape) + " do not multiply"};
  if (gm.m == 0 || gm.n == 0 || gm.k == 0) return Failure{node.where() + ": an empty matrix"};
  auto ma = matrix(g, a->id, node);
  if (!ma) return ma.error();
  auto mb = matrix(g, b->id, node);
  if (!mb) return mb.error();
  gm.a = ma.value();
  gm.b = mb.value();
  gm.output = out->id;
  c.nodeIds.push_back(node.id);
  return c;
}

Outcome<LibraryCall> matchConv(const Graph& g, const Node& node) {
  const Argument* in = node.arg("input");
  const Argument* w = node.arg("weight");
  if (!in || !w || !in->tensor || !w->tensor || node.outputs.size() != 1)
    return Failure{node.where() + ": expected input and weight tensors"};
  if (!isNone(node, "bias")) return Failure{node.where() + ": a convolution with a bias the graph did not split off"};
  LibraryCall c;
  c.kind = LibraryCall::Kind::Conv;
  ConvCall& cv = c.conv;
  const TensorInfo* x = g.tensor(*in->tensor);
  const TensorInfo* wt = g.tensor(*w->tensor);
  const TensorInfo* out = g.tensor(node.outputs[0]);
  const std::size_t spatial = x->shape.size() - 2;
  if (x->shape.size() < 3 || x->shape.size() > 5 || wt->shape.size() != x->shape.size() ||
      out->shape.size() != x->shape.size())
    return Failure{node.where() + ": convolutions of 1 to 3 spatial dims with a batch dim are generated"};
  cv.channelsLast = isChannelsLast(*x) && isChannelsLast(*wt) && isChannelsLast(*out) &&
                    !(x->contiguous() && wt->contiguous() && out->contiguous());
  for (const TensorInfo* t : {x, wt, out})
    if (!t->contiguous() && !cv.channelsLast)
      return Failure{node.where() + ": " + t->id + " is neither contiguous nor, with the other operands, channels-last"};
  auto rx = abiTensor(g, x->id, node);
  if (!rx) return rx.error();
  auto rw = abiTensor(g, wt->id, node);
  if (!rw) return rw.error();
  cv.input = rx.value().first->id;
  cv.inputOffset = rx.value().second;
  cv.weight = rw.value().first->id;
  cv.weightOffset = rw.value().second;
  cv.output = out->id;
  cv.inShape = x->shape;
  cv.weightShape = wt->shape;
  cv.outShape = out->shape;
  auto list = [&](const char* name, int64_t fallback) {
    std::vector<int64_t> v = node.arg(name) ? asIntList(node.arg(name)->value).value_or(std::vector<int64_t>{}) : std::vector<int64_t>{};
    if (v.size() == 1 && spatial > 1) v.assign(spatial, v[0]);
    if (v.empty()) v.assign(spatial, fallback);
    return v;
  };
  cv.stride = list("stride", 1);
  cv.padding = list("padding", 0);
  cv.dilation = list("dilation", 1);
  if (cv.stride.size() != spatial || cv.padding.size() != spatial || cv.dilation.size() != spatial)
    return Failure{node.where() + ": stride, padding and dilation do not match the spatial rank"};
  const Argument* tr = node.arg("transposed");
  cv.transposed = tr && std::holds_alternative<bool>(tr->value) && std::get<bool>(tr->value);
  cv.groups = static_cast<int64_t>(number(node, "groups", 1));
  if (cv.groups < 1) return Failure{node.where() + ": groups < 1"};
  c.nodeIds.push_back(node.id);
  return c;
}

// Whether the forward returns `id` or a node other than `except` reads it (or a view of it).
bool readElsewhere(const Graph& g, const std::string& id, int except) {
  for (const auto& o : g.outputs)
    if (g.reaches(o, id)) return true;
  for (const Node& n : g.nodes) {
    if (n.id == except) continue;
    for (const Argument& a : n.inputs)
      for (const auto& t : a.tensorIds())
        if (!t.empty() && g.reaches(t, id)) return true;
  }
  return false;
}

// A contiguous float32 ABI tensor of `shape` for `name`: its root and element offset.
Outcome<std::pair<std::string, int64_t>> rnnOperand(const Graph& g, const Node& node, const char* name,
                                                    const std::vector<int64_t>& shape) {
  const Argument* a = node.arg(name);
  if (!a || !a->tensor) return Failure{node.where() + ": no " + name + " tensor"};
  const TensorInfo* t = g.tensor(*a->tensor);
  if (t->shape != shape) return Failure{node.where() + ": " + name + " is " + dims(t->shape) + ", expected " + dims(shape)};
  if (!t->contiguous()) return Failure{node.where() + ": " + name + " " + t->id + " is not contiguous"};
  auto r = abiTensor(g, t->id, node);
  if (!r) return r.error();
  return std::make_pair(r.value().first->id, r.value().second);
}

// What keeps a `_cudnn_rnn` node in PyTorch, if anything, before its tensors are read: the
// configurations cuDNN runs here as PyTorch runs them (unpacked, no projection, biases, no
// dropout drawn, sequence-major after GraphNormalize).
std::optional<std::string> rnnUnsupported(const Node& node) {
  const int64_t mode = static_cast<int64_t>(number(node, "mode", -1));
  const auto batchSizes = node.arg("batch_sizes") ? asIntList(node.arg("batch_sizes")->value) : std::nullopt;
  if (mode < 0 || mode > 3) return "unknown RNN mode " + std::to_string(mode);
  if (number(node, "proj_size", 0) != 0) return "an LSTM with projections (proj_size) is not generated";
  if (!batchSizes || !batchSizes->empty()) return "a packed sequence (batch_sizes) is not generated";
  if (number(node, "dropout", 0) > 0 && number(node, "train", 0) != 0)
    return "dropout between layers in training mode draws random masks, which a generated program cannot reproduce";
  if (number(node, "weight_stride0", 0) != 4) return "an RNN without biases is not generated";
  if (number(node, "batch_first", 0) != 0)
    return "a batch_first call whose output was not captured as the transposed sequence-major result";
  if (isNone(node, "weight_buf"))
    return "its parameters are not one flat buffer (PyTorch compacts them on every call; call flatten_parameters())";
  return std::nullopt;
}

// The parameters as RnnCall::weights: `expected` float32 tensors, the first the start of the flat
// buffer `weight_buf` views (offset 0 of its storage, so its pointer is the buffer's).
Outcome<bool> rnnWeights(const Graph& g, const Node& node, RnnCall& r, std::size_t expected) {
  const Argument* w = node.arg("weight");
  if (!w || w->tensors.size() != expected)
    return Failure{node.where() + ": expected " + std::to_string(expected) + " parameter tensors (w_ih, w_hh, b_ih, b_hh per layer)"};
  for (const auto& id : w->tensors) {
    auto a = abiTensor(g, id, node);
    if (!a) return a.error();
    if (a.value().second != 0 || a.value().first->id != id) return Failure{node.where() + ": parameter " + id + " is a view"};
    r.weights.push_back(id);
  }
  const TensorInfo* buf = g.tensor(*node.arg("weight_buf")->tensor);
  auto root = abiTensor(g, buf->id, node);
  if (!root) return root.error();
  if (root.value().first->id != r.weights[0] || root.value().second != 0 || buf->shape.size() != 1 || !buf->contiguous() ||
      g.tensor(r.weights[0])->storageOffset != 0)
    return Failure{node.where() + ": weight_buf " + buf->id + " is not the flat buffer starting at the first parameter " +
                   r.weights[0] + " (GraphNormalize resolves empty + set_.source_Storage to that view)"};
  r.weightElements = buf->shape[0];
  return true;
}

// The node's result at `position` of (output, hy, cy, reserve, weight_buf), or "".
std::string rnnResult(const Node& node, int position) {
  for (std::size_t i = 0; i < node.outputs.size(); ++i)
    if ((node.resultIndex ? (*node.resultIndex)[i] : static_cast<int>(i)) == position) return node.outputs[i];
  return "";
}

Outcome<LibraryCall> matchRnn(const Graph& g, const Node& node) {
  if (auto why = rnnUnsupported(node)) return Failure{node.where() + ": " + *why};
  LibraryCall c;
  c.kind = LibraryCall::Kind::Rnn;
  RnnCall& r = c.rnn;
  r.mode = static_cast<int>(number(node, "mode", 2));
  r.hiddenSize = static_cast<int64_t>(number(node, "hidden_size", 0));
  r.layers = static_cast<int64_t>(number(node, "num_layers", 1));
  r.directions = number(node, "bidirectional", 0) != 0 ? 2 : 1;
  const Argument* in = node.arg("input");
  if (!in || !in->tensor || g.tensor(*in->tensor)->shape.size() != 3)
    return Failure{node.where() + ": expected a [sequence, batch, features] input"};
  const auto& x = g.tensor(*in->tensor)->shape;
  r.seqLength = x[0], r.batch = x[1], r.inputSize = x[2];
  if (r.seqLength < 1 || r.batch < 1 || r.hiddenSize < 1 || r.layers < 1) return Failure{node.where() + ": an empty RNN"};
  const std::vector<int64_t> state{r.layers * r.directions, r.batch, r.hiddenSize};
  const bool lstm = r.mode == 2;
  auto input = rnnOperand(g, node, "input", x);
  auto hx = rnnOperand(g, node, "hx", state);
  if (!input) return input.error();
  if (!hx) return hx.error();
  std::tie(r.input, r.inputOffset) = input.value();
  std::tie(r.hx, r.hxOffset) = hx.value();
  if (lstm) {
    auto cx = rnnOperand(g, node, "cx", state);
    if (!cx) return cx.error();
    std::tie(r.cx, r.cxOffset) = cx.value();
  }
  if (auto w = rnnWeights(g, node, r, static_cast<std::size_t>(4 * r.layers * r.directions)); !w) return w.error();
  r.output = rnnResult(node, 0), r.hy = rnnResult(node, 1), r.cy = lstm ? rnnResult(node, 2) : "";
  const TensorInfo* out = r.output.empty() ? nullptr : g.tensor(r.output);
  if (!out || out->shape != std::vector<int64_t>{r.seqLength, r.batch, r.directions * r.hiddenSize} || !out->contiguous() ||
      r.hy.empty() || (lstm && r.cy.empty()))
    return Failure{node.where() + ": its output, hy and cy are not the contiguous tensors cuDNN writes"};
  // The reserve space (and a non-LSTM's empty cy) is what training's backward would read; the
  // forward-only call keeps none of it.
  std::vector<int> unkept{3, 4};
  if (!lstm) unkept.push_back(2);
  for (int position : unkept)
    if (const std::string id = rnnResult(node, position); !id.empty() && readElsewhere(g, id, node.id))
      return Failure{node.where() + ": the forward reads result " + std::to_string(position) + " (" + id +
                     ") of _cudnn_rnn, which a forward-only cuDNN call does not produce"};
  c.nodeIds.push_back(node.id);
  return c;
}

}  // namespace

// cuDNN's RNN call, the one anchor the registry does not list.
constexpr char kCudnnRnn[] = "_cudnn_rnn";

bool isLibraryOp(const std::string& op) {
  return ops::libraryKind(op) != ops::LibraryKind::None || baseName(op) == kCudnnRnn;
}

bool isBatchNorm(const std::string& op) { return baseName(op).find("batch_norm") != std::string::npos; }

bool inferenceOnlyBatchNorm(const std::string& op) {
  const ops::OpDef* d = ops::findOp(op);
  const auto* bn = d && d->composite ? std::get_if<ops::BatchNorm>(&*d->composite) : nullptr;
  return bn && bn->inference;
}

Outcome<LibraryCall> matchLibraryCall(const Graph& graph, const Node& node) {
  if (baseName(node.op) == kCudnnRnn) return matchRnn(graph, node);
  const ops::LibraryKind kind = ops::libraryKind(node.op);
  if (kind == ops::LibraryKind::Convolution) return matchConv(graph, node);
  return matchGemm(graph, node, kind == ops::LibraryKind::BatchedGemm ? 3 : 2);
}

namespace {

// `id` as one float per output channel: the ABI root of a contiguous 1-D tensor of `channels`
// elements, read at its own offset and shaped to line up with the output's dim 1: [C] for a
// parameter read per channel (`broadcastRank` 0), or [C, 1, ...] / [1, C, 1, ...] for a tensor
// broadcast against an output of rank `broadcastRank`.
std::optional<std::string> channelVector(const Graph& g, const std::string& id, int64_t channels,
                                         std::size_t broadcastRank) {
  const TensorInfo* t = g.tensor(id);
  if (!t || t->dtype != "float32" || t->numel() != channels) return std::nullopt;
  auto root = g.abiRoot(*t);
  if (!root || root.value()->storageOffset != t->storageOffset || root.value()->shape.size() != 1 ||
      !root.value()->contiguous())
    return std::nullopt;
  const auto& shape = t->shape;
  std::size_t at = 0;
  if (broadcastRank == 0 ? shape.size() != 1 : shape.size() + 1 != broadcastRank) {
    if (broadcastRank == 0 || shape.size() != broadcastRank) return std::nullopt;
    at = 1;
  }
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (d != at && shape[d] != 1) return std::nullopt;
  return root.value()->id;
}

// The convolution's epilogue (ConvEpilogue): bias, then inference batch norm, then ReLU.
bool foldConvEpilogue(ConvCall& cv, const Graph& graph, const Node& node) {
  if (cv.transposed) return false;
  ConvEpilogue& e = cv.epilogue;
  const std::string b = baseName(node.op);
  const ops::EpilogueRole role = ops::epilogueRole(node.op);
  const int64_t channels = cv.outShape[1];
  const std::size_t rank = cv.outShape.size();
  auto readsConv = [&](const char* name) {
    const Argument* a = node.arg(name);
    return a && a->tensor && readsOutput(graph, *a->tensor, cv.output);
  };
  if (role == ops::EpilogueRole::Bias && e.empty() && number(node, "alpha", 1.0) == 1.0) {
    const Argument* vec = readsConv("self") ? node.arg("other") : readsConv("other") ? node.arg("self") : nullptr;
    auto bias = vec && vec->tensor ? channelVector(graph, *vec->tensor, channels, rank) : std::nullopt;
    if (!bias) return false;
    e.bias = *bias;
  } else if (isBatchNorm(b) && e.mean.empty() && !e.relu && readsConv("input")) {
    // As KernelBuilder::lowerBatchNorm reads it: the no-training forms, or training=False.
    const bool training = !inferenceOnlyBatchNorm(b) && number(node, "training", 0) != 0;
    if (training || isNone(node, "running_mean") || isNone(node, "running_var")) return false;
    auto param = [&](const char* name) -> std::optional<std::string> {
      if (isNone(node, name)) return std::string();
      const Argument* a = node.arg(name);
      if (!a || !a->tensor) return std::nullopt;
      return channelVector(graph, *a->tensor, channels, 0);
    };
    auto mean = param("running_mean"), var = param("running_var"), scale = param("weight"), shift = param("bias");
    if (!mean || !var || !scale || !shift) return false;
    e.mean = *mean, e.var = *var, e.scale = *scale, e.shift = *shift;
    e.eps = number(node, "eps", number(node, "epsilon", 1e-5));
  } else if (role == ops::EpilogueRole::Relu && !e.relu && readsConv("self")) {
    e.relu = true;
  } else {
    return false;
  }
  return true;
}

}  // namespace

std::vector<std::string> ConvEpilogue::reads() const {
  std::vector<std::string> r;
  for (const std::string* id : {&bias, &mean, &var, &scale, &shift})
    if (!id->empty()) r.push_back(*id);
  return r;
}

bool foldEpilogue(LibraryCall& call, const Graph& graph, const Node& node) {
  if (node.outputs.empty() || call.kind == LibraryCall::Kind::Rnn) return false;
  if (call.kind == LibraryCall::Kind::Conv) {
    ConvCall folded = call.conv;
    if (!foldConvEpilogue(folded, graph, node)) return false;
    const TensorInfo* out = graph.tensor(node.outputs[0]);
    // The epilogue writes in place, so its result has the convolution's layout.
    if (!out || out->shape != folded.outShape || out->dtype != "float32" ||
        !(folded.channelsLast ? isChannelsLast(*out) : out->contiguous()))
      return false;
    folded.output = out->id;
    call.conv = std::move(folded);
    call.nodeIds.push_back(node.id);
    return true;
  }
  if (node.outputs.size() != 1) return false;
  GemmCall& gm = call.gemm;
  const ops::EpilogueRole role = ops::epilogueRole(node.op);
  const Argument* self = node.arg("self");
  const Argument* other = node.arg("other");
  const bool selfIsOut = self && self->tensor && readsOutput(graph, *self->tensor, gm.output);
  bool folded = false;
  if (role == ops::EpilogueRole::Scale && gm.activation == GemmActivation::None && !gm.bias) {
    // x * c or c * x with a number c: cuBLASLt's alpha.
    const Argument* scalar = selfIsOut ? other : (other && other->tensor && readsOutput(graph, *other->tensor, gm.output) ? self : nullptr);
    if (auto c = scalar && !scalar->tensor ? asNumber(scalar->value) : std::nullopt) {
      gm.alpha *= *c;
      folded = true;
    }
  } else if (role == ops::EpilogueRole::Bias && gm.activation == GemmActivation::None && !gm.bias &&
             number(node, "alpha", 1.0) == 1.0) {
    const Argument* vec = selfIsOut ? other : (other && other->tensor && readsOutput(graph, *other->tensor, gm.output) ? self : nullptr);
    const TensorInfo* v = vec && vec->tensor ? graph.tensor(*vec->tensor) : nullptr;
    // A [n] vector (leading unit dims allowed) with unit stride: the row-broadcast bias.
    if (v && v->numel() == gm.n && !v->shape.empty() && v->shape.back() == gm.n && (gm.n == 1 || v->strides.back() == 1)) {
      if (auto root = graph.abiRoot(*v); root && v->dtype == "float32") {
        gm.bias = MatrixOperand{root.value()->id, v->storageOffset - root.value()->storageOffset, 0, 1, 0};
        folded = true;
      }
    }
  } else if ((role == ops::EpilogueRole::Relu || role == ops::EpilogueRole::Gelu) && gm.activation == GemmActivation::None &&
             selfIsOut) {
    if (role == ops::EpilogueRole::Relu) gm.activation = GemmActivation::Relu, folded = true;
    else if (ops::geluTanh(node)) gm.activation = GemmActivation::GeluTanh, folded = true;
  }
  if (!folded) return false;
  const TensorInfo* out = graph.tensor(node.outputs[0]);
  if (!out || out->numel() != gm.batch * gm.m * gm.n || out->dtype != "float32" || !out->contiguous()) return false;
  gm.output = out->id;
  call.nodeIds.push_back(node.id);
  return true;
}

std::vector<std::string> LibraryCall::reads() const {
  if (kind == Kind::Rnn) {
    std::vector<std::string> r{rnn.input, rnn.hx};
    if (!rnn.cx.empty()) r.push_back(rnn.cx);
    r.insert(r.end(), rnn.weights.begin(), rnn.weights.end());
    return r;
  }
  if (kind == Kind::Conv) {
    std::vector<std::string> r{conv.input, conv.weight};
    for (const auto& id : conv.epilogue.reads()) r.push_back(id);
    return r;
  }
  std::vector<std::string> r{gemm.a.tensorId, gemm.b.tensorId};
  if (gemm.bias) r.push_back(gemm.bias->tensorId);
  return r;
}

std::string LibraryCall::output() const {
  return kind == Kind::Rnn ? rnn.output : kind == Kind::Conv ? conv.output : gemm.output;
}

std::vector<std::string> LibraryCall::outputs() const {
  if (kind != Kind::Rnn) return {output()};
  std::vector<std::string> w{rnn.output, rnn.hy};
  if (!rnn.cy.empty()) w.push_back(rnn.cy);
  return w;
}

namespace {

// Gates per cell: the rows of w_ih and w_hh over the hidden size.
int64_t gates(int mode) { return mode == 2 ? 4 : mode == 3 ? 3 : 1; }

// Two flops per multiply-add of each step's input and recurrent GEMMs, every layer and direction
// (the gates' elementwise work is left out, as a GEMM's epilogue is).
double rnnFlops(const RnnCall& r) {
  double f = 0;
  for (int64_t l = 0; l < r.layers; ++l) {
    const int64_t in = l == 0 ? r.inputSize : r.directions * r.hiddenSize;
    f += 2.0 * r.directions * r.seqLength * r.batch * gates(r.mode) * r.hiddenSize * static_cast<double>(in + r.hiddenSize);
  }
  return f;
}

}  // namespace

double LibraryCall::flops() const {
  if (kind == Kind::Rnn) return rnnFlops(rnn);
  if (kind == Kind::Gemm) return 2.0 * gemm.batch * gemm.m * gemm.n * gemm.k;
  // Every output of the forward convolution (the input of a transposed one) meets weight[1:]
  // (C/g times the window) in one multiply-add each.
  const auto& big = conv.transposed ? conv.inShape : conv.outShape;
  double outputs = 1, window = 1;
  for (int64_t s : big) outputs *= static_cast<double>(s);
  for (std::size_t d = 1; d < conv.weightShape.size(); ++d) window *= static_cast<double>(conv.weightShape[d]);
  return 2.0 * outputs * window;
}

profiling::LibraryMath LibraryCall::math(bool tensorCores) const {
  profiling::LibraryMath m{flops(), tf32(), tensorCores && !tf32() && kind != Kind::Rnn};
  // cuDNN's Winograd algorithms (which the program measures) take 2-D 3x3 and 5x5 windows at
  // stride and dilation 1, and do fewer products than the window has taps: at least one per
  // output and input channel whatever the tile, the bound taken here.
  if (kind == Kind::Conv && conv.weightShape.size() == 4) {
    const int64_t kh = conv.weightShape[2], kw = conv.weightShape[3];
    const bool unit = std::all_of(conv.stride.begin(), conv.stride.end(), [](int64_t s) { return s == 1; }) &&
                      std::all_of(conv.dilation.begin(), conv.dilation.end(), [](int64_t d) { return d == 1; });
    if (unit && kh == kw && (kh == 3 || kh == 5)) m.fewestFp32Flops = m.flops / static_cast<double>(kh * kw);
  }
  return m;
}

// PyTorch's use_rnn_persist_small_h for a forward (every GPU the candidates build for has compute
// capability 6 or more).
bool RnnCall::persistSmallH() const { return mode <= 1 ? hiddenSize <= 384 : hiddenSize <= 192; }

const char* RnnCall::modeName() const {
  static const char* names[] = {"RNN (ReLU)", "RNN (tanh)", "LSTM", "GRU"};
  return names[mode];
}

int directConvTile(const ConvCall& c) {
  if (c.transposed || c.channelsLast || c.inShape.size() < 3 || c.inShape.size() > 4 || c.groups < 1) return 0;
  const int64_t cin = c.inShape[1] / c.groups, cout = c.outShape[1] / c.groups;
  int64_t taps = cin, positions = 1;
  for (std::size_t d = 2; d < c.weightShape.size(); ++d) taps *= c.weightShape[d];
  for (std::size_t d = 2; d < c.outShape.size(); ++d) positions *= c.outShape[d];
  const int tile = cout <= 4 ? 4 : cout <= 8 ? 8 : 16;
  const int64_t blocks = c.inShape[0] * c.groups * ((cout + tile - 1) / tile);
  if (taps > 512 || (positions + 127) / 128 > 65535 || blocks > 0x7fffffffLL) return 0;
  return tile;
}

bool pointwiseGemm(const ConvCall& c) {
  if (c.transposed || c.channelsLast || c.groups != 1 || c.inShape.size() < 3 || c.inputOffset != 0 || c.weightOffset != 0) return false;
  for (std::size_t d = 2; d < c.weightShape.size(); ++d)
    if (c.weightShape[d] != 1) return false;
  for (int64_t s : c.stride)
    if (s != 1) return false;
  for (int64_t p : c.padding)
    if (p != 0) return false;
  return true;
}

int directDeconvTile(const ConvCall& c) {
  if (!c.transposed || c.channelsLast || c.inShape.size() < 3 || c.inShape.size() > 4 || c.groups < 1) return 0;
  for (int64_t d : c.dilation)
    if (d != 1) return 0;
  // The window's taps as the kernel instantiates them (a unit height for 1-D), each at most 8.
  const bool oneD = c.inShape.size() == 3;
  const int64_t kh = oneD ? 1 : c.weightShape[2], kw = c.weightShape.back();
  const int64_t sy = oneD ? 1 : c.stride[0], sx = c.stride.back();
  if (kh > 8 || kw > 8 || sy < 1 || sx < 1 || sy > 8 || sx > 8) return 0;
  const int64_t cin = c.inShape[1] / c.groups, cout = c.outShape[1] / c.groups;
  const int64_t perPhaseTaps = cin * ((kh + sy - 1) / sy) * ((kw + sx - 1) / sx);
  int tile = cout <= 4 ? 4 : cout <= 8 ? 8 : 16;
  while (tile > 4 && perPhaseTaps * tile * 4 > 32 * 1024) tile /= 2;  // staged weights within 32 KiB
  if (perPhaseTaps * tile * 4 > 32 * 1024) return 0;
  const int64_t oh = oneD ? 1 : c.outShape[2], ow = c.outShape.back();
  const int64_t perPhase = ((oh + sy - 1) / sy) * ((ow + sx - 1) / sx);
  const int64_t blocks = c.inShape[0] * c.groups * ((cout + tile - 1) / tile);
  if (sy * sx * ((perPhase + 127) / 128) > 65535 || blocks > 0x7fffffffLL) return 0;
  return tile;
}

namespace {

// "cuDNN RNN LSTM 6 layers, hidden 256, input 128, sequence 512 x batch 10, unidirectional, ...".
std::string describeRnn(const RnnCall& r) {
  return std::string("cuDNN RNN ") + r.modeName() + " " + std::to_string(r.layers) + " layer(s), hidden " +
         std::to_string(r.hiddenSize) + ", input " + std::to_string(r.inputSize) + ", sequence " +
         std::to_string(r.seqLength) + " x batch " + std::to_string(r.batch) +
         (r.directions == 2 ? ", bidirectional" : ", unidirectional") +
         (r.persistSmallH() ? ", persistent small-hidden algorithm" : ", standard algorithm") +
         " (as PyTorch picks it), the parameters' flat buffer read in place, inference forward (no reserve space:"
         " nothing here runs backward)";
}

}  // namespace

std::string LibraryCall::describe() const {
  if (kind == Kind::Rnn) return describeRnn(rnn) + precisionText();
  if (kind == Kind::Conv) {
    const std::size_t spatial = conv.inShape.size() - 2;
    std::string s = std::string("cuDNN ") + (conv.transposed ? "transposed " : "") + "convolution " +
                    std::to_string(spatial) + "-D " + dims(conv.inShape) + " * " + dims(conv.weightShape);
    if (conv.groups > 1) s += ", groups " + std::to_string(conv.groups);
    if (conv.channelsLast) s += ", channels-last (NHWC activations, a KRSC copy of the filter)";
    // The generated alternative to cuDNN, as the emitter picks it: a pointwise convolution's GEMM
    // takes the place of the direct kernel.
    const bool pointwise = pointwiseGemm(conv);
    const int tile = pointwise ? 0 : directConvTile(conv), deconvTile = directDeconvTile(conv);
    const ConvEpilogue& e = conv.epilogue;
    if (!e.empty()) {
      std::vector<std::string> ep;
      if (!e.bias.empty()) ep.push_back("bias");
      if (!e.mean.empty()) ep.push_back("batch norm");
      if (e.relu) ep.push_back("relu");
      s += ", ";
      for (std::size_t i = 0; i < ep.size(); ++i) s += (i ? " + " : "") + ep[i];
      s += tile ? " epilogue (applied by the direct kernel as it stores, else by cuDNN's fused "
                  "bias-activation call or one pass after cuDNN, as measured)"
                : " epilogue (cuDNN's fused bias-activation call or one pass after the convolution, as measured)";
    }
    // The generated alternatives compute in fp32 whatever cuDNN's math: said where cuDNN's is TF32.
    const std::string exact = conv.tf32 ? " in fp32" : "";
    const std::string alternative =
        pointwise    ? "a cuBLASLt GEMM per image over its pixels" + exact
        : tile       ? "a direct kernel" + exact + ", " + std::to_string(tile) + " output channels per thread"
        : deconvTile ? "a direct gather kernel" + exact + ", one stride phase per block, " +
                           std::to_string(deconvTile) + " output channels per thread"
                     : "";
    const std::string dnn = conv.tf32 ? "cuDNN's fastest (default or tensor-op math)" : "cuDNN's fastest";
    // The program times the algorithms itself, on the GPU it runs on, at its first call with a shape.
    s += precisionText() + ", algorithm timed at the program's first run";
    if (!alternative.empty()) return s + " (" + dnn + " or " + alternative + ")";
    return conv.tf32 ? s + " (" + dnn + ")" : s;
  }
  std::string s = "cuBLASLt GEMM " + (gemm.batch > 1 ? std::to_string(gemm.batch) + "x" : "") + std::to_string(gemm.m) +
                  "x" + std::to_string(gemm.n) + "x" + std::to_string(gemm.k);
  std::vector<std::string> ep;
  if (gemm.alpha != 1.0) ep.push_back("scale");
  if (gemm.bias) ep.push_back("bias");
  if (gemm.activation != GemmActivation::None) ep.push_back(gemm.activation == GemmActivation::Relu ? "relu" : "gelu(tanh)");
  if (!ep.empty()) {
    s += ", ";
    for (std::size_t i = 0; i < ep.size(); ++i) s += (i ? " + " : "") + ep[i];
    s += " epilogue";
  }
  return s + precisionText() + ", algorithm timed among every cuBLASLt configuration at the program's first run";
}

std::string LibraryCall::precisionText() const {
  const bool cudnn = kind != Kind::Gemm;  // cuDNN math types: a convolution or an RNN
  const char* flag = cudnn ? "cudnn.allow_tf32" : "cuda.matmul.allow_tf32";
  const std::string op = kind == Kind::Rnn ? "recurrent layer" : cudnn ? "convolution" : "matmul";
  if (tf32()) {
    const std::string how = cudnn ? "TF32 tensor cores" : "TF32 tensor cores (CUBLAS_COMPUTE_32F_FAST_TF32)";
    return ", " + how + ", as eager runs this " + op + " (" + flag + ")";
  }
  const std::string exact = cudnn ? "exact fp32 (FMA math)" : "exact fp32";
  switch (precisionWhy) {
    case PrecisionWhy::Eager: return ", " + exact + ", as eager runs this " + op + " (" + flag + " off)";
    case PrecisionWhy::JobFp32: return ", " + exact + ", as the job asks (--precision fp32)";
    case PrecisionWhy::Unstated: break;
  }
  return ", " + exact;
}

}  // namespace stitch::agents::builtin
