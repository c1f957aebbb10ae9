// Rewrites of the typed capture; see GraphNormalize.h. This file holds the pass (its order of
// rewrites), the facts it reads before rewriting, the view and in-place rewrites, and the
// tensors and nodes the rewrites make.
#include "agents/builtin/normalize/GraphNormalize.h"

#include "agents/builtin/kernel/NodeArgs.h"
#include "agents/builtin/normalize/Normalizer.h"
#include "agents/builtin/ops/OpClass.h"

#include <algorithm>
#include <cmath>

namespace stitch::agents::builtin {
namespace normalize {

Argument tensorArg(const std::string& name, const std::string& id) {
  Argument a;
  a.name = name;
  a.tensor = id;
  return a;
}

Argument valueArg(const std::string& name, ScalarValue v) {
  Argument a;
  a.name = name;
  a.value = std::move(v);
  return a;
}

std::optional<double> capturedNumber(const Argument* a) {
  if (!a || a->tensor) return std::nullopt;
  if (auto i = std::get_if<int64_t>(&a->value)) return static_cast<double>(*i);
  if (auto d = std::get_if<double>(&a->value); d && std::isfinite(*d)) return *d;
  return std::nullopt;
}

double scalarOr(const Node& n, const std::string& name, double fallback) {
  return capturedNumber(n.arg(name)).value_or(fallback);
}

bool isTrue(const Argument* a) {
  const bool* b = a && !a->tensor ? std::get_if<bool>(&a->value) : nullptr;
  return b && *b;
}

std::string argTensor(const Node& n, const std::string& name) {
  const Argument* a = n.arg(name);
  return a && a->tensor ? *a->tensor : "";
}

namespace {

// split, chunk and unbind return a list of views of `self`, which the capture records without a
// base (the schema's alias sits on the list, not on each tensor); the unsafe_ forms are the same
// views with no alias in their schema at all, recorded as compute. Each result becomes a view of
// `self`, so its readers find the storage it is part of and read it through its own strides and
// offset.
bool listOfViewsOp(const std::string& base) {
  static const std::set<std::string> ops{"split", "split_with_sizes", "chunk", "unbind", "tensor_split",
                                         "unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk"};
  return ops.count(base) > 0;
}

// The fused attention kernels a GPU runs F.scaled_dot_product_attention with (float32 takes the
// memory-efficient one; nn.MultiheadAttention without weights and nn.TransformerEncoderLayer
// call it too).
bool attentionKernel(const std::string& base) {
  return base == "_scaled_dot_product_efficient_attention" || base == "_scaled_dot_product_flash_attention" ||
         base == "_scaled_dot_product_cudnn_attention";
}

}  // namespace

Normalizer::Normalizer(Graph& g) : g_(g) {
  for (const Node& n : g_.nodes) nextNode_ = std::max(nextNode_, n.id + 1);
}

void Normalizer::run() {
  std::vector<Node> nodes;
  noteReaders();
  for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
    Node& n = g_.nodes[i];
    if (skipped_.count(n.id)) continue;
    if (n.kind == NodeKind::Inplace && !restrideAsView(n)) functionalize(n, i);
    identityReduction(n);
    const std::string base = baseName(n.op);
    if (trainingBatchNorm(n, base, nodes) || instanceNorm(n, base, nodes) || counterIncrement(n, base, nodes)) continue;
    if (base == "_unsafe_view") markView(n);
    listOfViews(n, base);
    if (base == "slice") wholeSliceAsView(n);
    if ((base == "addmm" || base == "baddbmm") && splitAddmm(n, base, nodes)) continue;
    if (base == "convolution" && splitConvBias(n, nodes)) continue;
    if (base == "set_") flatWeightBuffer(n);
    if (base == "_cudnn_rnn" && sequenceMajorRnn(n, nodes)) continue;
    if (base == "roll" && splitRoll(n, nodes)) continue;
    if (attentionKernel(base) && splitAttention(n, nodes)) continue;
    if (crossEntropy(n, base, nodes)) continue;
    nodes.push_back(n);
  }
  g_.replaceNodes(std::move(nodes));
  g_.removeTensors(dropped_);
  for (auto& [id, t] : added_) g_.addTensor(std::move(t));
}

// Per tensor: the last node that reads it, and whether another tensor aliases it.
void Normalizer::noteReaders() {
  const std::vector<Node>& all = g_.nodes;
  for (std::size_t i = 0; i < all.size(); ++i)
    for (const Argument& a : all[i].inputs) {
      for (const std::string& t : a.tensors)
        if (!t.empty()) lastReader_[t] = i, ++readers_[t];
      if (a.tensor) lastReader_[*a.tensor] = i, ++readers_[*a.tensor];
    }
  for (const TensorInfo& t : g_.tensors)
    if (t.viewOf) ++aliases_[*t.viewOf];
  for (const Node& n : all)  // their results become views of `self` (listOfViews)
    if (listOfViewsOp(baseName(n.op)) && !argTensor(n, "self").empty())
      aliases_[argTensor(n, "self")] += static_cast<int>(n.outputs.size());
  // The graph's outputs include the tensors the forward leaves in a module attribute: such a
  // tensor outlives the call as a result does.
  returned_.insert(g_.outputs.begin(), g_.outputs.end());
  for (const auto& [name, tensor] : g_.state) returned_.insert(tensor);
}

// `relu_(x)` (nn.ReLU(inplace=True)), `hardtanh_`, `add_`, ... on an intermediate that nothing
// reads afterwards under its old name, and that no other tensor aliases, computes what the
// functional form does: it becomes that form, and its result a tensor of its own. A write into
// a parameter, a buffer (BatchNorm's `num_batches_tracked += 1`), an input or a view stays
// in-place: that write-back is observable. A piece of a split is such a view, but one no other
// piece overlaps: a write into it is seen through its base alone (ATen's LSTM and GRU cells
// apply sigmoid_ and add_ to their gates' chunks, whose base nothing else reads).
void Normalizer::functionalize(Node& n, std::size_t at) {
  const Argument* self = n.arg("self");
  if (!self || !self->tensor || n.outputs.size() != 1) return;
  const std::string target = *self->tensor;
  const bool view = isView(target) && !pieceOfUnreadBase(target);
  if (info(target).role != Role::Intermediate || view || returned_.count(target) || aliases_[target] > 1) return;
  if (auto it = lastReader_.find(target); it != lastReader_.end() && it->second > at) return;
  const std::string base = baseName(n.op);
  if (base.size() < 2 || base.back() != '_' || base[base.size() - 2] == '_') return;
  const std::string functional =
      "aten::" + base.substr(0, base.size() - 1) + (overload(n.op).empty() ? "" : "." + overload(n.op));
  if (classifyOp(functional) == OpClass::Unsupported) return;
  n.op = functional;
  n.kind = NodeKind::Compute;
  info(n.outputs[0]).viewOf.reset();
}

// `as_strided_` that gives a tensor its own sizes and, on every dim of more than one element, its
// own strides (adaptive average pooling on the CPU restrides its [N, C, 1, 1] mean so) moves no
// element: a view of the tensor, as a reshape to its own sizes says.
bool Normalizer::restrideAsView(Node& n) {
  if (baseName(n.op) != "as_strided_" || n.outputs.size() != 1) return false;
  const std::string self = argTensor(n, "self");
  const Argument* size = n.arg("size");
  const Argument* stride = n.arg("stride");
  if (self.empty() || !size || !stride) return false;
  const auto sizes = asIntList(size->value), strides = asIntList(stride->value);
  const TensorInfo& t = info(self);
  const std::vector<int64_t> shape = t.shape, own = t.strides;
  if (!sizes || !strides || *sizes != shape || strides->size() != own.size()) return false;
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1 && (*strides)[d] != own[d]) return false;
  if (const Argument* offset = n.arg("storage_offset");
      offset && !offset->tensor && !std::holds_alternative<std::monostate>(offset->value)) {
    const auto at = asNumber(offset->value);
    if (std::holds_alternative<bool>(offset->value) || !at || *at != static_cast<double>(t.storageOffset)) return false;
  }
  n.op = "aten::view";
  n.kind = NodeKind::View;
  n.inputs = {tensorArg("self", self), valueArg("size", shape)};
  setViewOf(n.outputs[0], self);
  return true;
}

