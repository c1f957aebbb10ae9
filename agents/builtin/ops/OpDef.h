// The operator registry: what the built-in brain knows about each ATen operator, in one entry per
// operator (Inductor's `lowerings` table, ggml-cuda's op families). An entry names the operator, its
// family and cost kind, whether a library call can fold it into its epilogue, how a node of it
// lowers to a kernel function with typed parameters, and the numeric test that admits it. Kernel
// functions (KernelValue::fn) carry their CUDA expression here too, so the emitter never meets a
// name it does not know. One file per family: UnaryOps.cpp, BinaryOps.cpp, ReductionOps.cpp,
// NormalizationOps.cpp, FillOps.cpp, LibraryOps.cpp, ViewOps.cpp, CoordinateOps.cpp, CompositeOps.cpp.
#pragma once

#include "agents/builtin/kernel/FusedKernel.h"  // ReduceKind
#include "agents/builtin/ops/CompositeDef.h"
#include "agents/ir/GraphIR.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace stitch::agents::builtin::ops {

enum class Family { Unary, Binary, Reduction, Normalization, Fill, Library, View, Coordinate, Composite };
// What an operator's time is bound by, for cost estimates and the harness's precision guards.
enum class CostKind { Elementwise, Gemm, Convolution };
// The library call a node of a library operator anchors (LibraryCall.cpp): a GEMM of two matrices
// or of two batches of them through cuBLASLt, or a convolution through cuDNN. None for the library
// operators normalizeGraph rewrites into these (addmm, linear, matmul, the convolution overloads).
enum class LibraryKind { None, Gemm, BatchedGemm, Convolution };
// What a library call's epilogue makes of an operator that reads the call's output
// (LibraryCall.cpp's foldEpilogue): a multiply by a number (a GEMM's alpha), a bias add, or an
// activation. GELU folds only in its tanh form (geluTanh), the one cuBLASLt has.
enum class EpilogueRole { None, Scale, Bias, Relu, Gelu };

// A kernel function's operands as CUDA source, and its parameters.
struct Operands {
  std::vector<std::string> args;
  std::vector<double> params;
  const std::string& x() const { return args.at(0); }
  const std::string& y() const { return args.size() > 1 ? args[1] : args[0]; }
  const std::string& z() const { return args.at(2); }
  std::string P(std::size_t i) const;  // parameter i as a float literal
};

// A function a kernel value computes (KernelValue::fn): its CUDA expression.
struct KernelFn {
  std::string name;
  std::function<std::string(const Operands&)> cuda;
};
// Kernel functions that code outside the registry names: CudaEmitter finds softmax's exp(x − max)
// and a norm's (x − mean)² over sum / n among a kernel's values; KernelBuilder and
// CompositeLowering build reductions' and composites' decompositions from them. Those but
// pow_scalar, identity, smooth_l1 and huber are also the operators of their name.
namespace fn {
inline constexpr char kExp[] = "exp";
inline constexpr char kLog[] = "log";
inline constexpr char kAdd[] = "add";
inline constexpr char kSub[] = "sub";
inline constexpr char kMul[] = "mul";
inline constexpr char kDiv[] = "div";
inline constexpr char kSquare[] = "square";
inline constexpr char kAbs[] = "abs";
inline constexpr char kNeg[] = "neg";
inline constexpr char kSqrt[] = "sqrt";
inline constexpr char kRsqrt[] = "rsqrt";
inline constexpr char kWhere[] = "where";           // where(condition, self, other)
inline constexpr char kPowScalar[] = "pow_scalar";  // pow.Tensor_Scalar: a number as the exponent
inline constexpr char kIdentity[] = "identity";     // its operand, unchanged (copies, fills, casts)
inline constexpr char kSmoothL1[] = "smooth_l1";    // of |x| with beta, smooth_l1_loss's term
inline constexpr char kHuber[] = "huber";           // of |x| with delta, huber_loss's term
}  // namespace fn
// Operators that code outside the registry adds to a graph: MemoryFormat's layout copies.
namespace opname {
inline constexpr char kClone[] = "clone";
}  // namespace opname

// How one node lowers: the kernel function, the node's arguments it reads (in order) and the
// function's parameters. `reversed` swaps the two operands (rsub); `alpha` scales the second one
// after that (add/sub's alpha).
struct Lowered {
  Lowered() = default;
  Lowered(std::string f, std::vector<std::string> a = {"self"}, std::vector<double> p = {})
      : fn(std::move(f)), args(std::move(a)), params(std::move(p)) {}
  std::string fn;
  std::vector<std::string> args{"self"};
  std::vector<double> params;
  bool reversed = false;
  double alpha = 1.0;
};
using Lowering = std::function<Outcome<Lowered>(const Node& node, const Graph& graph)>;

