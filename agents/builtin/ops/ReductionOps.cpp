// The reduction family: sums, means, extrema, their indices, products, variances and standard
// deviations over one range of dims, and logsumexp.
// Each entry names its ReduceKind and form, which KernelBuilder::lowerReduction builds, and reads
// its dims and keepdim into ReduceParams.
#include "agents/builtin/kernel/NodeArgs.h"
#include "agents/builtin/ops/Families.h"

namespace stitch::agents::builtin::ops {
namespace {

Outcome<ReduceParams> dimsAndKeepdim(const Node& node) {
  ReduceParams p;
  if (const Argument* d = node.arg("dim")) p.dims = asIntList(d->value).value_or(std::vector<int64_t>{});
  p.keepdim = node.arg("keepdim") && asNumber(node.arg("keepdim")->value).value_or(0) != 0;
  return p;
}

// var and std: dims (None: every dim), keepdim and correction (None: 1).
Outcome<ReduceParams> varianceParams(const Node& node) {
  auto p = dimsAndKeepdim(node);
  if (p) p.value().correction = number(node, "correction", 1.0);
  return p;
}

void add(Registry& r, const std::string& name, ReduceForm form, ReduceKind kind, std::vector<std::string> calls,
         bool indices = false) {
  OpDef d{name, Family::Reduction};
  d.reduce = ReduceDef{form, kind, "self", indices, dimsAndKeepdim};
  for (const std::string& call : calls) d.tests.push_back({"torch.ops.aten." + name + "." + call});
  r.ops.push_back(std::move(d));
}

}  // namespace

// Tests run on a [6, 43] input (ops_on_cpu.py): each overload, a dim of each end, keepdim.
void addReductionOps(Registry& r) {
  add(r, "sum", ReduceForm::Reduce, ReduceKind::Sum,
      {"default(x0)", "dim_IntList(x0, [1])", "dim_IntList(x0, [0], True)"});
  add(r, "mean", ReduceForm::Mean, ReduceKind::Sum, {"default(x0)", "dim(x0, [1])", "dim(x0, [-2], True)"});
  add(r, "amax", ReduceForm::Reduce, ReduceKind::Max, {"default(x0, [1])", "default(x0, [0], True)"});
  add(r, "amin", ReduceForm::Reduce, ReduceKind::Min, {"default(x0, [1])", "default(x0, [0], True)"});
  // max.dim's values and indices; max.default's one value.
  add(r, "max", ReduceForm::Reduce, ReduceKind::Max, {"default(x0)", "dim(x0, 1)[0]", "dim(x0, 0, True)[1]"}, true);
  add(r, "min", ReduceForm::Reduce, ReduceKind::Min, {"default(x0)", "dim(x0, 1)[0]", "dim(x0, 0, True)[1]"}, true);
  // Over the 6 rows only: a product of 43 normal values leaves float32's range.
  add(r, "prod", ReduceForm::Reduce, ReduceKind::Prod, {"dim_int(x0, 0)", "dim_int(x0, 0, True)"});
  // Whole numbers, whose ties must go to the first index.
  for (const auto& [name, kind] : {std::pair{"argmax", ReduceKind::ArgMax}, std::pair{"argmin", ReduceKind::ArgMin}}) {
    add(r, name, ReduceForm::ArgIndex, kind, {"default(x0, 1)", "default(x0, 0, True)"});
    for (OpTest& t : r.ops.back().tests) t.inputs = {Domain::Whole};
  }
  add(r, "logsumexp", ReduceForm::LogSumExp, ReduceKind::Sum, {"default(x0, [1])", "default(x0, [0], True)"});
  // var.dim, var.default and their std forms decompose to .correction before dispatch.
  for (const auto& [name, form] : {std::pair{"var", ReduceForm::Variance}, std::pair{"std", ReduceForm::StdDev}}) {
    add(r, name, form, ReduceKind::Sum,
        {"correction(x0, None, correction=None)", "correction(x0, [1], correction=1)",
         "correction(x0, [0], correction=0, keepdim=True)"});
    r.ops.back().reduce->params = varianceParams;
  }
}

}  // namespace stitch::agents::builtin::ops