// A reduction whose dims all have size 1 (a max over a dim a keepdim reduction left, a mean over
// a singleton channel) returns its input's values: sum, mean, amax, amin, prod and logsumexp of
// one element are that element, exactly. It becomes a view of its input, which the planner fuses
// into its neighbours. max.dim / min.dim qualify only when nothing reads their indices.
void Normalizer::identityReduction(Node& n) {
  static const std::set<std::string> ops{"sum", "mean", "amax", "amin", "prod", "logsumexp", "max", "min"};
  const std::string base = baseName(n.op);
  if (!ops.count(base) || n.outputs.empty()) return;
  const bool withIndices = base == "max" || base == "min";
  if (withIndices && (overload(n.op) != "dim" || n.outputs.size() != 2 || lastReader_.count(n.outputs[1]) ||
                      returned_.count(n.outputs[1])))
    return;
  if (!withIndices && n.outputs.size() != 1) return;
  const Argument* self = n.arg("self");
  const Argument* dim = n.arg("dim");
  if (!self || !self->tensor || !dim) return;
  const TensorInfo& in = info(*self->tensor);
  const std::string out = n.outputs[0];
  const auto dims = asIntList(dim->value);
  if (!dims || dims->empty() || in.dtype != info(out).dtype) return;
  const auto rank = static_cast<int64_t>(in.shape.size());
  for (int64_t d : *dims) {
    const int64_t p = d < 0 ? d + rank : d;
    if (p < 0 || p >= rank || in.shape[p] != 1) return;
  }
  const std::vector<int64_t> outShape = info(out).shape;
  const Argument source = *self;  // `self` points into the inputs replaced below
  n.op = "aten::view";
  n.kind = NodeKind::View;
  n.inputs = {source, valueArg("size", outShape)};
  n.outputs = {out};
  n.resultIndex.reset();
  setViewOf(out, *source.tensor);
}