// What a reduction or normalization node computes from its ReduceKind reductions
// (KernelBuilder::lowerReduction), all over one range of dims.
enum class ReduceForm {
  Reduce,      // the reduction itself
  Mean,        // the sum over the count reduced
  Softmax,     // the row's max, then the exponentials shifted by it over their sum
  LogSoftmax,  // the shifted values less the log of that sum
  LogSumExp,   // the log of that sum plus the max
  LayerNorm,   // the mean, then the mean of squared deviations; weight and bias applied
  ArgIndex,    // the index of kind's extreme (ArgMax, ArgMin), first of ties, as int64
  Variance,    // the mean, then the squared deviations' sum over (count − correction)
  StdDev,      // the square root of Variance
};
// A reduction node's parameters, read from its arguments once.
struct ReduceParams {
  std::vector<int64_t> dims;  // empty: every dim; negative: from the last
  bool keepdim = false;
  double eps = 1e-5;  // LayerNorm's
  double correction = 1;  // Variance's and StdDev's: Bessel's by default
};
struct ReduceDef {
  ReduceForm form = ReduceForm::Reduce;
  ReduceKind kind = ReduceKind::Sum;  // Reduce's
  std::string input = "self";         // the argument reduced
  // The overload with two outputs (max.dim) returns the indices too, as ArgIndex does.
  bool indices = false;
  std::function<Outcome<ReduceParams>(const Node& node)> params;
};

// How a view's elements relate to its source's, which decides whether a value the open kernel
// computes can be viewed in place (KernelBuilder::lowerView) or must be written first.
enum class ViewKind {
  Reshape,  // the elements in order under other sizes (view, squeeze, expand, ...)
  Permute,  // the dims reordered (transpose, permute, t): sizes alone cannot tell it from a reshape
  Part,     // a sub-range (slice, select, split, unfold's windows, ...): all of the source only where
            // the sizes, size-1 dims aside, are the source's
};

// What an operator computes from its element's coordinates, reading its input from outside the
// kernel (KernelBuilder::lowerCoordinate).
enum class CoordinateKind {
  Triangle,  // triu/tril: the element where it lies on the kept side of the diagonal, else 0
  Pad,       // constant padding: the input's element less the padding before, else the value
  Flip,      // the input read through negated strides along the flipped dims
  Gather,    // a table's rows chosen by an int64 index tensor
};
struct CoordinateDef {
  CoordinateKind kind = CoordinateKind::Triangle;
  std::string input = "self";  // the tensor read (Gather's table)
  bool upper = false;          // Triangle: keeps the upper triangle (triu)
};

// An input of an operator's test: the values it is drawn from (normal; positive; whole numbers
// in [-2, 2], where comparisons meet ties; a boolean mask).
enum class Domain { Real, Positive, Whole, Mask };

// One numeric test of an operator (and overload): `call` is Python over inputs x0, x1, ...
// (`torch.ops.aten.leaky_relu.default(x0, 0.2)`), run on eager and on the generated kernel.
struct OpTest {
  std::string call;
  std::vector<Domain> inputs{Domain::Real};
};

struct OpDef {
  OpDef(std::string n, Family f, CostKind c = CostKind::Elementwise) : name(std::move(n)), family(f), cost(c) {}
  std::string name;  // the ATen base name, without namespace or overload
  Family family = Family::Unary;
  CostKind cost = CostKind::Elementwise;
  // How a library call folds it into its epilogue (LibraryCall.cpp); None: it does not.
  EpilogueRole epilogueRole = EpilogueRole::None;
  LibraryKind library = LibraryKind::None;         // library operators: the call a node anchors
  Lowering lower;         // elementwise operators; empty for the others
  std::optional<ReduceDef> reduce;  // reductions and normalizations
  std::function<double(const Node& node)> fillValue;  // fills: the result's one value
  std::optional<ViewKind> view;                       // views
  std::optional<CoordinateDef> coordinate;            // coordinate operators
  std::optional<Composite> composite;                 // composites, and the convolution generated
  std::vector<OpTest> tests;
  OpDef& foldsAs(EpilogueRole role) {
    epilogueRole = role;
    return *this;
  }
};

// The operator of an ATen name ("aten::gelu", "gelu.default" or "gelu"), or null.
const OpDef* findOp(const std::string& op);
const std::vector<OpDef>& allOps();
// Whether an operator of `family` is registered under `op`'s base name.
bool inFamily(const std::string& op, Family family);
// What a node of `op` is to a library call: the call it anchors, and what the call's epilogue makes
// of it; None for both where `op` has no entry.
inline LibraryKind libraryKind(const std::string& op) {
  const OpDef* d = findOp(op);
  return d ? d->library : LibraryKind::None;
}
inline EpilogueRole epilogueRole(const std::string& op) {
  const OpDef* d = findOp(op);
  return d ? d->epilogueRole : EpilogueRole::None;
}
// Whether `op` is a max or average pooling window (the composite family's Pool entries).
inline bool isPooling(const std::string& op) {
  const OpDef* d = findOp(op);
  return d && d->composite && std::holds_alternative<Pool>(*d->composite);
}
// Whether a gelu node computes the tanh approximation (approximate='tanh').
bool geluTanh(const Node& node);
// The kernel function `fn`, or null.
const KernelFn* findFn(const std::string& fn);
// `fn`'s CUDA expression over its operands, or a failure naming it.
Outcome<std::string> cudaCall(const std::string& fn, const Operands& operands);
// Every operator as JSON (name, family, cost, epilogue, tests), the list the harness reads.
nlohmann::json opsJson();

}  // namespace stitch::agents::builtin::ops
