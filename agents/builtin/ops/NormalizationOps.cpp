// The normalization family lowered from reductions: softmax, log_softmax and layer norm, each
// built by KernelBuilder::lowerReduction from ReduceKind reductions over one range of dims.
// (Batch and group norm are composites: CompositeOps.cpp.)
#include "agents/builtin/kernel/NodeArgs.h"
#include "agents/builtin/ops/Families.h"

namespace stitch::agents::builtin::ops {
namespace {

Outcome<ReduceParams> softmaxDim(const Node& node) {
  ReduceParams p;
  if (const Argument* d = node.arg("dim")) p.dims = asIntList(d->value).value_or(std::vector<int64_t>{});
  return p;
}

// The trailing normalized_shape.size() dims, and eps.
Outcome<ReduceParams> layerNormParams(const Node& node) {
  const Argument* ns = node.arg("normalized_shape");
  auto normalized = ns ? asIntList(ns->value) : std::nullopt;
  if (!normalized || normalized->empty()) return Failure{node.where() + ": normalized_shape missing"};
  ReduceParams p;
  for (int64_t i = 1; i <= static_cast<int64_t>(normalized->size()); ++i) p.dims.push_back(-i);
  p.eps = number(node, "eps", 1e-5);
  return p;
}

void add(Registry& r, const std::string& name, ReduceForm form, const std::string& test) {
  OpDef d{name, Family::Normalization};
  d.reduce = ReduceDef{form, ReduceKind::Sum, "self", false, softmaxDim};
  d.tests = {{"torch.ops.aten." + name + "." + test}};
  r.ops.push_back(std::move(d));
}

}  // namespace

// softmax.int and log_softmax.int decompose before dispatch: their tests capture _softmax and
// _log_softmax nodes, the ones the harness records from any model.
void addNormalizationOps(Registry& r) {
  add(r, "_softmax", ReduceForm::Softmax, "default(x0, 1, False)");
  add(r, "softmax", ReduceForm::Softmax, "int(x0, 0)");
  add(r, "_log_softmax", ReduceForm::LogSoftmax, "default(x0, 1, False)");
  add(r, "log_softmax", ReduceForm::LogSoftmax, "int(x0, 0)");
  OpDef ln{"native_layer_norm", Family::Normalization};
  ln.reduce = ReduceDef{ReduceForm::LayerNorm, ReduceKind::Sum, "input", false, layerNormParams};
  ln.tests = {{"torch.ops.aten.native_layer_norm.default(x0, [43], None, None, 1e-5)[0]"},
              {"torch.ops.aten.native_layer_norm.default(x0, [43], x1[0], x2[0], 1e-3)[0]", {Domain::Real, Domain::Real, Domain::Real}}};
  r.ops.push_back(std::move(ln));
}

}  // namespace stitch::agents::builtin::ops