// `_unsafe_view` only reshapes (ATen uses it where autograd need not track the alias): the
// harness records it as compute with no base, which would make a copy kernel of a reshape.
void Normalizer::markView(Node& n) {
  const Argument* self = n.arg("self");
  if (!self || !self->tensor || n.outputs.size() != 1) return;
  n.kind = NodeKind::View;
  TensorInfo& out = info(n.outputs[0]);
  if (!out.viewOf) unsafeViews_.insert(out.id);
  out.viewOf = *self->tensor;
}

void Normalizer::listOfViews(Node& n, const std::string& base) {
  const std::string self = argTensor(n, "self");
  if (!listOfViewsOp(base) || self.empty()) return;
  n.kind = NodeKind::View;
  for (const std::string& o : n.outputs) {
    setViewOf(o, self);
    pieceBase_[o] = self;
  }
}

// A piece of a split whose base only the split reads and the forward does not return.
bool Normalizer::pieceOfUnreadBase(const std::string& id) const {
  auto it = pieceBase_.find(id);
  return it != pieceBase_.end() && readers_.count(it->second) && readers_.at(it->second) == 1 &&
         !returned_.count(it->second);
}

// x[:, :, None] slices every dim whole: the same tensor, which a reshape says more plainly.
void Normalizer::wholeSliceAsView(Node& n) {
  const Argument* self = n.arg("self");
  if (!self || !self->tensor || n.outputs.size() != 1) return;
  const std::vector<int64_t> in = info(*self->tensor).shape;
  const std::vector<int64_t> out = info(n.outputs[0]).shape;
  const double step = scalarOr(n, "step", 1.0), start = scalarOr(n, "start", 0.0);
  if (in != out || step != 1.0 || start != 0.0) return;
  n.op = "aten::view";
  n.inputs = {*self, valueArg("size", out)};
}

TensorInfo& Normalizer::info(const std::string& id) {
  if (auto it = added_.find(id); it != added_.end()) return it->second;
  return *g_.tensor(id);
}

bool Normalizer::isView(const std::string& id) { return info(id).viewOf && !unsafeViews_.count(id); }

// A tensor made here: `like`'s dtype and device, contiguous strides of `shape`, an intermediate
// (a view of `viewOf` at its offset, when given). Its producer is set by the node that makes it.
std::string Normalizer::newTensor(const TensorInfo& like, std::vector<int64_t> shape,
                                  std::optional<std::string> viewOf) {
  TensorInfo t = like;
  t.id = "n" + std::to_string(added_.size());
  t.strides.assign(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) t.strides[d - 1] = t.strides[d] * shape[d];
  t.shape = std::move(shape);
  t.storageOffset = viewOf ? info(*viewOf).storageOffset : 0;
  t.role = Role::Intermediate;
  t.name.reset();
  t.viewOf = std::move(viewOf);
  t.producer.reset();
  const std::string id = t.id;
  added_.emplace(id, std::move(t));
  return id;
}

// A node in place of `like` (its module and source line), with a new id, making `out`.
Node Normalizer::node(const Node& like, const std::string& op, std::vector<Argument> inputs, const std::string& out,
                      NodeKind kind) {
  Node n = like;
  n.id = nextNode_++;
  n.op = op;
  n.inputs = std::move(inputs);
  n.outputs = {out};
  n.kind = kind;
  n.resultIndex.reset();
  setProducer(out, n.id);
  return n;
}

// The node that now makes `id` (a tensor of the capture or one added here).
void Normalizer::setProducer(const std::string& id, int nodeId) { info(id).producer = nodeId; }

void Normalizer::setViewOf(const std::string& id, const std::string& base) {
  info(id).viewOf = base;
  unsafeViews_.erase(id);
}

}  // namespace normalize

void normalizeGraph(Graph& g) { normalize::Normalizer(g).run(); }

Outcome<Graph> parseNormalized(const nlohmann::json& capture) {
  auto g = parseGraph(capture);
  if (g) normalizeGraph(g.value());
  return g;
}

nlohmann::json normalizeGraph(const nlohmann::json& capture) {
  auto g = parseGraph(capture);
  if (!g) return capture;  // parseGraph says what does not fit
  const nlohmann::json before = writeGraph(g.value());
  normalizeGraph(g.value());
  nlohmann::json after = writeGraph(g.value());
  return after == before ? capture : after;
}

}  // namespace stitch::agents::builtin
