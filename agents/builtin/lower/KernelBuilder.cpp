// Lowering of ATen nodes into a FusedKernel; see KernelBuilder.h. Broadcasting is tracked per
// value as a map from its own dims to the iteration dims, so a [B] row statistic, a [D] bias and a
// [B, D] activation meet in one kernel at the right coordinates.
#include "agents/builtin/lower/KernelBuilder.h"

#include "agents/builtin/kernel/NodeArgs.h"
#include "agents/builtin/lower/Concatenation.h"
#include "agents/builtin/ops/OpDef.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <regex>

namespace stitch::agents::builtin {
namespace {

std::vector<int64_t> nonUnit(const std::vector<int64_t>& shape) {
  std::vector<int64_t> r;
  for (int64_t s : shape)
    if (s != 1) r.push_back(s);
  return r;
}

}  // namespace

const std::string* writeBackTarget(const Graph& graph, const Node& node) {
  if (baseName(node.op) != "copy_" || node.kind != NodeKind::Inplace) return nullptr;
  const Argument* self = node.arg("self");
  const Argument* src = node.arg("src");
  if (!self || !self->tensor || !src || !src->tensor) return nullptr;
  const TensorInfo* t = graph.tensor(*self->tensor);
  const TensorInfo* s = graph.tensor(*src->tensor);
  if (!t || !s || t->role != Role::Buffer || t->viewOf || !t->contiguous() || t->shape != s->shape || t->dtype != s->dtype ||
      (t->dtype != kComputeType && t->dtype != DType::Int64))
    return nullptr;
  return &*self->tensor;
}

// A 0-dim float32 tensor the forward makes outside ATen (`torch.tensor(self.c)`), whose value the
// capture wrote as `torch.tensor(0.5, dtype=torch.float32)`: the number itself, so the generated
// kernel computes with it as with any scalar instead of leaving its consumer in PyTorch.
std::optional<double> scalarConstant(const TensorInfo& t) {
  if (t.role != Role::Constant || !t.shape.empty() || t.dtype != kComputeType || !t.py) return std::nullopt;
  static const std::regex literal(R"(^torch\.tensor\(([-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?), dtype=torch\.float32)");
  std::smatch m;
  if (!std::regex_search(*t.py, m, literal)) return std::nullopt;
  return std::stod(m[1].str());
}

// A 0-dim float32 number a kernel reads as a literal: a constant the forward made outside ATen,
// its alias (`lift_fresh` of `torch.tensor(0.5)`, also where another kernel took the lift_fresh),
// or what aten::scalar_tensor holds (`torch.where(c, x, 0.0)`).
std::optional<double> KernelBuilder::constantValue(const TensorInfo& t) const {
  if (!t.shape.empty()) return scalarConstant(t);
  if (auto c = scalarConstant(*graph_->viewRoot(t))) return c;
  const Node* p = t.producer ? graph_->node(*t.producer) : nullptr;
  if (!p || baseName(p->op) != "scalar_tensor" || t.dtype != kComputeType || !p->arg("s")) return std::nullopt;
  return asNumber(p->arg("s")->value);
}

int KernelBuilder::push(KernelValue v) {
  kernel_.values.push_back(std::move(v));
  return static_cast<int>(kernel_.values.size()) - 1;
}

int KernelBuilder::constant(double c) {
  KernelValue v;
  v.op = ValueOp::Constant;
  v.params = {c};
  return push(std::move(v));
}

int KernelBuilder::unary(const std::string& fn, int a, std::vector<double> params) {
  KernelValue v;
  v.op = ValueOp::Unary;
  v.fn = fn;
  v.args = {a};
  v.params = std::move(params);
  v.dimMap = kernel_.values[a].dimMap;
  return push(std::move(v));
}

// Both operands are in the kernel already; the result takes the union of their dim maps (a
// row statistic [B, 1] against a row [B, D] gives [B, D]).
int KernelBuilder::binary(const std::string& fn, int a, int b) {
  const auto& ma = kernel_.values[a].dimMap;
  const auto& mb = kernel_.values[b].dimMap;
  std::vector<int> map(std::max(ma.size(), mb.size()), -1);
  for (std::size_t p = 0; p < map.size(); ++p) {
    std::ptrdiff_t pa = static_cast<std::ptrdiff_t>(p) - static_cast<std::ptrdiff_t>(map.size() - ma.size());
    std::ptrdiff_t pb = static_cast<std::ptrdiff_t>(p) - static_cast<std::ptrdiff_t>(map.size() - mb.size());
    if (pa >= 0 && ma[pa] >= 0) map[p] = ma[pa];
    if (pb >= 0 && mb[pb] >= 0) map[p] = mb[pb];
  }
  KernelValue v;
  v.op = ValueOp::Binary;
  v.fn = fn;
  v.args = {a, b};
  v.dimMap = std::move(map);
  return push(std::move(v));
}

Outcome<bool> KernelBuilder::add(const Node& node) {
  KernelBuilder saved = *this;
  auto r = lower(node);
  // With fewer rows than the GPU has SMs, a reduction runs split across blocks, which only a
  // one-pass kernel can: an elementwise consumer of its result over whole rows gets its own kernel.
  constexpr int64_t kFewRows = 132;
  if (r && classifyOp(node.op) == OpClass::Elementwise && kernel_.reduces() && kernel_.inner() == 1 &&
      kernel_.outer() < kFewRows) {
    auto it = tensors_.find(node.outputs[0]);
    std::function<bool(int)> afterReduction = [&](int v) {
      const KernelValue& kv = kernel_.values[v];
      if (kv.op == ValueOp::Reduce || kv.op == ValueOp::ArgIndex) return true;
      for (int a : kv.args)
        if (afterReduction(a)) return true;
      return false;
    };
    if (it != tensors_.end() && it->second.value >= 0 && kernel_.variesOverReduced(it->second.value) &&
        afterReduction(it->second.value))
      r = Failure{node.where() + ": the reduction before it has only " + std::to_string(kernel_.outer()) +
                  " row(s) and runs split across blocks; whole-row consumers get their own kernel"};
  }
  if (!r) {
    *this = std::move(saved);
    return r.error();
  }
  kernel_.nodeIds.push_back(node.id);
  return true;
}

Outcome<bool> KernelBuilder::addPoolOverKernel(const Node& node) {
  KernelBuilder saved = *this;
  auto r = poolOverKernel(node);
  if (!r) {
    *this = std::move(saved);
    return r.error();
  }
  kernel_.nodeIds.push_back(node.id);
  return true;
}

Outcome<FusedKernel> KernelBuilder::finish(const std::vector<std::string>& outputs) const {
  FusedKernel k = kernel_;
  auto known = [](const KernelValue& v) {
    const bool computes = v.op == ValueOp::Unary || v.op == ValueOp::Binary || v.op == ValueOp::Select;
    return !computes || ops::findFn(v.fn);
  };
  for (const KernelValue& v : k.values) {
    if (!known(v)) return Failure{"the kernel function '" + v.fn + "' has no CUDA in the operator registry"};
    for (const KernelValue& p : v.pool.prologue)
      if (!known(p)) return Failure{"the kernel function '" + p.fn + "' has no CUDA in the operator registry"};
  }
  for (const auto& id : outputs) {
    auto out = output(id);
    if (!out) return out.error();
    k.outputs.push_back(std::move(out).value());
  }
  plainWhereNoIndexIsRead(k);
  return k;
}

// max/min along a dim with indices (lowerArgReduce) where no output needs the indices
// (`torch.min(x, dim=1)[0]`): a plain Max/Min, whose every step and shuffle carries no index.
// The value is the same but for which of two equal zeros of opposite sign is kept.
void KernelBuilder::plainWhereNoIndexIsRead(FusedKernel& k) {
  std::vector<bool> needed(k.values.size(), false), indexed(k.values.size(), false);
  for (const auto& out : k.outputs) needed[out.value] = true;
  for (std::size_t v = k.values.size(); v-- > 0;) {
    if (!needed[v]) continue;
    for (int a : k.values[v].args) {
      needed[a] = true;
      if (k.values[v].op == ValueOp::ArgIndex) indexed[a] = true;
    }
  }
  for (std::size_t v = 0; v < k.values.size(); ++v) {
    KernelValue& r = k.values[v];
    if (r.op != ValueOp::Reduce || indexed[v]) continue;
    if (r.reduce == ReduceKind::ArgMax) r.reduce = ReduceKind::Max;
    if (r.reduce == ReduceKind::ArgMin) r.reduce = ReduceKind::Min;
  }
}

Outcome<KernelOutput> KernelBuilder::output(const std::string& id) const {
  const FusedKernel& k = kernel_;
  auto it = tensors_.find(id);
  const TensorInfo* t = graph_->tensor(id);
  if (it == tensors_.end() || !t) return Failure{"tensor " + id + " is not produced by this kernel"};
  if (!it->second.unsupported.empty()) return Failure{it->second.unsupported};
  const KernelValue& v = k.values[it->second.value];
  if (t->dtype != kComputeType && t->dtype != DType::Bool && !(t->dtype == DType::Int64 && v.integer))
    return Failure{"output " + id + " is " + t->dtype + "; the generated kernels write float32, bool and indices"};
  // The value's mapped dims, in order, must be the iteration dims it spans, in order: then its
  // contiguous buffer is indexed by the element (or row) index directly.
  std::vector<int> mapped;
  for (int d : v.dimMap)
    if (d >= 0) mapped.push_back(d);
  bool perRow = k.reduces() && !k.variesOverReduced(it->second.value);
  if (k.scans() && !k.variesOverReduced(it->second.value))
    return Failure{"output " + id + " does not vary along the scanned dim; a scan kernel writes whole tensors"};
  std::vector<int> expected;
  for (int d = 0; d < static_cast<int>(k.shape.size()); ++d)
    if (k.shape[d] != 1 && !(perRow && d >= k.reduceBegin && d < k.reduceEnd)) expected.push_back(d);
  if (mapped != expected)
    return Failure{"output " + id + " is broadcast or transposed relative to the kernel's iteration space"};
  KernelOutput out;
  out.tensorId = id;
  out.value = it->second.value;
  out.perRow = perRow;
  out.shape = t->shape;
  out.dtype = t->dtype;
  // A transposed result (eager's elementwise op keeps its input's layout) is written at its own
  // strides, so what reads it — a GEMM operand, a PyTorch step — sees eager's layout.
  if (!t->contiguous()) {
    if (perRow || !t->dense())
      return Failure{"output " + id + " is not laid out densely or is a row-wise result; a kernel writes a transposed "
                     "layout only per element"};
    out.strides = t->strides;
  }
  return out;
}

// The operand's value: a kernel value, a scalar constant, or (for an external tensor) nullopt-
// like -1 with the id left for the caller to bind once the result's dim map is known.
Outcome<int> KernelBuilder::operand(const Node& node, const std::string& argName) {
  const Argument* a = node.arg(argName);
  if (!a) return Failure{node.where() + ": missing argument " + argName};
  if (a->tensor) {
    auto it = tensors_.find(*a->tensor);
    if (it == tensors_.end()) {
      if (auto c = constantValue(*graph_->tensor(*a->tensor))) return constant(*c);
      return -1;
    }
    if (!it->second.unsupported.empty()) return Failure{it->second.unsupported};
    if (kernel_.values[it->second.value].dimMap.size() != graph_->tensor(*a->tensor)->shape.size())
      return Failure{node.where() + ": operand " + *a->tensor + " was computed in a regrouped iteration space"};
    return it->second.value;
  }
  if (auto c = asNumber(a->value)) return constant(*c);
  return Failure{node.where() + ": argument " + argName + " is neither a tensor nor a number"};
}

Outcome<int> KernelBuilder::external(const std::string& tensorId, const std::vector<int>& dimMap) {
  const TensorInfo* t = graph_->tensor(tensorId);
  std::vector<int64_t> strides(kernel_.shape.size(), 0);
  for (std::size_t k = 0; k < dimMap.size(); ++k)
    if (dimMap[k] >= 0) strides[dimMap[k]] = t->strides[k];
  return externalStrided(tensorId, std::move(strides), dimMap);
}

Outcome<int> KernelBuilder::externalStrided(const std::string& tensorId, std::vector<int64_t> strides,
                                            std::vector<int> dimMap, bool window, int64_t shift) {
  const TensorInfo* t = graph_->tensor(tensorId);
  auto passed = graph_->abiRoot(*t);
  if (!passed) return passed.error();
  const TensorInfo* root = passed.value();
  if (t->dtype != kComputeType && t->dtype != DType::Bool && t->dtype != DType::Int64)
    return Failure{"input " + t->id + " is " + t->dtype + "; the generated kernels read float32, bool and int64"};
  KernelInput in;
  in.tensorId = root->id;
  in.dtype = t->dtype;
  in.offset = t->storageOffset - root->storageOffset + shift;
  in.strides = std::move(strides);
  int64_t expect = 1;
  in.linear = in.offset == 0;
  for (std::size_t d = kernel_.shape.size(); d-- > 0;) {
    if (kernel_.shape[d] != 1 && in.strides[d] != expect) in.linear = false;
    expect *= kernel_.shape[d];
  }
  in.window = window;
  if (window) in.linear = false;
  KernelValue v;
  v.op = ValueOp::Input;
  v.input = addInput(std::move(in));
  v.dimMap = dimMap;
  v.integer = t->dtype == DType::Int64;  // exact until it meets float math, which converts it as PyTorch promotes
  return push(std::move(v));
}

int KernelBuilder::addInput(KernelInput in) {
  std::string key = in.tensorId + "@" + std::to_string(in.offset) + ":" + in.dtype + (in.window ? ":window" : "");
  for (int64_t s : in.strides) key += "," + std::to_string(s);
  auto [it, fresh] = inputsByKey_.emplace(key, static_cast<int>(kernel_.inputs.size()));
  if (fresh) kernel_.inputs.push_back(std::move(in));
  return it->second;
}

// The dim map of a result with `shape` computed from `operands` (kernel values; -1 for external
// tensors): the union of the operands' maps, or right-aligned to the iteration space when no
// operand is in the kernel yet (the first node sets the iteration space).
Outcome<std::vector<int>> KernelBuilder::alignedMap(const std::vector<int64_t>& shape, const std::vector<int>& operands,
                                                    const Node& node) {
  const int rank = static_cast<int>(shape.size());
  std::vector<int> map(rank, -1);
  for (int v : operands) {
    if (v < 0) continue;
    const auto& m = kernel_.values[v].dimMap;
    if (static_cast<int>(m.size()) > rank) return Failure{node.where() + ": operand has a higher rank than the result"};
    for (std::size_t p = 0; p < m.size(); ++p) {
      int q = rank - static_cast<int>(m.size()) + static_cast<int>(p);
      if (m[p] < 0) continue;
      if (map[q] >= 0 && map[q] != m[p]) return Failure{node.where() + ": operands broadcast along different dims"};
      map[q] = m[p];
    }
  }
  if (kernel_.shape.empty()) {
    kernel_.shape = shape;
    for (int d = 0; d < rank; ++d) map[d] = shape[d] == 1 ? -1 : d;  // as every other size-1 dim
    return map;
  }
  const int srank = static_cast<int>(kernel_.shape.size());
  for (int q = 0; q < rank; ++q) {
    if (shape[q] == 1) {
      map[q] = -1;
      continue;
    }
    // A dim no operand in the kernel spans (an external operand brings it): right-aligned, as
    // PyTorch broadcasts, unless another dim of the result already took that iteration dim.
    if (map[q] < 0) {
      int s = srank - rank + q;
      if (s >= 0 && std::find(map.begin(), map.end(), s) == map.end()) map[q] = s;
    }
    if (map[q] < 0 || kernel_.shape[map[q]] != shape[q])
      return Failure{node.where() + ": its shape does not fit the kernel's iteration space"};
  }
  return map;
}

Outcome<int> KernelBuilder::elementwise(const Node& node, const std::string& fn,
                                        const std::vector<std::string>& argNames, std::vector<double> params,
                                        const std::vector<int64_t>* shape) {
  if (node.outputs.empty()) return Failure{node.where() + ": no output"};
  const TensorInfo* out = graph_->tensor(node.outputs[0]);
  if (out->dtype != kComputeType && out->dtype != DType::Bool)
    return Failure{node.where() + ": result is " + out->dtype + "; the generated kernels compute in float32"};
  const std::vector<int64_t>& outShape = shape ? *shape : out->shape;
  std::vector<int> vals;
  for (const auto& name : argNames) {
    auto v = operand(node, name);
    if (!v) return v.error();
    vals.push_back(v.value());
  }
  std::vector<int> internal;
  for (int v : vals)
    if (v >= 0 && kernel_.values[v].op != ValueOp::Constant) internal.push_back(v);
  auto map = alignedMap(outShape, internal.empty() ? std::vector<int>{-1} : internal, node);
  if (!map) return map.error();
  const int rank = static_cast<int>(outShape.size());
  for (std::size_t i = 0; i < vals.size(); ++i) {
    if (vals[i] >= 0) continue;
    const TensorInfo* t = graph_->tensor(*node.arg(argNames[i])->tensor);
    if (static_cast<int>(t->shape.size()) > rank) return Failure{node.where() + ": operand has a higher rank than the result"};
    std::vector<int> m(t->shape.size(), -1);
    for (std::size_t p = 0; p < m.size(); ++p) {
      int q = rank - static_cast<int>(m.size()) + static_cast<int>(p);
      if (t->shape[p] == 1) continue;
      if (map.value()[q] < 0 || t->shape[p] != outShape[q])
        return Failure{node.where() + ": operand " + t->id + " does not broadcast to the result"};
      m[p] = map.value()[q];
    }
    auto v = external(t->id, m);
    if (!v) return v.error();
    vals[i] = v.value();
  }
  KernelValue v;
  v.op = fn == ops::fn::kWhere ? ValueOp::Select : vals.size() == 1 ? ValueOp::Unary : ValueOp::Binary;
  v.fn = fn;
  v.args = vals;
  v.params = std::move(params);
  v.dimMap = map.value();
  int id = push(std::move(v));
  if (!shape) bind(node.outputs[0], id);
  return id;
}

// An elementwise operator of the registry: the kernel function and parameters its entry lowers
// the node to, over the arguments it names.
Outcome<bool> KernelBuilder::lowerRegistered(const Node& node, const ops::OpDef& def) {
  auto lowered = def.lower(node, *graph_);
  if (!lowered) return lowered.error();
  const ops::Lowered& l = lowered.value();
  auto v = elementwise(node, l.fn, l.args, l.params);
  if (!v) return v.error();
  std::vector<int> args = kernel_.values[v.value()].args;
  if (l.reversed) std::swap(args[0], args[1]);
  if (l.alpha != 1.0) args[1] = binary(ops::fn::kMul, args[1], constant(l.alpha));
  kernel_.values[v.value()].args = std::move(args);
  return true;
}

// A tensor of one value over its own shape. It joins a kernel of that iteration space only: a
// fill broadcast over a larger one could not be written where a later kernel needs it (a piece of
// a concatenation), so it opens a kernel of its own.
Outcome<bool> KernelBuilder::lowerFill(const Node& node, double value) {
  const TensorInfo* out = graph_->tensor(node.outputs.at(0));
  if (out->dtype != kComputeType) return Failure{node.where() + ": fills a " + out->dtype + " tensor; the generated kernels write float32"};
  if (!kernel_.shape.empty() && kernel_.shape != out->shape)
    return Failure{node.where() + ": fills a tensor of another shape than this kernel's iteration space"};
  if (kernel_.shape.empty()) kernel_.shape = out->shape;
  auto map = alignedMap(out->shape, {}, node);
  if (!map) return map.error();
  const int v = unary(ops::fn::kIdentity, constant(value));
  kernel_.values[v].dimMap = map.value();
  bind(out->id, v);
  return true;
}

// The float32 tensor (argument `arg`) a coordinate op (pad, flip, gather) reads from outside, the
// one it writes, and the output's dim map over the kernel's iteration space, which becomes the
// output's. A value this kernel computes is written first and read so by the next kernel. `verb`
// names the op in messages.
Outcome<KernelBuilder::CoordinateRead> KernelBuilder::coordinateRead(const Node& node, const std::string& verb,
                                                                     const char* arg) {
  const Argument* self = node.arg(arg);
  if (!self || !self->tensor) return Failure{node.where() + ": " + verb + " no tensor"};
  if (tensors_.count(*self->tensor))
    return Failure{node.where() + ": " + verb + " a value this kernel computes; the next kernel " + verb + " it written"};
  const TensorInfo* in = graph_->tensor(*self->tensor);
  const TensorInfo* out = graph_->tensor(node.outputs.at(0));
  if (in->dtype != kComputeType || out->dtype != kComputeType) return Failure{node.where() + ": " + verb + " a non-float32 tensor"};
  if (!kernel_.shape.empty() && kernel_.shape != out->shape)
    return Failure{node.where() + ": " + verb + " into another shape than this kernel's iteration space"};
  if (kernel_.shape.empty()) kernel_.shape = out->shape;
  auto map = alignedMap(out->shape, {}, node);
  if (!map) return map.error();
  return CoordinateRead{in, out, map.value()};
}

// A coordinate operator of the registry, by its entry's kind.
Outcome<bool> KernelBuilder::lowerCoordinate(const Node& node, const ops::CoordinateDef& def) {
  switch (def.kind) {
    case ops::CoordinateKind::Triangle: return lowerTriangle(node, def.upper);
    case ops::CoordinateKind::Pad: return lowerPad(node);
    case ops::CoordinateKind::Flip: return lowerFlip(node);
    case ops::CoordinateKind::Gather: return lowerGather(node, def.input.c_str());
  }
  return Failure{node.where() + ": no generated kernel for this coordinate operator; it stays in PyTorch"};
}

// triu/tril (a causal mask made in forward, a triangular GEMM's result): the element where it lies
// on the kept side of the diagonal, else 0.
Outcome<bool> KernelBuilder::lowerTriangle(const Node& node, bool upper) {
  auto v = elementwise(node, ops::fn::kIdentity, {"self"});
  if (!v) return v.error();
  KernelValue& t = kernel_.values[v.value()];
  if (t.dimMap.size() < 2) return Failure{node.where() + ": " + baseName(node.op) + " of a tensor of fewer than two dims"};
  t.op = ValueOp::Triangle;
  t.params = {number(node, "diagonal", 0.0), upper ? 1.0 : 0.0};
  return true;
}

// F.pad's constant padding of a tensor read from outside: the output's element is the input's at
// the coordinates less the padding before, where those lie inside it, and `value` elsewhere. A
// padded value this kernel computes is written first and padded by the next kernel.
Outcome<bool> KernelBuilder::lowerPad(const Node& node) {
  const Argument* padArg = node.arg("pad");
  const auto pad = padArg ? asIntList(padArg->value) : std::nullopt;
  const Argument* self = node.arg("self");
  const std::size_t rank = self && self->tensor ? graph_->tensor(*self->tensor)->shape.size() : 0;
  if (!pad || pad->size() % 2 != 0 || pad->size() > 2 * rank)
    return Failure{node.where() + ": padding that is not a list of (before, after) pairs per trailing dim"};
  if (std::any_of(pad->begin(), pad->end(), [](int64_t p) { return p < 0; }))
    return Failure{node.where() + ": negative padding (cropping) is left to PyTorch"};
  auto read = coordinateRead(node, "pads");
  if (!read) return read.error();
  const auto& [in, out, map] = read.value();
  std::vector<int64_t> before(rank, 0);
  for (std::size_t i = 0; i < pad->size() / 2; ++i) before[rank - 1 - i] = (*pad)[2 * i];
  std::vector<int64_t> strides(kernel_.shape.size(), 0);
  int64_t shift = 0;
  for (std::size_t p = 0; p < rank; ++p) {
    if (in->shape[p] == 1) continue;  // read at its one coordinate, wherever the padding puts it
    if (map[p] >= 0) strides[map[p]] = in->strides[p];
    shift -= before[p] * in->strides[p];
  }
  auto x = externalStrided(in->id, std::move(strides), map, false, shift);
  if (!x) return x.error();
  KernelValue v;
  v.op = ValueOp::Pad;
  v.args = {x.value()};
  v.params = {number(node, "value", 0.0)};
  v.dimMap = map;
  v.padBefore = before;
  v.padInner = in->shape;
  bind(out->id, push(std::move(v)));
  return true;
}

// torch.flip of a tensor read from outside: the output's element at coordinate c of a flipped dim
// is the input's at size - 1 - c, a read through that dim's stride negated from its last
// element. A flipped value this kernel computes is written first and flipped by the next kernel.
Outcome<bool> KernelBuilder::lowerFlip(const Node& node) {
  const Argument* self = node.arg("self");
  const auto rank = self && self->tensor ? static_cast<int64_t>(graph_->tensor(*self->tensor)->shape.size()) : 0;
  auto dims = flipDims(node, rank);
  if (!dims) return dims.error();
  const std::set<int64_t>& flipped = dims.value();
  auto read = coordinateRead(node, "flips");
  if (!read) return read.error();
  const auto& [in, out, map] = read.value();
  std::vector<int64_t> strides(kernel_.shape.size(), 0);
  int64_t shift = 0;
  for (int64_t p = 0; p < rank; ++p) {
    if (in->shape[p] == 1 || map[p] < 0) continue;
    const bool flip = flipped.count(p) > 0;
    strides[map[p]] = flip ? -in->strides[p] : in->strides[p];
    if (flip) shift += (in->shape[p] - 1) * in->strides[p];
  }
  auto x = externalStrided(in->id, std::move(strides), map, false, shift);
  if (!x) return x.error();
  const int v = unary(ops::fn::kIdentity, x.value());
  kernel_.values[v].dimMap = map;
  bind(out->id, v);
  return true;
}

// nn.Embedding's lookup and `table[index]` (index.Tensor with one int64 index on the first dim,
// as Swin's relative position bias reads its table): the output's element at (i..., j...) is the
// table's at (index[i...], j...). The index is read from outside, the table too: a table this
// kernel computes is written first and read by the next kernel.
Outcome<bool> KernelBuilder::lowerGather(const Node& node, const char* tableArg) {
  const Argument* table = node.arg(tableArg);
  const Argument* indices = node.arg("indices");
  std::string indexId;
  if (indices && indices->tensor) indexId = *indices->tensor;
  else if (indices && indices->tensors.size() == 1) indexId = indices->tensors[0];
  if (!table || !table->tensor || indexId.empty())
    return Failure{node.where() + ": indexing other than one index tensor on the first dim is left to PyTorch"};
  if (tensors_.count(indexId)) return Failure{node.where() + ": an index this kernel computes; the next kernel reads it written"};
  const TensorInfo* index = graph_->tensor(indexId);
  if (index->dtype != DType::Int64) return Failure{node.where() + ": an index of dtype " + index->dtype + " is left to PyTorch"};
  const TensorInfo* src = graph_->tensor(*table->tensor);
  if (src->shape.empty()) return Failure{node.where() + ": indexes a 0-dim tensor"};
  std::vector<int64_t> expect = index->shape;
  expect.insert(expect.end(), src->shape.begin() + 1, src->shape.end());
  if (graph_->tensor(node.outputs.at(0))->shape != expect) return Failure{node.where() + ": an index result of an unexpected shape"};
  auto read = coordinateRead(node, "indexes", tableArg);
  if (!read) return read.error();
  const auto& [in, out, map] = read.value();
  const std::size_t lead = index->shape.size();
  std::vector<int> indexMap(map.begin(), map.begin() + static_cast<std::ptrdiff_t>(lead));
  for (std::size_t p = 0; p < lead; ++p)
    if (index->shape[p] == 1) indexMap[p] = -1;
  auto i = external(indexId, indexMap);
  if (!i) return i.error();
  std::vector<int64_t> strides(kernel_.shape.size(), 0);
  for (std::size_t k = 1; k < in->shape.size(); ++k)
    if (in->shape[k] != 1 && map[lead + k - 1] >= 0) strides[map[lead + k - 1]] = in->strides[k];
  auto x = externalStrided(in->id, std::move(strides), map);
  if (!x) return x.error();
  bind(out->id, gather(x.value(), i.value(), in->shape[0], in->strides[0], map));
  return true;
}

int KernelBuilder::gather(int row, int index, int64_t rows, int64_t rowStride, std::vector<int> dimMap) {
  KernelValue v;
  v.op = ValueOp::Gather;
  v.args = {row, index};
  v.params = {static_cast<double>(rows), static_cast<double>(rowStride)};
  v.dimMap = std::move(dimMap);
  return push(std::move(v));
}

Outcome<int> KernelBuilder::reduce(const Node& node, int input, ReduceKind kind, std::vector<int64_t> dims,
                                   bool keepdim, const std::string& outId) {
  const auto map = kernel_.values[input].dimMap;
  const int rank = static_cast<int>(map.size());
  if (dims.empty())
    for (int d = 0; d < rank; ++d) dims.push_back(d);
  std::set<int> positions, reducedDims;
  for (int64_t d : dims) {
    int p = static_cast<int>(d < 0 ? d + rank : d);
    if (p < 0 || p >= rank) return Failure{node.where() + ": reduction dim " + std::to_string(d) + " out of range"};
    positions.insert(p);
    if (map[p] >= 0 && kernel_.shape[map[p]] != 1) reducedDims.insert(map[p]);
  }
  if (reducedDims.empty()) return Failure{node.where() + ": reduces only size-1 dims"};
  int lo = *reducedDims.begin(), hi = *reducedDims.rbegin() + 1;
  for (int d = lo; d < hi; ++d)
    if (!reducedDims.count(d) && kernel_.shape[d] != 1)
      return Failure{node.where() + ": reduces dims that are not adjacent; the generated kernels reduce one range"};
  if (kernel_.scans()) return Failure{node.where() + ": a scan kernel does not also reduce"};
  if (kernel_.reduces() && (kernel_.reduceBegin != lo || kernel_.reduceEnd != hi))
    return Failure{node.where() + ": reduces other dims than the kernel's earlier reduction"};
  kernel_.reduceBegin = lo;
  kernel_.reduceEnd = hi;
  KernelValue v;
  v.op = ValueOp::Reduce;
  v.reduce = kind;
  v.args = {input};
  for (int p = 0; p < rank; ++p) {
    if (!positions.count(p)) v.dimMap.push_back(map[p]);
    else if (keepdim) v.dimMap.push_back(-1);
  }
  const TensorInfo* out = outId.empty() ? nullptr : graph_->tensor(outId);
  if (out && out->shape.size() != v.dimMap.size())
    return Failure{node.where() + ": result rank differs from the reduction's (keepdim?)"};
  return push(std::move(v));
}

// A view of a value the kernel computes: the same value under the view's dims, where only size-1
// dims are added or removed; any other view of it is read by the next kernel from memory.
Outcome<bool> KernelBuilder::lowerView(const Node& node, ops::ViewKind kind) {
  const std::string& out0 = node.outputs.at(0);
  const Argument* self = node.arg("self");
  if (!self || !self->tensor) return Failure{node.where() + ": view without a tensor"};
  auto it = tensors_.find(*self->tensor);
  if (it == tensors_.end()) return true;  // a view of an external tensor: read through its strides
  if (!it->second.unsupported.empty()) {  // only a consumer of the view fails, with the reason
    for (const auto& o : node.outputs) tensors_[o] = it->second;
    return true;
  }
  const TensorInfo* src = graph_->tensor(*self->tensor);
  const TensorInfo* dst = graph_->tensor(out0);
  if (kind == ops::ViewKind::Permute)
    return Failure{node.where() + ": transposes a value this kernel computes; the next kernel reads it written"};
  if (kind == ops::ViewKind::Part && (node.outputs.size() != 1 || nonUnit(src->shape) != nonUnit(dst->shape)))
    return Failure{node.where() + ": takes part of a value this kernel computes; the next kernel reads it written"};
  if (kernel_.values[it->second.value].dimMap.size() != src->shape.size())
    return Failure{node.where() + ": views a value computed in a regrouped iteration space"};
  if (nonUnit(src->shape) != nonUnit(dst->shape))
    return Failure{node.where() + ": reshapes a computed value; only size-1 dims may be added or removed"};
  std::vector<int> srcMapped;
  const auto& sm = kernel_.values[it->second.value].dimMap;
  for (std::size_t p = 0; p < sm.size(); ++p)
    if (src->shape[p] != 1) srcMapped.push_back(sm[p]);
  KernelValue v;
  v.op = ValueOp::Unary;
  v.fn = ops::fn::kIdentity;
  v.args = {it->second.value};
  v.integer = kernel_.values[it->second.value].integer;
  std::size_t k = 0;
  for (int64_t s : dst->shape) v.dimMap.push_back(s == 1 ? -1 : srcMapped[k++]);
  bind(out0, push(std::move(v)));
  return true;
}

// An integer counter counted up (num_batches_tracked += 1, a write-back's source): exact int64
// arithmetic, where every other generated result is float32.
Outcome<bool> KernelBuilder::lowerIntegerCount(const Node& node) {
  const std::string& out0 = node.outputs.at(0);
  const Argument* other = node.arg("other");
  const auto step = other ? asNumber(other->value) : std::nullopt;
  if (!step || *step != std::floor(*step) || number(node, "alpha", 1) != 1)
    return Failure{node.where() + ": integer arithmetic other than adding a whole number is left to PyTorch"};
  // One element in a kernel of its own: an iteration space of [1], which no larger tensor joins
  // (an empty shape would read as no kernel at all).
  if (empty()) kernel_.shape = {1};
  else if (kernel_.numel() != 1) return Failure{node.where() + ": an integer counter is counted in a kernel of its own"};
  auto x = source(node, "self");
  if (!x) return x.error();
  if (!kernel_.values[x.value()].integer) return Failure{node.where() + ": adds to a value that is not an integer"};
  const int v = unary("add_int", x.value(), {*step});
  kernel_.values[v].integer = true;
  bind(out0, v);
  return true;
}

double KernelBuilder::Reduction::count(const std::vector<int64_t>& ds) const {
  double n = 1;
  if (ds.empty()) {
    for (int64_t s : self->shape) n *= static_cast<double>(s);
  } else {
    for (int64_t d : ds) n *= static_cast<double>(self->shape[d < 0 ? d + rank : d]);
  }
  return n;
}

// A registered reduction or normalization: the input and its parameters read once, then the
// reduced values built from ReduceKind reductions over one range of dims.
Outcome<bool> KernelBuilder::lowerReduction(const Node& node, const ops::ReduceDef& def) {
  if (def.form == ops::ReduceForm::ArgIndex || (def.indices && node.outputs.size() > 1)) return lowerArgReduce(node, def);
  const char* selfName = def.input.c_str();
  const Argument* self = node.arg(selfName);
  if (!self || !self->tensor) return Failure{node.where() + ": reduction without an input tensor"};
  if (node.arg("dtype") && !isNone(node, "dtype")) return Failure{node.where() + ": reductions with a dtype are left to PyTorch"};
  auto src = source(node, selfName);
  if (!src) return src.error();
  auto params = def.params(node);
  if (!params) return params.error();
  Reduction r;
  r.in = src.value();
  r.rank = static_cast<int>(kernel_.values[r.in].dimMap.size());
  r.self = graph_->tensor(*self->tensor);
  r.dims = params.value().dims;
  r.keepdim = params.value().keepdim;
  const std::string& out0 = node.outputs.at(0);
  switch (def.form) {
    case ops::ReduceForm::Reduce:
    case ops::ReduceForm::Mean: {
      auto v = reduce(node, r.in, def.kind, r.dims, r.keepdim, out0);
      if (!v) return v.error();
      int result = v.value();
      if (def.form == ops::ReduceForm::Mean) result = binary(ops::fn::kDiv, result, constant(r.count(r.dims)));
      bind(out0, result);
      return true;
    }
    case ops::ReduceForm::Softmax:
    case ops::ReduceForm::LogSoftmax:
    case ops::ReduceForm::LogSumExp: return lowerSoftmax(node, def.form, r);
    case ops::ReduceForm::LayerNorm: return lowerLayerNorm(node, r, params.value().eps);
    case ops::ReduceForm::Variance:
    case ops::ReduceForm::StdDev: return lowerVariance(node, r, params.value().correction, def.form == ops::ReduceForm::StdDev);
    case ops::ReduceForm::ArgIndex: break;  // lowered above, before its input is read
  }
  return Failure{node.where() + ": no generated kernel for this reduction; it stays in PyTorch"};
}

// var and std: two passes (the mean, then the squared deviations from it), as layer norm; the
// divisor is clamped at 0 as PyTorch's, so a correction of at least the count gives inf or NaN.
Outcome<bool> KernelBuilder::lowerVariance(const Node& node, const Reduction& r, double correction, bool root) {
  const std::string& out0 = node.outputs.at(0);
  auto sum = reduce(node, r.in, ReduceKind::Sum, r.dims, true, "");
  if (!sum) return sum.error();
  const int centered = binary(ops::fn::kSub, r.in, binary(ops::fn::kDiv, sum.value(), constant(r.count(r.dims))));
  auto sq = reduce(node, binary(ops::fn::kMul, centered, centered), ReduceKind::Sum, r.dims, r.keepdim, out0);
  if (!sq) return sq.error();
  int result = binary(ops::fn::kDiv, sq.value(), constant(std::max(0.0, r.count(r.dims) - correction)));
  if (root) result = unary(ops::fn::kSqrt, result);
  bind(out0, result);
  return true;
}

// softmax, log_softmax and logsumexp: the row's max, then the sum of exponentials shifted by it.
Outcome<bool> KernelBuilder::lowerSoftmax(const Node& node, ops::ReduceForm form, const Reduction& r) {
  const std::string& out0 = node.outputs.at(0);
  auto m = reduce(node, r.in, ReduceKind::Max, r.dims, true, "");
  if (!m) return m.error();
  int shifted = binary(ops::fn::kSub, r.in, m.value());
  int e = unary(ops::fn::kExp, shifted);
  auto s = reduce(node, e, ReduceKind::Sum, r.dims, true, "");
  if (!s) return s.error();
  int result;
  if (form == ops::ReduceForm::LogSumExp) {
    result = binary(ops::fn::kAdd, unary(ops::fn::kLog, s.value()), m.value());
    if (!r.keepdim) {  // drop the reduced positions from the map, as the result's shape does
      KernelValue squeeze;
      squeeze.op = ValueOp::Unary;
      squeeze.fn = ops::fn::kIdentity;
      squeeze.args = {result};
      auto mapOnly = reduce(node, r.in, ReduceKind::Sum, r.dims, false, "");  // only for its dim map
      if (!mapOnly) return mapOnly.error();
      squeeze.dimMap = kernel_.values[mapOnly.value()].dimMap;
      kernel_.values.pop_back();
      result = push(std::move(squeeze));
    }
  } else if (form == ops::ReduceForm::Softmax) {
    result = binary(ops::fn::kDiv, e, s.value());
  } else {
    result = binary(ops::fn::kSub, shifted, unary(ops::fn::kLog, s.value()));
  }
  if (graph_->tensor(out0)->shape.size() != kernel_.values[result].dimMap.size())
    return Failure{node.where() + ": result rank differs from the lowered reduction"};
  bind(out0, result);
  return true;
}

// native_layer_norm over its normalized_shape (r.dims, the trailing dims): mean, then the mean of
// squared deviations, weight and bias; its mean and rstd outputs bound where the node has them.
Outcome<bool> KernelBuilder::lowerLayerNorm(const Node& node, const Reduction& r, double eps) {
  const std::vector<int64_t>& dims = r.dims;
  const double n = r.count(dims);
  auto sum = reduce(node, r.in, ReduceKind::Sum, dims, true, "");
  if (!sum) return sum.error();
  int mean = binary(ops::fn::kDiv, sum.value(), constant(n));
  int centered = binary(ops::fn::kSub, r.in, mean);
  auto sq = reduce(node, binary(ops::fn::kMul, centered, centered), ReduceKind::Sum, dims, true, "");
  if (!sq) return sq.error();
  int rstd = unary(ops::fn::kRsqrt, binary(ops::fn::kAdd, binary(ops::fn::kDiv, sq.value(), constant(n)), constant(eps)));
  int y = binary(ops::fn::kMul, centered, rstd);
  for (const char* name : {"weight", "bias"}) {
    const Argument* a = node.arg(name);
    if (!a || !a->tensor) continue;
    const TensorInfo* t = graph_->tensor(*a->tensor);
    std::vector<int> m(t->shape.size(), -1);
    const auto& ym = kernel_.values[y].dimMap;
    for (std::size_t p = 0; p < m.size(); ++p)
      if (t->shape[p] != 1) m[p] = ym[ym.size() - m.size() + p];
    int w = -1;
    if (auto it = tensors_.find(t->id); it != tensors_.end()) w = it->second.value;
    else {
      auto v = external(t->id, m);
      if (!v) return v.error();
      w = v.value();
    }
    y = binary(std::string(name) == "weight" ? ops::fn::kMul : ops::fn::kAdd, y, w);
  }
  bind(node.outputs.at(0), y);
  if (node.outputs.size() > 2) {
    bind(node.outputs[1], mean);
    bind(node.outputs[2], rstd);
  }
  return true;
}

Outcome<bool> KernelBuilder::lower(const Node& node) {
  const std::string b = baseName(node.op);
  if (const std::string* target = writeBackTarget(*graph_, node)) {
    auto v = source(node, "src");
    if (!v) return v.error();
    bind(*target, v.value());
    bind(node.outputs.at(0), v.value());
    return true;
  }
  if (node.kind == NodeKind::Inplace) return Failure{node.where() + ": in-place operators are left to PyTorch"};
  if (node.outputs.empty()) return Failure{node.where() + ": no output"};
  const std::string out0 = node.outputs[0];

  const ops::OpDef* def = ops::findOp(node.op);
  if (def && def->view) return lowerView(node, *def->view);
  if (b == ops::fn::kAdd && graph_->tensor(out0)->dtype == DType::Int64) return lowerIntegerCount(node);
  if (def && def->fillValue) return lowerFill(node, def->fillValue(node));
  if (def && def->coordinate) return lowerCoordinate(node, *def->coordinate);
  if (def && def->lower) return lowerRegistered(node, *def);
  if (def && def->reduce) return lowerReduction(node, *def->reduce);
  if (def && def->composite) return lowerComposite(node, *def->composite);
  if (isConcatenation(node.op)) return lowerConcat(node);
  return Failure{node.where() + ": no generated kernel for this operator; it stays in PyTorch"};
}

}  // namespace stitch::agents::builtin
