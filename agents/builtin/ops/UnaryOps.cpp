// The elementwise unary family: activations, math functions, copies. Each entry says how a node
// lowers (its parameters as a struct of their own, encoded once for the kernel value and decoded
// once for the CUDA) and how it is tested against eager.
#include "agents/builtin/kernel/FusedKernel.h"  // kComputeType
#include "agents/builtin/kernel/NodeArgs.h"
#include "agents/builtin/ops/Families.h"

#include <cmath>
#include <cstdlib>
#include <optional>

namespace stitch::agents::builtin::ops {
namespace {

std::string lit(double v) { return Operands{{}, {v}}.P(0); }

// softplus(x) = log(1 + e^(beta x)) / beta, linear above `threshold`.
struct Softplus {
  double beta = 1, threshold = 20;
  std::vector<double> encode() const { return {beta, threshold}; }
  static Softplus decode(const std::vector<double>& p) { return {p.at(0), p.at(1)}; }
};
// elu(x) = scale · (x > 0 ? x : alpha · (e^(input_scale x) − 1)); celu is elu with 1/alpha inside.
struct Elu {
  double alpha = 1, scale = 1, inputScale = 1;
  std::vector<double> encode() const { return {alpha, scale, inputScale}; }
  static Elu decode(const std::vector<double>& p) { return {p.at(0), p.at(1), p.at(2)}; }
};
struct Bounds {  // hardtanh's [min_val, max_val]
  double lo = -1, hi = 1;
  std::vector<double> encode() const { return {lo, hi}; }
  static Bounds decode(const std::vector<double>& p) { return {p.at(0), p.at(1)}; }
};
struct Clamp {  // clamp, clamp_min, clamp_max: each bound optional
  std::optional<double> min, max;
  std::vector<double> encode() const { return {min ? 1.0 : 0.0, min.value_or(0), max ? 1.0 : 0.0, max.value_or(0)}; }
  static Clamp decode(const std::vector<double>& p) {
    Clamp c;
    if (p.at(0) != 0) c.min = p.at(1);
    if (p.at(2) != 0) c.max = p.at(3);
    return c;
  }
};
struct Threshold {  // x > threshold ? x : value
  double threshold = 0, value = 0;
  std::vector<double> encode() const { return {threshold, value}; }
  static Threshold decode(const std::vector<double>& p) { return {p.at(0), p.at(1)}; }
};

Lowered withParams(std::string fn, std::vector<double> params) {
  Lowered l;
  l.fn = std::move(fn);
  l.params = std::move(params);
  return l;
}

// Function names of one CUDA form: `#` stands for the operand.
void simpleUnary(Registry& r, const std::string& name, const std::string& form, Domain domain = Domain::Real) {
  r.simple(name, Family::Unary, [form](const Operands& o) {
     std::string s;
     for (char c : form) s += c == '#' ? o.x() : std::string(1, c);
     return s;
   }).tests = {{"torch.ops.aten." + name + ".default(x0)", {domain}}};
}

// Copies and aliases: the value itself (a cast only between float32 tensors on one device).
void addCopies(Registry& r) {
  r.fn(fn::kIdentity, [](const Operands& o) { return o.x(); });
  for (const char* name : {opname::kClone, "alias", "detach", "contiguous", "lift_fresh", "positive"}) {
    OpDef d{name, Family::Unary};
    d.lower = [](const Node&, const Graph&) -> Outcome<Lowered> { return withParams(fn::kIdentity, {}); };
    d.tests = {{std::string("torch.ops.aten.") + name + ".default(x0)"}};
    r.ops.push_back(std::move(d));
  }
  OpDef copy{"_to_copy", Family::Unary};
  copy.lower = [](const Node& node, const Graph& g) -> Outcome<Lowered> {
    // A copy between devices (a module's CPU tensor attribute moved to the GPU in forward): a
    // kernel cannot read the other device's memory.
    const Argument* self = node.arg("self");
    const TensorInfo* in = self && self->tensor ? g.tensor(*self->tensor) : nullptr;
    const TensorInfo* out = g.tensor(node.outputs.at(0));
    if (in && in->device != out->device)
      return Failure{node.where() + ": a copy from " + in->device + " to " + out->device + " is left to PyTorch"};
    const Argument* dt = node.arg("dtype");
    if (dt && !std::holds_alternative<std::monostate>(dt->value) && out->dtype != kComputeType)
      return Failure{node.where() + ": casts to " + out->dtype + " are left to PyTorch"};
    return withParams(fn::kIdentity, {});
  };
  copy.tests = {{"torch.ops.aten._to_copy.default(x0, dtype=torch.float32)"}};
  r.ops.push_back(std::move(copy));
}

// A mask's negation (`~mask`, `mask.logical_not()`, how attention inverts a boolean mask); an
// integer's bitwise not is left to PyTorch.
void addMaskNot(Registry& r) {
  r.fn("logical_not", [](const Operands& o) { return "((" + o.x() + " == 0.0f) ? 1.0f : 0.0f)"; });
  for (const std::string name : {"logical_not", "bitwise_not"}) {
    OpDef d{name, Family::Unary};
    d.lower = [name](const Node& node, const Graph& g) -> Outcome<Lowered> {
      const Argument* self = node.arg("self");
      const TensorInfo* in = self && self->tensor ? g.tensor(*self->tensor) : nullptr;
      if (!in || (name == "bitwise_not" && in->dtype != DType::Bool) || g.tensor(node.outputs.at(0))->dtype != DType::Bool)
        return Failure{node.where() + ": " + name + " other than of a mask is left to PyTorch"};
      return withParams("logical_not", {});
    };
    d.tests = {{"torch.ops.aten." + name + ".default(x0)", {Domain::Mask}}};
    r.ops.push_back(std::move(d));
  }
}

void addActivations(Registry& r) {
  r.simple("relu", Family::Unary, [](const Operands& o) { return "sc_max(" + o.x() + ", 0.0f)"; }).foldsAs(EpilogueRole::Relu);
  r.ops.back().tests = {{"torch.ops.aten.relu.default(x0)"}};
  r.fn("gelu", [](const Operands& o) { return "sc_gelu(" + o.x() + ")"; });
  r.fn("gelu_tanh", [](const Operands& o) { return "sc_gelu_tanh(" + o.x() + ")"; });
  OpDef gelu{"gelu", Family::Unary};
  gelu.foldsAs(EpilogueRole::Gelu);
  gelu.lower = [](const Node& node, const Graph&) -> Outcome<Lowered> {
    return withParams(geluTanh(node) ? "gelu_tanh" : "gelu", {});
  };
  gelu.tests = {{"torch.ops.aten.gelu.default(x0)"}, {"torch.ops.aten.gelu.default(x0, approximate='tanh')"}};
  r.ops.push_back(std::move(gelu));
  simpleUnary(r, "silu", "sc_silu(#)");
  simpleUnary(r, "mish", "sc_mish(#)");
  simpleUnary(r, "sigmoid", "(1.0f / (1.0f + expf(-#)))");
  simpleUnary(r, "hardsigmoid", "(sc_min(sc_max(# + 3.0f, 0.0f), 6.0f) / 6.0f)");
  simpleUnary(r, "hardswish", "(# * sc_min(sc_max(# + 3.0f, 0.0f), 6.0f) / 6.0f)");

  r.fn("softplus", [](const Operands& o) {
    auto s = Softplus::decode(o.params);
    return "sc_softplus(" + o.x() + ", " + lit(s.beta) + ", " + lit(s.threshold) + ")";
  });
  OpDef softplus{"softplus", Family::Unary};
  softplus.lower = [](const Node& n, const Graph&) -> Outcome<Lowered> {
    return withParams("softplus", Softplus{number(n, "beta", 1.0), number(n, "threshold", 20.0)}.encode());
  };
  softplus.tests = {{"torch.ops.aten.softplus.default(x0, 2.0, 1.5)"}};
  r.ops.push_back(std::move(softplus));

  r.fn("elu", [](const Operands& o) {
    auto e = Elu::decode(o.params);
    return "sc_elu(" + o.x() + ", " + lit(e.alpha) + ", " + lit(e.scale) + ", " + lit(e.inputScale) + ")";
  });
  OpDef elu{"elu", Family::Unary};
  elu.lower = [](const Node& n, const Graph&) -> Outcome<Lowered> {
    return withParams("elu", Elu{number(n, "alpha", 1.0), number(n, "scale", 1.0), number(n, "input_scale", 1.0)}.encode());
  };
  elu.tests = {{"torch.ops.aten.elu.default(x0, 0.7, 1.2, 0.9)"}};
  r.ops.push_back(std::move(elu));
  OpDef celu{"celu", Family::Unary};
  celu.lower = [](const Node& n, const Graph&) -> Outcome<Lowered> {
    const double alpha = number(n, "alpha", 1.0);
    return withParams("elu", Elu{alpha, 1.0, 1.0 / alpha}.encode());
  };
  celu.tests = {{"torch.ops.aten.celu.default(x0, 1.5)"}};
  r.ops.push_back(std::move(celu));

  r.fn("leaky_relu", [](const Operands& o) {
    return "(" + o.x() + " > 0.0f ? " + o.x() + " : " + o.x() + " * " + lit(o.params.at(0)) + ")";
  });
  OpDef leaky{"leaky_relu", Family::Unary};
  leaky.lower = [](const Node& n, const Graph&) -> Outcome<Lowered> {
    return withParams("leaky_relu", {number(n, "negative_slope", 0.01)});
  };
  leaky.tests = {{"torch.ops.aten.leaky_relu.default(x0, 0.2)"}};
  r.ops.push_back(std::move(leaky));
}

void addBounded(Registry& r) {
  r.fn("hardtanh", [](const Operands& o) {
    auto b = Bounds::decode(o.params);
    return "sc_min(sc_max(" + o.x() + ", " + lit(b.lo) + "), " + lit(b.hi) + ")";
  });
  OpDef hardtanh{"hardtanh", Family::Unary};
  hardtanh.lower = [](const Node& n, const Graph&) -> Outcome<Lowered> {
    return withParams("hardtanh", Bounds{number(n, "min_val", -1.0), number(n, "max_val", 1.0)}.encode());
  };
  hardtanh.tests = {{"torch.ops.aten.hardtanh.default(x0, -0.5, 2.0)"}};
  r.ops.push_back(std::move(hardtanh));
  OpDef relu6{"relu6", Family::Unary};
  relu6.lower = [](const Node&, const Graph&) -> Outcome<Lowered> { return withParams("hardtanh", Bounds{0.0, 6.0}.encode()); };
  relu6.tests = {{"torch.ops.aten.relu6.default(x0 * 3)"}};
  r.ops.push_back(std::move(relu6));

  r.fn("clamp", [](const Operands& o) {
    auto c = Clamp::decode(o.params);
    std::string e = o.x();
    if (c.min) e = "sc_max(" + e + ", " + lit(*c.min) + ")";
    if (c.max) e = "sc_min(" + e + ", " + lit(*c.max) + ")";
    return e;
  });
  // clamp.Tensor is minimum(maximum(self, min), max), each bound optional, NaN kept as those keep it.
  r.fn("clamp_tensor", [](const Operands& o) { return "sc_min(sc_max(" + o.x() + ", " + o.y() + "), " + o.z() + ")"; });
  for (const std::string name : {"clamp", "clamp_min", "clamp_max"}) {
    OpDef d{name, Family::Unary};
    d.lower = [name](const Node& node, const Graph&) -> Outcome<Lowered> {
      const bool tensorBounds = (node.arg("min") && node.arg("min")->tensor) || (node.arg("max") && node.arg("max")->tensor);
      const bool lo = name != "clamp_max" && !isNone(node, "min"), hi = name != "clamp_min" && !isNone(node, "max");
      if (name == "clamp" && tensorBounds) {
        if (lo && hi) return Lowered{"clamp_tensor", {"self", "min", "max"}};
        return Lowered{lo ? "maximum" : "minimum", {"self", lo ? "min" : "max"}};
      }
      Clamp c;
      if (lo) c.min = number(node, "min", 0.0);
      if (hi) c.max = number(node, "max", 0.0);
      return withParams("clamp", c.encode());
    };
    r.ops.push_back(std::move(d));
  }
  r.ops[r.ops.size() - 3].tests = {{"torch.ops.aten.clamp.default(x0, -0.5, 0.5)"},
                                   {"torch.ops.aten.clamp.default(x0, None, 0.25)"},
                                   {"torch.ops.aten.clamp.Tensor(x0, x1, x2)", {Domain::Real, Domain::Real, Domain::Real}}};
  r.ops[r.ops.size() - 2].tests = {{"torch.ops.aten.clamp_min.default(x0, -0.3)"}};
  r.ops[r.ops.size() - 1].tests = {{"torch.ops.aten.clamp_max.default(x0, 0.3)"}};

  r.fn("threshold", [](const Operands& o) {
    auto t = Threshold::decode(o.params);
    return "(" + o.x() + " > " + lit(t.threshold) + " ? " + o.x() + " : " + lit(t.value) + ")";
  });
  OpDef threshold{"threshold", Family::Unary};
  threshold.lower = [](const Node& n, const Graph&) -> Outcome<Lowered> {
    return withParams("threshold", Threshold{number(n, "threshold", 0.0), number(n, "value", 0.0)}.encode());
  };
  threshold.tests = {{"torch.ops.aten.threshold.default(x0, 0.1, -2.0)"}};
  r.ops.push_back(std::move(threshold));
}

// hardshrink and softshrink: zero inside [-lambd, lambd].
void addShrinks(Registry& r) {
  r.fn("hardshrink", [](const Operands& o) {
    const std::string x = o.x(), l = lit(o.params.at(0));
    return "((" + x + " >= -" + l + " && " + x + " <= " + l + ") ? 0.0f : " + x + ")";
  });
  r.fn("softshrink", [](const Operands& o) {
    const std::string x = o.x(), l = lit(o.params.at(0));
    return "(" + x + " > " + l + " ? " + x + " - " + l + " : (" + x + " < -" + l + " ? " + x + " + " + l + " : 0.0f))";
  });
  for (const std::string name : {"hardshrink", "softshrink"}) {
    OpDef d{name, Family::Unary};
    d.lower = [name](const Node& n, const Graph&) -> Outcome<Lowered> { return withParams(name, {number(n, "lambd", 0.5)}); };
    d.tests = {{"torch.ops.aten." + name + ".default(x0, 0.6)"}};
    r.ops.push_back(std::move(d));
  }
}

void addMath(Registry& r) {
  simpleUnary(r, "tanh", "tanhf(#)");
  simpleUnary(r, fn::kExp, "expf(#)");
  simpleUnary(r, "exp2", "exp2f(#)");
  simpleUnary(r, fn::kLog, "logf(#)", Domain::Positive);
  simpleUnary(r, "log2", "log2f(#)", Domain::Positive);
  simpleUnary(r, "log1p", "log1pf(#)", Domain::Positive);
  simpleUnary(r, "expm1", "expm1f(#)");
  simpleUnary(r, fn::kAbs, "fabsf(#)");
  simpleUnary(r, fn::kNeg, "(-#)");
  simpleUnary(r, fn::kSqrt, "sqrtf(#)", Domain::Positive);
  simpleUnary(r, fn::kRsqrt, "rsqrtf(#)", Domain::Positive);
  simpleUnary(r, "reciprocal", "(1.0f / #)", Domain::Positive);
  simpleUnary(r, "sin", "sinf(#)");
  simpleUnary(r, "cos", "cosf(#)");
  simpleUnary(r, "erf", "erff(#)");
  simpleUnary(r, "floor", "floorf(#)");
  simpleUnary(r, "ceil", "ceilf(#)");
  simpleUnary(r, "trunc", "truncf(#)");
  simpleUnary(r, "sign", "(float)((# > 0.0f) - (# < 0.0f))");
  simpleUnary(r, fn::kSquare, "(# * #)");
  // Kernel functions of composite lowerings (CompositeLowering.cpp): no operator of their own.
  r.fn("nonzero", [](const Operands& o) { return "((" + o.x() + " != 0.0f) ? 1.0f : 0.0f)"; });
  r.fn(fn::kSmoothL1, [](const Operands& o) { return "sc_smooth_l1(" + o.x() + ", " + o.P(0) + ")"; });
  r.fn(fn::kHuber, [](const Operands& o) { return "sc_huber(" + o.x() + ", " + o.P(0) + ")"; });
  // An int64 counter counted up (num_batches_tracked += 1): exact integer arithmetic.
  r.fn("add_int", [](const Operands& o) {
    return "(" + o.x() + " + " + std::to_string(static_cast<long long>(o.params.at(0))) + "LL)";
  });
}

// round: half to even, as ATen's nearbyint. round.decimals scales by 10^|decimals| in float first
// (dividing for negative decimals), as ATen's kernel does, so its ties and its errors are eager's.
void addRound(Registry& r) {
  r.fn("round", [](const Operands& o) {
    const int decimals = static_cast<int>(o.params.at(0));
    if (decimals == 0) return "rintf(" + o.x() + ")";
    const std::string scale = lit(static_cast<float>(std::pow(10.0, std::abs(decimals))));
    return decimals > 0 ? "(rintf(" + o.x() + " * " + scale + ") / " + scale + ")"
                        : "(rintf(" + o.x() + " / " + scale + ") * " + scale + ")";
  });
  OpDef round{"round", Family::Unary};
  round.lower = [](const Node& n, const Graph&) -> Outcome<Lowered> {
    return withParams("round", {number(n, "decimals", 0.0)});
  };
  round.tests = {{"torch.ops.aten.round.default(x0)"},
                 {"torch.ops.aten.round.default(x0 + 0.5)", {Domain::Whole}},  // every input a tie
                 {"torch.ops.aten.round.decimals(x0, decimals=2)"},
                 {"torch.ops.aten.round.decimals(x0 * 40, decimals=-1)"}};
  r.ops.push_back(std::move(round));
}

}  // namespace

bool geluTanh(const Node& node) {
  const Argument* a = node.arg("approximate");
  auto s = a ? std::get_if<std::string>(&a->value) : nullptr;
  return s && *s == "tanh";
}

void addUnaryOps(Registry& r) {
  addCopies(r);
  addMaskNot(r);
  addActivations(r);
  addBounded(r);
  addShrinks(r);
  addMath(r);
  addRound(r);
}

}  // namespace stitch::agents::builtin::ops
