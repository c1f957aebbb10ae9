// Lowering of the composite operators beyond elementwise chains and plain reductions — arg
// reductions, any/all, vector norms, losses, batch/group/instance norm, pooling and scans — into
// a FusedKernel's values, so they fuse with what surrounds them. Each composite's registry entry
// (agents/builtin/ops/CompositeOps.cpp) names its lowering and what the lowering would otherwise
// read from the operator's name. Argument names follow the ATen schemas of both torch 1.13 and 2.x
// (e.g. eps/epsilon, the batch-norm variants).
#include "agents/builtin/lower/KernelBuilder.h"

#include "agents/builtin/kernel/NodeArgs.h"
#include "agents/builtin/ops/OpDef.h"

#include <cmath>
#include <functional>
#include <limits>

namespace stitch::agents::builtin {
namespace {

// A list argument of `rank` entries: a single entry is repeated (PyTorch's `int[2]` accepts one),
// an empty or missing one takes `fallback`.
std::vector<int64_t> spatial(const Node& node, const char* name, std::size_t rank, const std::vector<int64_t>& fallback) {
  const Argument* a = node.arg(name);
  auto v = a ? asIntList(a->value) : std::nullopt;
  if (!v || v->empty()) return fallback;
  if (v->size() == 1 && rank > 1) return std::vector<int64_t>(rank, (*v)[0]);
  return *v;
}

// The composite lowering of `op`'s registry entry, or null.
const ops::Composite* compositeOf(const std::string& op) {
  const ops::OpDef* d = ops::findOp(op);
  return d && d->composite ? &*d->composite : nullptr;
}

std::vector<int64_t> broadcastShape(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> r(std::max(a.size(), b.size()), 1);
  for (std::size_t i = 0; i < r.size(); ++i) {
    const std::size_t p = r.size() - 1 - i;
    const int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1, y = i < b.size() ? b[b.size() - 1 - i] : 1;
    r[p] = x == 1 ? y : x;
  }
  return r;
}

}  // namespace

Outcome<int> KernelBuilder::source(const Node& node, const char* name) {
  const Argument* a = node.arg(name);
  if (!a || !a->tensor) return Failure{node.where() + ": argument " + name + " is not a tensor"};
  const TensorInfo* t = graph_->tensor(*a->tensor);
  if (auto it = tensors_.find(*a->tensor); it != tensors_.end()) {
    if (!it->second.unsupported.empty()) return Failure{it->second.unsupported};
    if (kernel_.values[it->second.value].dimMap.size() != t->shape.size())
      return Failure{node.where() + ": operand " + t->id + " was computed in a regrouped iteration space"};
    return it->second.value;
  }
  if (auto c = constantValue(*t)) return constant(*c);
  if (kernel_.shape.empty()) kernel_.shape = t->shape;
  auto m = alignedMap(t->shape, {}, node);
  if (!m) return m.error();
  return external(t->id, m.value());
}

Outcome<int> KernelBuilder::channelParam(const Node& node, const char* name, int like, int dim) {
  const Argument* a = node.arg(name);
  if (!a || !a->tensor) return Failure{node.where() + ": " + name + " is not a tensor"};
  const TensorInfo* t = graph_->tensor(*a->tensor);
  if (tensors_.count(t->id)) return Failure{node.where() + ": " + name + " is computed in this kernel; parameters are read"};
  const auto& map = kernel_.values[like].dimMap;
  if (t->shape.size() != 1) return Failure{node.where() + ": " + name + " is not one value per channel"};
  // As a value of `like`'s rank ([C, 1, 1] against [N, C, H, W]), so that it broadcasts at the
  // channel's position rather than right-aligned.
  std::vector<int> m(map.size(), -1);
  std::vector<int64_t> strides(kernel_.shape.size(), 0);
  if (t->shape[0] != 1 && map.at(dim) >= 0) {
    m[dim] = map[dim];
    strides[map[dim]] = t->strides[0];
  }
  return externalStrided(t->id, std::move(strides), std::move(m));
}

Outcome<int> KernelBuilder::normalize(const Node& node, int x, const std::vector<int64_t>& rowDims, double eps,
                                      std::pair<int, int>* stats) {
  double n = 1;
  for (int64_t p : rowDims) {
    const int d = kernel_.values[x].dimMap.at(p);
    if (d >= 0) n *= static_cast<double>(kernel_.shape[d]);
  }
  // Two passes (mean, then squared deviations from it): no cancellation, as PyTorch's Welford.
  auto sum = reduce(node, x, ReduceKind::Sum, rowDims, true, "");
  if (!sum) return sum.error();
  const int mean = binary(ops::fn::kDiv, sum.value(), constant(n));
  const int centered = binary(ops::fn::kSub, x, mean);
  auto sq = reduce(node, binary(ops::fn::kMul, centered, centered), ReduceKind::Sum, rowDims, true, "");
  if (!sq) return sq.error();
  const int rstd = unary(ops::fn::kRsqrt, binary(ops::fn::kAdd, binary(ops::fn::kDiv, sq.value(), constant(n)), constant(eps)));
  if (stats) *stats = {mean, rstd};
  return binary(ops::fn::kMul, centered, rstd);
}

Outcome<bool> KernelBuilder::lowerComposite(const Node& node, const ops::Composite& lowering) {
  struct Dispatch {
    KernelBuilder& k;
    const Node& node;
    Outcome<bool> operator()(const ops::AnyAll& op) { return k.lowerAnyAll(node, op); }
    Outcome<bool> operator()(const ops::VectorNorm& op) { return k.lowerVectorNorm(node, op); }
    Outcome<bool> operator()(const ops::Loss& op) { return k.lowerLoss(node, op); }
    Outcome<bool> operator()(const ops::NllLoss&) { return k.lowerNllLoss(node); }
    Outcome<bool> operator()(const ops::BatchNorm& op) { return k.lowerBatchNorm(node, op); }
    Outcome<bool> operator()(const ops::GroupNorm&) { return k.lowerGroupNorm(node); }
    Outcome<bool> operator()(const ops::Pool& op) { return k.lowerPool(node, op); }
    Outcome<bool> operator()(const ops::DepthwiseConv&) { return k.lowerDepthwiseConv(node); }
    Outcome<bool> operator()(const ops::Scan& op) { return k.lowerScan(node, op); }
  };
  return std::visit(Dispatch{*this, node}, lowering);
}

// any/all: the Max (any) or Min (all) of the elements' nonzero.
Outcome<bool> KernelBuilder::lowerAnyAll(const Node& node, const ops::AnyAll& op) {
  auto in = source(node, "self");
  if (!in) return in.error();
  std::vector<int64_t> dims;
  if (const Argument* d = node.arg("dim")) dims = asIntList(d->value).value_or(std::vector<int64_t>{});
  const bool keepdim = number(node, "keepdim", 0) != 0;
  auto r = reduce(node, unary("nonzero", in.value()), op.kind, dims, keepdim, node.outputs[0]);
  if (!r) return r.error();
  bind(node.outputs[0], r.value());
  return true;
}

// argmax/argmin, and max/min along a dim with their indices: one pass keeps (value, index) and
// breaks ties towards the first index; NaN wins, as in PyTorch.
Outcome<bool> KernelBuilder::lowerArgReduce(const Node& node, const ops::ReduceDef& def) {
  auto in = source(node, "self");
  if (!in) return in.error();
  std::vector<int64_t> dims;
  if (const Argument* d = node.arg("dim")) dims = asIntList(d->value).value_or(std::vector<int64_t>{});
  const bool keepdim = number(node, "keepdim", 0) != 0;
  const bool isMax = def.kind == ReduceKind::ArgMax || def.kind == ReduceKind::Max;
  auto r = reduce(node, in.value(), isMax ? ReduceKind::ArgMax : ReduceKind::ArgMin, dims, keepdim, node.outputs[0]);
  if (!r) return r.error();
  KernelValue idx;
  idx.op = ValueOp::ArgIndex;
  idx.args = {r.value()};
  idx.dimMap = kernel_.values[r.value()].dimMap;
  idx.integer = true;
  const int i = push(std::move(idx));
  if (def.form == ops::ReduceForm::ArgIndex) {  // argmax, argmin: the index alone
    bind(node.outputs[0], i);
  } else {
    bind(node.outputs[0], r.value());
    bind(node.outputs[1], i);
  }
  return true;
}

// linalg_vector_norm(ord) and norm(p): L2 as sqrt of the sum of squares, L1, L∞/L-∞ as max/min
// of |x|, L0 as a count, any other p as (Σ|x|^p)^(1/p).
Outcome<bool> KernelBuilder::lowerVectorNorm(const Node& node, const ops::VectorNorm& op) {
  if (!isNone(node, "dtype")) return Failure{node.where() + ": norms with a dtype are left to PyTorch"};
  const Argument* pa = node.arg(op.order);
  double p = 2;
  if (pa) {
    if (auto s = std::get_if<std::string>(&pa->value)) {
      if (*s != "fro") return Failure{node.where() + ": the " + *s + " norm is left to PyTorch"};
    } else if (auto n = asNumber(pa->value)) {
      p = *n;
    }
  }
  auto in = source(node, "self");
  if (!in) return in.error();
  std::vector<int64_t> dims;
  if (const Argument* d = node.arg("dim")) dims = asIntList(d->value).value_or(std::vector<int64_t>{});
  const bool keepdim = number(node, "keepdim", 0) != 0;
  const int x = in.value();
  const int a = unary(ops::fn::kAbs, x);
  const std::string& out = node.outputs[0];
  Outcome<int> r = Failure{""};
  int result = -1;
  if (p == 2) {
    r = reduce(node, binary(ops::fn::kMul, x, x), ReduceKind::Sum, dims, keepdim, out);
    if (r) result = unary(ops::fn::kSqrt, r.value());
  } else if (p == 1) {
    r = reduce(node, a, ReduceKind::Sum, dims, keepdim, out);
    if (r) result = r.value();
  } else if (std::isinf(p)) {
    r = reduce(node, a, p > 0 ? ReduceKind::Max : ReduceKind::Min, dims, keepdim, out);
    if (r) result = r.value();
  } else if (p == 0) {
    r = reduce(node, unary("nonzero", x), ReduceKind::Sum, dims, keepdim, out);
    if (r) result = r.value();
  } else {
    r = reduce(node, unary("pow_scalar", a, {p}), ReduceKind::Sum, dims, keepdim, out);
    if (r) result = unary("pow_scalar", r.value(), {1.0 / p});
  }
  if (!r) return r.error();
  bind(out, result);
  return true;
}

// Pointwise terms as PyTorch's CUDA kernels compute them, then the `reduction`.
Outcome<bool> KernelBuilder::lowerLoss(const Node& node, const ops::Loss& op) {
  const Argument* s = node.arg("self");
  const Argument* t = node.arg("target");
  if (!s || !s->tensor || !t || !t->tensor) return Failure{node.where() + ": loss without input and target tensors"};
  const auto shape = broadcastShape(graph_->tensor(*s->tensor)->shape, graph_->tensor(*t->tensor)->shape);
  Outcome<int> terms = Failure{""};
  if (op.terms == ops::LossTerms::BinaryCrossEntropy) {
    if (!isNone(node, "weight")) return Failure{node.where() + ": binary_cross_entropy with a weight is left to PyTorch"};
    terms = elementwise(node, "bce", {"self", "target"}, {}, &shape);
  } else if (op.terms == ops::LossTerms::KlDiv) {  // kl_div(self = log-probabilities, target)
    terms = elementwise(node, number(node, "log_target", 0) != 0 ? "kl_div_log_target" : "kl_div", {"self", "target"},
                        {}, &shape);
  } else {  // a function of the difference
    auto d = elementwise(node, ops::fn::kSub, {"self", "target"}, {}, &shape);
    if (!d) return d.error();
    if (op.terms == ops::LossTerms::Squared) terms = unary(ops::fn::kSquare, d.value());
    else if (op.terms == ops::LossTerms::Absolute) terms = unary(ops::fn::kAbs, d.value());
    else if (op.terms == ops::LossTerms::SmoothL1) terms = unary(ops::fn::kSmoothL1, unary(ops::fn::kAbs, d.value()), {number(node, "beta", 1.0)});
    else terms = unary(ops::fn::kHuber, unary(ops::fn::kAbs, d.value()), {number(node, "delta", 1.0)});
  }
  if (!terms) return terms.error();
  return reduceLoss(node, terms.value());
}

// nll_loss, what CrossEntropyLoss computes after its log_softmax: per sample the negated
// log-probability of its target class (a Gather along the class dim of [N, C], the target the
// index), nothing where the target is ignore_index; the mean divides by the samples counted, which
// is also the second result (total_weight), as PyTorch's. Class weights are left to PyTorch.
Outcome<bool> KernelBuilder::lowerNllLoss(const Node& node) {
  if (!isNone(node, "weight")) return Failure{node.where() + ": nll_loss with class weights is left to PyTorch"};
  const Argument* s = node.arg("self");
  const Argument* t = node.arg("target");
  if (!s || !s->tensor || !t || !t->tensor) return Failure{node.where() + ": nll_loss without input and target tensors"};
  if (tensors_.count(*s->tensor) || tensors_.count(*t->tensor))
    return Failure{node.where() + ": a loss over values this kernel computes; the next kernel reads them written"};
  const TensorInfo* x = graph_->tensor(*s->tensor);
  const TensorInfo* target = graph_->tensor(*t->tensor);
  if (x->shape.size() != 2 || target->shape.size() != 1 || target->shape[0] != x->shape[0])
    return Failure{node.where() + ": nll_loss other than of [N, C] log-probabilities and [N] targets is left to PyTorch"};
  if (x->dtype != kComputeType || target->dtype != DType::Int64)
    return Failure{node.where() + ": nll_loss of " + x->dtype + " with " + target->dtype + " targets is left to PyTorch"};
  const int reduction = static_cast<int>(number(node, "reduction", 1));
  if (reduction != 1 && reduction != 2) return Failure{node.where() + ": nll_loss without reduction is left to PyTorch"};
  if (!kernel_.shape.empty()) return Failure{node.where() + ": a loss over the samples opens a kernel of its own"};
  kernel_.shape = target->shape;
  const std::vector<int> map{x->shape[0] == 1 ? -1 : 0};
  auto index = external(target->id, map);
  if (!index) return index.error();
  std::vector<int64_t> strides{map[0] < 0 ? 0 : x->strides[0]};
  auto row = externalStrided(x->id, std::move(strides), map);
  if (!row) return row.error();
  const int picked = gather(row.value(), index.value(), x->shape[1], x->strides[1], map);
  const int counted = binary("ne", index.value(), constant(number(node, "ignore_index", -100)));
  KernelValue term;
  term.op = ValueOp::Select;
  term.fn = ops::fn::kWhere;
  term.args = {counted, unary(ops::fn::kNeg, picked), constant(0.0)};
  term.dimMap = map;
  const int terms = push(std::move(term));
  auto sum = reduce(node, terms, ReduceKind::Sum, {}, false, node.outputs[0]);
  if (!sum) return sum.error();
  const std::string totalWeight = node.outputs.size() > 1 ? node.outputs[1] : std::string();
  auto count = reduce(node, counted, ReduceKind::Sum, {}, false, totalWeight);
  if (!count) return count.error();
  bind(node.outputs[0], reduction == 1 ? binary(ops::fn::kDiv, sum.value(), count.value()) : sum.value());
  if (!totalWeight.empty()) bind(totalWeight, count.value());
  return true;
}

Outcome<bool> KernelBuilder::reduceLoss(const Node& node, int terms) {
  const int reduction = static_cast<int>(number(node, "reduction", 1));
  const std::string& out = node.outputs[0];
  if (reduction == 0) {
    bind(out, terms);
    return true;
  }
  auto r = reduce(node, terms, ReduceKind::Sum, {}, false, out);
  if (!r) return r.error();
  double n = 1;
  for (int d : kernel_.values[terms].dimMap)
    if (d >= 0) n *= static_cast<double>(kernel_.shape[d]);
  bind(out, reduction == 1 ? binary(ops::fn::kDiv, r.value(), constant(n)) : r.value());
  return true;
}

// Inference: (x − running_mean) / sqrt(running_var + eps) · weight + bias, elementwise.
// Training (what instance norm decomposes into): statistics over every dim but the channel's,
// which the kernel can reduce when the batch dim has size 1; running statistics are not updated.
Outcome<bool> KernelBuilder::lowerBatchNorm(const Node& node, const ops::BatchNorm& op) {
  const bool training = !op.inference && number(node, "training", 0) != 0;
  const double eps = number(node, "eps", number(node, "epsilon", 1e-5));
  auto in = source(node, "input");
  if (!in) return in.error();
  int x = in.value();
  const int rank = static_cast<int>(kernel_.values[x].dimMap.size());
  if (rank < 2) return Failure{node.where() + ": batch norm of a tensor without a channel dim"};
  int y = -1;
  if (!training) {
    if (isNone(node, "running_mean") || isNone(node, "running_var"))
      return Failure{node.where() + ": inference batch norm without running statistics"};
    auto mean = channelParam(node, "running_mean", x, 1);
    if (!mean) return mean.error();
    auto var = channelParam(node, "running_var", x, 1);
    if (!var) return var.error();
    const int invstd = binary(ops::fn::kDiv, constant(1.0), unary(ops::fn::kSqrt, binary(ops::fn::kAdd, var.value(), constant(eps))));
    y = binary(ops::fn::kMul, binary(ops::fn::kSub, x, mean.value()), invstd);
  } else {
    if (!isNone(node, "running_mean") || !isNone(node, "running_var"))
      return Failure{node.where() + ": training batch norm updates its running statistics in place; left to PyTorch"};
    std::vector<int64_t> dims{0};
    for (int d = 2; d < rank; ++d) dims.push_back(d);
    auto n = normalize(node, x, dims, eps);
    if (!n) return n.error();
    y = n.value();
  }
  if (!isNone(node, "weight")) {
    auto w = channelParam(node, "weight", x, 1);
    if (!w) return w.error();
    y = binary(ops::fn::kMul, y, w.value());
  }
  if (!isNone(node, "bias")) {
    auto bias = channelParam(node, "bias", x, 1);
    if (!bias) return bias.error();
    y = binary(ops::fn::kAdd, y, bias.value());
  }
  bind(node.outputs[0], y);
  for (std::size_t i = 1; i < node.outputs.size(); ++i)
    tensors_[node.outputs[i]] = {-1, node.where() + ": the saved statistics of batch norm are not generated"};
  return true;
}

// Group norm regroups the iteration space as [N, G, C/G, spatial...] so that each group is one
// contiguous reduced range; it therefore opens its kernel, and the per-channel weight and bias
// are read with strides over (G, C/G).
Outcome<bool> KernelBuilder::lowerGroupNorm(const Node& node) {
  if (!kernel_.shape.empty()) return Failure{node.where() + ": group norm opens its own kernel"};
  const Argument* a = node.arg("input");
  if (!a || !a->tensor) return Failure{node.where() + ": group norm without an input tensor"};
  const TensorInfo* t = graph_->tensor(*a->tensor);
  const int64_t groups = static_cast<int64_t>(number(node, "group", 0));
  if (t->shape.size() < 2 || groups <= 0 || t->shape[1] % groups != 0)
    return Failure{node.where() + ": group norm whose channels do not split into its groups"};
  const int64_t cg = t->shape[1] / groups;
  std::vector<int64_t> shape{t->shape[0], groups, cg}, strides{t->strides[0], t->strides[1] * cg, t->strides[1]};
  for (std::size_t d = 2; d < t->shape.size(); ++d) {
    shape.push_back(t->shape[d]);
    strides.push_back(t->strides[d]);
  }
  kernel_.shape = shape;
  const int rank = static_cast<int>(shape.size());
  std::vector<int> map(rank);
  for (int d = 0; d < rank; ++d) map[d] = shape[d] == 1 ? -1 : d;
  auto x = externalStrided(t->id, strides, map);
  if (!x) return x.error();
  std::vector<int64_t> dims;
  for (int d = 2; d < rank; ++d) dims.push_back(d);
  std::pair<int, int> stats;
  auto n = normalize(node, x.value(), dims, number(node, "eps", 1e-5), &stats);
  if (!n) return n.error();
  int y = n.value();
  for (const char* name : {"weight", "bias"}) {
    if (isNone(node, name)) continue;
    const TensorInfo* p = graph_->tensor(*node.arg(name)->tensor);
    if (tensors_.count(p->id) || p->shape.size() != 1) return Failure{node.where() + ": " + name + " is not a parameter"};
    std::vector<int64_t> ps(rank, 0);
    ps[1] = p->strides[0] * cg;
    ps[2] = p->strides[0];
    std::vector<int> pm(rank, -1);
    pm[1] = map[1];
    pm[2] = map[2];
    auto v = externalStrided(p->id, ps, pm);
    if (!v) return v.error();
    y = binary(std::string(name) == "weight" ? ops::fn::kMul : ops::fn::kAdd, y, v.value());
  }
  bind(node.outputs[0], y);
  if (node.outputs.size() > 2) {
    bind(node.outputs[1], stats.first);
    bind(node.outputs[2], stats.second);
  }
  return true;
}

// The window of a max/avg pooling node over the trailing 1–3 dims of `x`.
Outcome<PoolSpec> KernelBuilder::poolSpec(const Node& node, const ops::Pool& op, const TensorInfo& x,
                                          const TensorInfo& out) const {
  const std::size_t r = static_cast<std::size_t>(op.rank);
  if (x.shape.size() != out.shape.size() || x.shape.size() < r)
    return Failure{node.where() + ": pooling input and output ranks differ"};
  PoolSpec spec;
  spec.max = op.max;
  spec.kernel = spatial(node, "kernel_size", r, {});
  spec.stride = spatial(node, "stride", r, spec.kernel);
  spec.padding = spatial(node, "padding", r, std::vector<int64_t>(r, 0));
  spec.dilation = spec.max ? spatial(node, "dilation", r, std::vector<int64_t>(r, 1)) : std::vector<int64_t>(r, 1);
  spec.countIncludePad = number(node, "count_include_pad", 1) != 0;
  spec.divisorOverride = static_cast<int64_t>(number(node, "divisor_override", 0));
  if (spec.kernel.size() != r || spec.stride.size() != r || spec.padding.size() != r || spec.dilation.size() != r)
    return Failure{node.where() + ": pooling window arguments do not match its rank"};
  const std::size_t lead = x.shape.size() - r;
  for (std::size_t d = 0; d < lead; ++d)
    if (x.shape[d] != out.shape[d]) return Failure{node.where() + ": pooling changes a leading dim"};
  spec.inSize.assign(x.shape.begin() + static_cast<std::ptrdiff_t>(lead), x.shape.end());
  return spec;
}

// The pooling node's input and output tensors.
Outcome<std::pair<const TensorInfo*, const TensorInfo*>> KernelBuilder::poolTensors(const Node& node) const {
  const Argument* a = node.arg("self");
  if (!a || !a->tensor) return Failure{node.where() + ": pooling without an input tensor"};
  return std::make_pair(graph_->tensor(*a->tensor), graph_->tensor(node.outputs[0]));
}

void KernelBuilder::bindPoolIndices(const Node& node) {
  for (std::size_t i = 1; i < node.outputs.size(); ++i)
    tensors_[node.outputs[i]] = {-1, node.where() + ": the indices of max pooling are not generated"};
}

// Max/avg pooling: the iteration space is the pooled output, each element reads its window of
// the (external) input. It opens its kernel; what follows fuses.
Outcome<bool> KernelBuilder::lowerPool(const Node& node, const ops::Pool& op) {
  if (!kernel_.shape.empty()) return Failure{node.where() + ": pooling opens its own kernel"};
  auto io = poolTensors(node);
  if (!io) return io.error();
  auto [x, out] = io.value();
  auto spec = poolSpec(node, op, *x, *out);
  if (!spec) return spec.error();
  auto opened = openWindow(node, *x, *out, std::move(spec).value(), nullptr);
  if (!opened) return opened.error();
  bindPoolIndices(node);
  return true;
}

// The open kernel computes the pooled tensor elementwise over its own shape: its values move into
// the window's prologue, its inputs become window inputs read at the window's elements, and the
// kernel iterates over the pooled output. Every tensor it bound is then out of reach.
Outcome<bool> KernelBuilder::poolOverKernel(const Node& node) {
  const ops::Composite* lowering = compositeOf(node.op);
  const ops::Pool* pool = lowering ? std::get_if<ops::Pool>(lowering) : nullptr;
  if (!pool) return Failure{node.where() + ": not a pooling operator"};
  if (kernel_.shape.empty()) return Failure{node.where() + ": no open kernel computes the pooled tensor"};
  if (kernel_.reduceBegin >= 0)
    return Failure{node.where() + ": the open kernel reduces or scans; only an elementwise producer joins a window"};
  auto io = poolTensors(node);
  if (!io) return io.error();
  auto [x, out] = io.value();
  auto spec = poolSpec(node, *pool, *x, *out);
  if (!spec) return spec.error();
  auto bound = tensors_.find(x->id);
  if (bound == tensors_.end() || bound->second.value < 0)
    return Failure{node.where() + ": the pooled tensor is not computed by the open kernel"};
  const int root = bound->second.value;
  if (kernel_.shape != x->shape) return Failure{node.where() + ": the open kernel iterates over another shape"};
  const auto& rootMap = kernel_.values[root].dimMap;
  for (int d = 0; d < static_cast<int>(x->shape.size()); ++d)
    if (rootMap.size() != x->shape.size() || rootMap[d] != (x->shape[d] == 1 ? -1 : d))
      return Failure{node.where() + ": the pooled tensor is a view across the open kernel's dims"};
  // The producer's values, operands first.
  std::vector<int> order;
  std::set<int> seen;
  std::string refused;
  std::function<void(int)> visit = [&](int id) {
    if (!seen.insert(id).second) return;
    const KernelValue& v = kernel_.values[id];
    const bool elementwise = v.op == ValueOp::Input || v.op == ValueOp::Constant || v.op == ValueOp::Unary ||
                             v.op == ValueOp::Binary || v.op == ValueOp::Select;
    if (!elementwise || v.integer || (v.op == ValueOp::Input && kernel_.inputs[v.input].window))
      refused = node.where() + ": the pooled tensor's producer is not elementwise over plain loads";
    for (int a : v.args) visit(a);
    order.push_back(id);
  };
  visit(root);
  if (!refused.empty()) return Failure{refused};
  FusedKernel producer = std::move(kernel_);
  kernel_ = FusedKernel{};
  kernel_.shape = out->shape;
  kernel_.nodeIds = std::move(producer.nodeIds);
  inputsByKey_.clear();
  std::map<int, int> renamed;  // the producer's value index -> the prologue's
  PoolSpec window = std::move(spec).value();
  for (int id : order) {
    KernelValue v = producer.values[id];
    for (int& a : v.args) a = renamed.at(a);
    if (v.op == ValueOp::Input) {
      KernelInput in = producer.inputs[v.input];
      in.window = true;
      in.linear = false;
      v.input = addInput(std::move(in));
    }
    v.dimMap.clear();
    renamed[id] = static_cast<int>(window.prologue.size());
    window.prologue.push_back(std::move(v));
  }
  for (auto& [id, t] : tensors_) t = {-1, node.where() + ": " + id + " is computed inside the pooling window"};
  const int rank = static_cast<int>(out->shape.size());
  KernelValue v;
  v.op = ValueOp::Pool;
  v.pool = std::move(window);
  v.dimMap.resize(rank);
  for (int d = 0; d < rank; ++d) v.dimMap[d] = out->shape[d] == 1 ? -1 : d;
  bind(node.outputs[0], push(std::move(v)));
  bindPoolIndices(node);
  return true;
}

bool generatesConvolution(const Graph& graph, const Node& node) {
  const ops::Composite* lowering = compositeOf(node.op);
  if (!lowering || !std::holds_alternative<ops::DepthwiseConv>(*lowering) || node.outputs.size() != 1) return false;
  const Argument* in = node.arg("input");
  const Argument* w = node.arg("weight");
  if (!in || !in->tensor || !w || !w->tensor || !isNone(node, "bias")) return false;
  const Argument* tr = node.arg("transposed");
  if (tr && std::holds_alternative<bool>(tr->value) && std::get<bool>(tr->value)) return false;
  const TensorInfo* x = graph.tensor(*in->tensor);
  const TensorInfo* wt = graph.tensor(*w->tensor);
  const TensorInfo* out = graph.tensor(node.outputs[0]);
  if (!x || !wt || !out || x->shape.size() < 3 || x->shape.size() > 5 || wt->shape.size() != x->shape.size() ||
      out->shape.size() != x->shape.size())
    return false;
  const int64_t channels = x->shape[1];
  return channels > 1 && number(node, "groups", 1) == static_cast<double>(channels) && wt->shape[0] == channels &&
         wt->shape[1] == 1 && out->shape[0] == x->shape[0] && out->shape[1] == channels;
}

// A depthwise convolution as a weighted pooling window: the iteration space is the output, each
// element sums its window of the (external) input times its channel's weights. It opens its
// kernel; the bias the graph split off, a batch norm and an activation fuse after it.
Outcome<bool> KernelBuilder::lowerDepthwiseConv(const Node& node) {
  if (!generatesConvolution(*graph_, node))
    return Failure{node.where() + ": only depthwise convolutions are generated; the others run in cuDNN"};
  if (!kernel_.shape.empty()) return Failure{node.where() + ": a convolution opens its own kernel"};
  const TensorInfo* x = graph_->tensor(*node.arg("input")->tensor);
  const TensorInfo* wt = graph_->tensor(*node.arg("weight")->tensor);
  const TensorInfo* out = graph_->tensor(node.outputs[0]);
  const std::size_t r = x->shape.size() - 2;
  PoolSpec spec;
  spec.max = false;
  spec.kernel.assign(wt->shape.begin() + 2, wt->shape.end());
  spec.stride = spatial(node, "stride", r, std::vector<int64_t>(r, 1));
  spec.padding = spatial(node, "padding", r, std::vector<int64_t>(r, 0));
  spec.dilation = spatial(node, "dilation", r, std::vector<int64_t>(r, 1));
  if (spec.stride.size() != r || spec.padding.size() != r || spec.dilation.size() != r)
    return Failure{node.where() + ": stride, padding and dilation do not match the spatial rank"};
  spec.inSize.assign(x->shape.begin() + 2, x->shape.end());
  spec.weightStrides = {wt->strides[0]};
  spec.weightStrides.insert(spec.weightStrides.end(), wt->strides.begin() + 2, wt->strides.end());
  return openWindow(node, *x, *out, std::move(spec), wt);
}

// Opens the kernel over `out` with one Pool value reading windows of the external `x` (and, for
// a depthwise convolution, the external `weights`), bound to the node's first output.
Outcome<bool> KernelBuilder::openWindow(const Node& node, const TensorInfo& x, const TensorInfo& out, PoolSpec spec,
                                        const TensorInfo* weights) {
  kernel_.shape = out.shape;
  const int rank = static_cast<int>(out.shape.size());
  std::vector<int> map(rank);
  for (int d = 0; d < rank; ++d) map[d] = out.shape[d] == 1 ? -1 : d;
  auto in = externalStrided(x.id, x.strides, map, true);
  if (!in) return in.error();
  if (weights) {
    auto w = externalStrided(weights->id, weights->strides, map, true);
    if (!w) return w.error();
    spec.weights = kernel_.values[w.value()].input;
  }
  KernelValue v;
  v.op = ValueOp::Pool;
  v.input = kernel_.values[in.value()].input;
  v.pool = std::move(spec);
  v.dimMap = map;
  bind(node.outputs[0], push(std::move(v)));
  return true;
}

// cumsum/cumprod along one dim: the scanned dim becomes the kernel's range; elementwise work
// before and after the scan fuses, reductions do not.
Outcome<bool> KernelBuilder::lowerScan(const Node& node, const ops::Scan& op) {
  if (!isNone(node, "dtype")) return Failure{node.where() + ": scans with a dtype are left to PyTorch"};
  auto in = source(node, "self");
  if (!in) return in.error();
  const auto& map = kernel_.values[in.value()].dimMap;
  const int rank = static_cast<int>(map.size());
  int64_t dim = static_cast<int64_t>(number(node, "dim", 0));
  if (dim < 0) dim += rank;
  if (dim < 0 || dim >= rank) return Failure{node.where() + ": scan dim out of range"};
  const int d = map[dim];
  if (d < 0) {  // a scan along a size-1 dim is the identity
    bind(node.outputs[0], unary(ops::fn::kIdentity, in.value()));
    return true;
  }
  if (kernel_.reduceBegin >= 0) return Failure{node.where() + ": a kernel holds one scan and no reduction"};
  kernel_.reduceBegin = d;
  kernel_.reduceEnd = d + 1;
  kernel_.scan = true;
  KernelValue v;
  v.op = ValueOp::Scan;
  v.reduce = op.kind;
  v.args = {in.value()};
  v.dimMap = map;
  bind(node.outputs[0], push(std::move(v)));
  return true;
}

}  // namespace stitch::agents::builtin
