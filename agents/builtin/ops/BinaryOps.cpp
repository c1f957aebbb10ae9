// The elementwise binary family: arithmetic, comparisons (1.0f or 0.0f), selection, powers, and the
// two-operand functions of the losses CompositeLowering.cpp lowers.
#include "agents/builtin/kernel/NodeArgs.h"
#include "agents/builtin/ops/Families.h"

#include <map>

namespace stitch::agents::builtin::ops {
namespace {

const std::vector<Domain> kTwo{Domain::Real, Domain::Real};

// An operator whose kernel function has its name and reads `self` and `other`.
OpDef& pairOp(Registry& r, const std::string& name, std::function<std::string(const Operands&)> cuda) {
  OpDef& d = r.simple(name, Family::Binary, std::move(cuda));
  d.lower = [name](const Node&, const Graph&) -> Outcome<Lowered> { return Lowered{name, {"self", "other"}}; };
  d.tests = {{"torch.ops.aten." + name + ".Tensor(x0, x1)", kTwo}};
  return d;
}

std::string infix(const Operands& o, const char* op) { return "(" + o.x() + " " + op + " " + o.y() + ")"; }

// add, sub and rsub: a ± alpha·b (rsub is other − alpha·self).
void addArithmetic(Registry& r) {
  pairOp(r, fn::kAdd, [](const Operands& o) { return infix(o, "+"); }).foldsAs(EpilogueRole::Bias);
  pairOp(r, fn::kSub, [](const Operands& o) { return infix(o, "-"); });
  pairOp(r, fn::kMul, [](const Operands& o) { return infix(o, "*"); }).foldsAs(EpilogueRole::Scale);
  pairOp(r, fn::kDiv, [](const Operands& o) { return infix(o, "/"); });
  for (const std::string name : {fn::kAdd, fn::kSub}) {
    OpDef& d = r.ops[name == fn::kAdd ? r.ops.size() - 4 : r.ops.size() - 3];
    d.lower = [name](const Node& n, const Graph&) -> Outcome<Lowered> {
      Lowered l{name, {"self", "other"}};
      l.alpha = number(n, "alpha", 1.0);
      return l;
    };
    d.tests.push_back({"torch.ops.aten." + name + ".Tensor(x0, x1, alpha=0.5)", kTwo});
    d.tests.push_back({"torch.ops.aten." + name + ".Scalar(x0, 1.5)"});
  }
  r.ops[r.ops.size() - 2].tests.push_back({"torch.ops.aten.mul.Scalar(x0, -2.5)"});
  OpDef& div = r.ops.back();
  div.lower = [](const Node& n, const Graph&) -> Outcome<Lowered> {
    if (n.arg("rounding_mode") && !isNone(n, "rounding_mode"))
      return Failure{n.where() + ": division with a rounding mode is left to PyTorch"};
    return Lowered{fn::kDiv, {"self", "other"}};
  };
  div.tests = {{"torch.ops.aten.div.Tensor(x0, x1)", {Domain::Real, Domain::Positive}}};
  OpDef rsub{"rsub", Family::Binary};
  rsub.lower = [](const Node& n, const Graph&) -> Outcome<Lowered> {
    Lowered l{fn::kSub, {"self", "other"}};
    l.reversed = true;
    l.alpha = number(n, "alpha", 1.0);
    return l;
  };
  rsub.tests = {{"torch.ops.aten.rsub.Tensor(x0, x1)", kTwo}, {"torch.ops.aten.rsub.Tensor(x0, x1, alpha=2.0)", kTwo}};
  r.ops.push_back(std::move(rsub));
}

void addComparisons(Registry& r) {
  static const std::map<std::string, std::string> cmp{{"eq", "=="}, {"ne", "!="}, {"gt", ">"},
                                                       {"ge", ">="}, {"lt", "<"},  {"le", "<="}};
  for (const auto& [name, op] : cmp) {
    pairOp(r, name, [op = op](const Operands& o) { return "((" + o.x() + " " + op + " " + o.y() + ") ? 1.0f : 0.0f)"; });
    r.ops.back().tests = {{"torch.ops.aten." + name + ".Tensor(x0, x1)", {Domain::Whole, Domain::Whole}},
                          {"torch.ops.aten." + name + ".Scalar(x0, 1.0)", {Domain::Whole}}};
  }
  pairOp(r, "maximum", [](const Operands& o) { return "sc_max(" + o.x() + ", " + o.y() + ")"; }).tests = {
      {"torch.ops.aten.maximum.default(x0, x1)", kTwo}};
  pairOp(r, "minimum", [](const Operands& o) { return "sc_min(" + o.x() + ", " + o.y() + ")"; }).tests = {
      {"torch.ops.aten.minimum.default(x0, x1)", kTwo}};
}

// where(condition, self, other) and masked_fill(self, mask, value) = where(mask, value, self):
// attention's causal mask.
void addSelection(Registry& r) {
  r.fn(fn::kWhere, [](const Operands& o) { return "(" + o.x() + " != 0.0f ? " + o.y() + " : " + o.z() + ")"; });
  OpDef where{fn::kWhere, Family::Binary};
  where.lower = [](const Node&, const Graph&) -> Outcome<Lowered> { return Lowered{fn::kWhere, {"condition", "self", "other"}}; };
  where.tests = {{"torch.ops.aten.where.self(x0, x1, x2)", {Domain::Mask, Domain::Real, Domain::Real}}};
  r.ops.push_back(std::move(where));
  OpDef fill{"masked_fill", Family::Binary};
  fill.lower = [](const Node&, const Graph&) -> Outcome<Lowered> { return Lowered{fn::kWhere, {"mask", "value", "self"}}; };
  fill.tests = {{"torch.ops.aten.masked_fill.Scalar(x0, x1, -3.0)", {Domain::Real, Domain::Mask}}};
  r.ops.push_back(std::move(fill));
}

// pow: of two tensors, or of a tensor to a number (small integer and half exponents spelled out).
void addPowers(Registry& r) {
  r.fn("pow", [](const Operands& o) { return "powf(" + o.x() + ", " + o.y() + ")"; });
  r.fn(fn::kPowScalar, [](const Operands& o) {
    const std::string& x = o.x();
    const double e = o.params.at(0);
    if (e == 1.0) return x;
    if (e == 2.0) return "(" + x + " * " + x + ")";
    if (e == 3.0) return "(" + x + " * " + x + " * " + x + ")";
    if (e == 0.5) return "sqrtf(" + x + ")";
    if (e == -1.0) return "(1.0f / " + x + ")";
    return "powf(" + x + ", " + o.P(0) + ")";
  });
  OpDef pow{"pow", Family::Binary};
  pow.lower = [](const Node& n, const Graph&) -> Outcome<Lowered> {
    const std::string ov = overload(n.op);
    if (ov == "Tensor_Scalar") return Lowered{fn::kPowScalar, {"self"}, {number(n, "exponent", 1.0)}};
    if (ov != "Tensor_Tensor") return Failure{n.where() + ": this pow overload is left to PyTorch"};
    return Lowered{"pow", {"self", "exponent"}};
  };
  pow.tests = {{"torch.ops.aten.pow.Tensor_Tensor(x0, x1)", {Domain::Positive, Domain::Real}},
               {"torch.ops.aten.pow.Tensor_Scalar(x0, 3)"},
               {"torch.ops.aten.pow.Tensor_Scalar(x0, 0.5)", {Domain::Positive}},
               {"torch.ops.aten.pow.Tensor_Scalar(x0, 1.7)", {Domain::Positive}}};
  r.ops.push_back(std::move(pow));
}

void addLossTerms(Registry& r) {
  pairOp(r, "xlogy", [](const Operands& o) { return "sc_xlogy(" + o.x() + ", " + o.y() + ")"; }).tests = {
      {"torch.ops.aten.xlogy.Tensor(x0, x1)", {Domain::Real, Domain::Positive}}};
  r.fn("bce", [](const Operands& o) { return "sc_bce(" + o.x() + ", " + o.y() + ")"; });
  // kl_div(input = log q, target p): p·(log p − input); with log_target: e^p·(p − input).
  r.fn("kl_div", [](const Operands& o) { return "(sc_xlogy(" + o.y() + ", " + o.y() + ") - " + o.y() + " * " + o.x() + ")"; });
  r.fn("kl_div_log_target", [](const Operands& o) { return "(expf(" + o.y() + ") * (" + o.y() + " - " + o.x() + "))"; });
}

}  // namespace

void addBinaryOps(Registry& r) {
  addArithmetic(r);
  addComparisons(r);
  addSelection(r);
  addPowers(r);
  addLossTerms(r);
}

}  // namespace stitch::agents::builtin::ops
