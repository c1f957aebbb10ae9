// Emission of one fused kernel; see CudaEmitter.h. Values are emitted as `const float vN`
// statements in the scope that needs them: per element inside the loops, per row after each
// reduction (row statistics are computed once, not per element).
#include "agents/builtin/CudaEmitter.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <set>
#include <sstream>

namespace stitch::agents::builtin {
namespace {

std::string lit(double v) {
  if (std::isnan(v)) return "__int_as_float(0x7fc00000)";
  if (std::isinf(v)) return v > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return "(" + s + "f)";
}

std::string i64(int64_t v) { return "(int64_t)" + std::to_string(v) + "LL"; }

std::string call(const std::string& fn, const std::vector<std::string>& a, const std::vector<double>& p) {
  auto P = [&](std::size_t i) { return lit(p.at(i)); };
  const std::string& x = a[0];
  if (fn == "identity" || fn == "positive") return x;
  if (fn == "relu") return "fmaxf(" + x + ", 0.0f)";
  if (fn == "sigmoid") return "(1.0f / (1.0f + expf(-" + x + ")))";
  if (fn == "tanh") return "tanhf(" + x + ")";
  if (fn == "exp") return "expf(" + x + ")";
  if (fn == "exp2") return "exp2f(" + x + ")";
  if (fn == "log") return "logf(" + x + ")";
  if (fn == "log2") return "log2f(" + x + ")";
  if (fn == "log1p") return "log1pf(" + x + ")";
  if (fn == "expm1") return "expm1f(" + x + ")";
  if (fn == "abs") return "fabsf(" + x + ")";
  if (fn == "neg") return "(-" + x + ")";
  if (fn == "sqrt") return "sqrtf(" + x + ")";
  if (fn == "rsqrt") return "rsqrtf(" + x + ")";
  if (fn == "reciprocal") return "(1.0f / " + x + ")";
  if (fn == "sin") return "sinf(" + x + ")";
  if (fn == "cos") return "cosf(" + x + ")";
  if (fn == "erf") return "erff(" + x + ")";
  if (fn == "floor") return "floorf(" + x + ")";
  if (fn == "ceil") return "ceilf(" + x + ")";
  if (fn == "sign") return "(float)((" + x + " > 0.0f) - (" + x + " < 0.0f))";
  if (fn == "square") return "(" + x + " * " + x + ")";
  if (fn == "gelu") return "sc_gelu(" + x + ")";
  if (fn == "gelu_tanh") return "sc_gelu_tanh(" + x + ")";
  if (fn == "silu") return "sc_silu(" + x + ")";
  if (fn == "mish") return "sc_mish(" + x + ")";
  if (fn == "softplus") return "sc_softplus(" + x + ", " + P(0) + ", " + P(1) + ")";
  if (fn == "elu") return "sc_elu(" + x + ", " + P(0) + ", " + P(1) + ", " + P(2) + ")";
  if (fn == "leaky_relu") return "(" + x + " > 0.0f ? " + x + " : " + x + " * " + P(0) + ")";
  if (fn == "hardtanh") return "fminf(fmaxf(" + x + ", " + P(0) + "), " + P(1) + ")";
  if (fn == "hardsigmoid") return "(fminf(fmaxf(" + x + " + 3.0f, 0.0f), 6.0f) / 6.0f)";
  if (fn == "hardswish") return "(" + x + " * fminf(fmaxf(" + x + " + 3.0f, 0.0f), 6.0f) / 6.0f)";
  if (fn == "clamp") {
    std::string e = x;
    if (p.at(0) != 0) e = "fmaxf(" + e + ", " + P(1) + ")";
    if (p.at(2) != 0) e = "fminf(" + e + ", " + P(3) + ")";
    return e;
  }
  if (fn == "threshold") return "(" + x + " > " + P(0) + " ? " + x + " : " + P(1) + ")";
  if (fn == "hardshrink") return "((" + x + " >= -" + P(0) + " && " + x + " <= " + P(0) + ") ? 0.0f : " + x + ")";
  if (fn == "softshrink")
    return "(" + x + " > " + P(0) + " ? " + x + " - " + P(0) + " : (" + x + " < -" + P(0) + " ? " + x + " + " + P(0) + " : 0.0f))";
  if (fn == "pow_scalar") {
    double e = p.at(0);
    if (e == 1.0) return x;
    if (e == 2.0) return "(" + x + " * " + x + ")";
    if (e == 3.0) return "(" + x + " * " + x + " * " + x + ")";
    if (e == 0.5) return "sqrtf(" + x + ")";
    if (e == -1.0) return "(1.0f / " + x + ")";
    return "powf(" + x + ", " + P(0) + ")";
  }
  const std::string& y = a.size() > 1 ? a[1] : x;
  if (fn == "add") return "(" + x + " + " + y + ")";
  if (fn == "sub") return "(" + x + " - " + y + ")";
  if (fn == "mul") return "(" + x + " * " + y + ")";
  if (fn == "div") return "(" + x + " / " + y + ")";
  if (fn == "maximum") return "fmaxf(" + x + ", " + y + ")";
  if (fn == "minimum") return "fminf(" + x + ", " + y + ")";
  if (fn == "pow") return "powf(" + x + ", " + y + ")";
  static const std::map<std::string, std::string> cmp{{"eq", "=="}, {"ne", "!="}, {"gt", ">"},
                                                       {"ge", ">="}, {"lt", "<"},  {"le", "<="}};
  if (auto it = cmp.find(fn); it != cmp.end()) return "((" + x + " " + it->second + " " + y + ") ? 1.0f : 0.0f)";
  if (fn == "where") return "(" + x + " != 0.0f ? " + y + " : " + a.at(2) + ")";
  return "/* unknown function " + fn + " */ " + x;
}

const char* reduceInit(ReduceKind k) {
  switch (k) {
    case ReduceKind::Sum: return "0.0f";
    case ReduceKind::Prod: return "1.0f";
    case ReduceKind::Max: return "__int_as_float(0xff800000)";
    case ReduceKind::Min: return "__int_as_float(0x7f800000)";
  }
  return "0.0f";
}

const char* reduceOp(ReduceKind k) {
  switch (k) {
    case ReduceKind::Sum: return "SumOp";
    case ReduceKind::Prod: return "ProdOp";
    case ReduceKind::Max: return "MaxOp";
    case ReduceKind::Min: return "MinOp";
  }
  return "SumOp";
}

// A place values are computed: per element (with `lin` the iteration index, lanes when
// vectorized) or per row (`lin` the row's first element).
struct Scope {
  bool lanes = false;
  std::map<int, std::string> memo;
};

class Emitter {
public:
  Emitter(const FusedKernel& k, const std::string& name, const Variant& v, const std::map<std::string, int>& slots)
      : k_(k), name_(name), variant_(v), slots_(slots) {}

  EmittedKernel run() {
    std::ostringstream out;
    offsets(out);
    if (!k_.reduces()) flat(out);
    else if (k_.inner() == 1) rows(out);
    else columns(out);
    launcher(out);
    return {out.str(), "launch_" + name_};
  }

private:
  std::string in(int i) const { return "in" + std::to_string(i); }
  std::string outName(std::size_t i) const { return "out" + std::to_string(i); }

  void offsets(std::ostream& o) {
    for (std::size_t i = 0; i < k_.inputs.size(); ++i) {
      const KernelInput& input = k_.inputs[i];
      o << "__device__ __forceinline__ int64_t " << name_ << "_off" << i << "(int64_t lin) {\n";
      if (input.linear) {
        o << "  return lin;\n}\n";
        continue;
      }
      o << "  int64_t off = " << i64(input.offset) << ";\n  int64_t rest = lin;\n";
      for (std::size_t d = k_.shape.size(); d-- > 0;) {
        const int64_t size = k_.shape[d], stride = input.strides[d];
        if (d == 0) {
          if (stride != 0) o << "  off += rest * " << i64(stride) << ";\n";
        } else {
          if (stride != 0 && size != 1) o << "  off += (rest % " << i64(size) << ") * " << i64(stride) << ";\n";
          if (size != 1) o << "  rest /= " << i64(size) << ";\n";
        }
      }
      o << "  return off;\n}\n";
    }
  }

  std::string params() const {
    std::string p;
    for (std::size_t i = 0; i < k_.inputs.size(); ++i) p += "const float* __restrict__ " + in(i) + ", ";
    for (std::size_t i = 0; i < k_.outputs.size(); ++i) p += "float* __restrict__ " + outName(i) + ", ";
    return p.substr(0, p.size() - 2);
  }

  // Inputs (not behind a reduction) that the value needs, to preload 16-byte lanes.
  void collectInputs(int id, std::set<int>& inputs, std::set<int>& seen) const {
    if (!seen.insert(id).second) return;
    const KernelValue& v = k_.values[id];
    if (v.op == ValueOp::Input) inputs.insert(v.input);
    if (v.op == ValueOp::Reduce) return;
    for (int a : v.args) collectInputs(a, inputs, seen);
  }

  std::string value(int id, Scope& s, std::ostream& o, const std::string& indent) {
    if (auto it = s.memo.find(id); it != s.memo.end()) return it->second;
    const KernelValue& v = k_.values[id];
    std::string expr;
    switch (v.op) {
      case ValueOp::Constant: return lit(v.params.at(0));
      case ValueOp::Reduce: return "red" + std::to_string(id);
      case ValueOp::Input:
        if (s.lanes && k_.inputs[v.input].linear) expr = "L" + std::to_string(v.input) + "[l]";
        else expr = in(v.input) + "[" + name_ + "_off" + std::to_string(v.input) + "(lin)]";
        break;
      default: {
        std::vector<std::string> args;
        for (int a : v.args) args.push_back(value(a, s, o, indent));
        expr = call(v.fn, args, v.params);
      }
    }
    const std::string var = "v" + std::to_string(id);
    o << indent << "const float " << var << " = " << expr << ";\n";
    s.memo[id] = var;
    return var;
  }

  // Loads the linear inputs `ids` for VEC lanes at `base` (16-byte loads when VEC is 4).
  void loadLanes(std::ostream& o, const std::set<int>& ids, const std::string& indent) {
    for (int i : ids) {
      if (!k_.inputs[i].linear) continue;
      o << indent << "float L" << i << "[VEC];\n"
        << indent << "if constexpr (VEC == 4) { const float4 q = *reinterpret_cast<const float4*>(" << in(i)
        << " + base); L" << i << "[0] = q.x; L" << i << "[1] = q.y; L" << i << "[2] = q.z; L" << i << "[3] = q.w; }\n"
        << indent << "else { for (int l = 0; l < VEC; ++l) L" << i << "[l] = " << in(i) << "[base + l]; }\n";
    }
  }

  void storeLanes(std::ostream& o, std::size_t outIndex, const std::string& indent) {
    const std::string a = "O" + std::to_string(outIndex);
    o << indent << "if constexpr (VEC == 4) *reinterpret_cast<float4*>(" << outName(outIndex) << " + base) = make_float4("
      << a << "[0], " << a << "[1], " << a << "[2], " << a << "[3]);\n"
      << indent << "else { for (int l = 0; l < VEC; ++l) " << outName(outIndex) << "[base + l] = " << a << "[l]; }\n";
  }

  // The body over VEC lanes at `base`: preload, compute, then `sink` for each lane.
  void laneBody(std::ostream& o, const std::vector<int>& roots, const Scope& outer, const std::string& indent,
                const std::function<void(std::ostream&, const std::vector<std::string>&, const std::string&)>& sink,
                const std::function<void(std::ostream&, const std::string&)>& after) {
    std::set<int> inputs, seen;
    for (int r : roots) collectInputs(r, inputs, seen);
    loadLanes(o, inputs, indent);
    o << indent << "#pragma unroll\n" << indent << "for (int l = 0; l < VEC; ++l) {\n";
    const std::string in2 = indent + "  ";
    o << in2 << "const int64_t lin = base + l;\n" << in2 << "(void)lin;\n";
    Scope s = outer;
    s.lanes = true;
    std::vector<std::string> names;
    for (int r : roots) names.push_back(value(r, s, o, in2));
    sink(o, names, in2);
    o << indent << "}\n";
    after(o, indent);
  }

  std::vector<int> fullOutputs() const {
    std::vector<int> r;
    for (const auto& out : k_.outputs)
      if (!out.perRow) r.push_back(out.value);
    return r;
  }

  void declareOutLanes(std::ostream& o, const std::string& indent) {
    for (std::size_t i = 0; i < k_.outputs.size(); ++i)
      if (!k_.outputs[i].perRow) o << indent << "float O" << i << "[VEC];\n";
  }

  void sinkOutputs(std::ostream& o, const std::vector<std::string>& names, const std::string& indent) {
    std::size_t j = 0;
    for (std::size_t i = 0; i < k_.outputs.size(); ++i)
      if (!k_.outputs[i].perRow) o << indent << "O" << i << "[l] = " << names[j++] << ";\n";
  }

  void storeOutputs(std::ostream& o, const std::string& indent) {
    for (std::size_t i = 0; i < k_.outputs.size(); ++i)
      if (!k_.outputs[i].perRow) storeLanes(o, i, indent);
  }

  void flat(std::ostream& o) {
    const int64_t n = k_.numel();
    o << "template <int VEC>\n__global__ void __launch_bounds__(" << variant_.block << ") " << name_ << "_kernel("
      << params() << ") {\n"
      << "  const int64_t chunks = " << i64(n) << " / VEC;\n"
      << "  for (int64_t c = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; c < chunks; c += (int64_t)gridDim.x * blockDim.x) {\n"
      << "    const int64_t base = c * VEC;\n";
    declareOutLanes(o, "    ");
    laneBody(o, fullOutputs(), Scope{}, "    ",
             [&](std::ostream& os, const auto& names, const std::string& ind) { sinkOutputs(os, names, ind); },
             [&](std::ostream& os, const std::string& ind) { storeOutputs(os, ind); });
    o << "  }\n";
    // The tail that does not fill a vector: scalar, by the first threads of the grid.
    o << "  for (int64_t lin = chunks * VEC + blockIdx.x * (int64_t)blockDim.x + threadIdx.x; lin < " << i64(n)
      << "; lin += (int64_t)gridDim.x * blockDim.x) {\n";
    Scope s;
    std::size_t j = 0;
    std::vector<int> outs = fullOutputs();
    for (std::size_t i = 0; i < k_.outputs.size(); ++i) {
      const std::string v = value(outs[j++], s, o, "    ");
      o << "    " << outName(i) << "[lin] = " << v << ";\n";
    }
    o << "  }\n}\n";
  }

  // Reductions of a row kernel in order: each one is a pass over the row, then the row values
  // that depend only on finished reductions are hoisted into `row`.
  std::vector<int> reductions() const {
    std::vector<int> r;
    for (std::size_t i = 0; i < k_.values.size(); ++i)
      if (k_.values[i].op == ValueOp::Reduce) r.push_back(static_cast<int>(i));
    return r;
  }

  void hoistRowValues(std::ostream& o, Scope& row, int upTo, const std::string& indent) {
    for (int i = 0; i < static_cast<int>(k_.values.size()); ++i) {
      const KernelValue& v = k_.values[i];
      if (v.op == ValueOp::Unary || v.op == ValueOp::Binary || v.op == ValueOp::Select)
        if (!k_.variesOverReduced(i) && dependsOnlyOnRow(i, upTo)) value(i, row, o, indent);
    }
  }

  bool dependsOnlyOnRow(int id, int upTo) const {
    const KernelValue& v = k_.values[id];
    if (v.op == ValueOp::Reduce) return id <= upTo;
    if (v.op == ValueOp::Input) return !k_.variesOverReduced(id);
    for (int a : v.args)
      if (!dependsOnlyOnRow(a, upTo)) return false;
    return true;
  }

  void writeRowOutputs(std::ostream& o, Scope& row, const std::string& rowIndex, const std::string& indent,
                       bool onlyThreadZero) {
    for (std::size_t i = 0; i < k_.outputs.size(); ++i) {
      if (!k_.outputs[i].perRow) continue;
      std::string v = value(k_.outputs[i].value, row, o, indent);
      o << indent << (onlyThreadZero ? "if (threadIdx.x == 0) " : "") << outName(i) << "[" << rowIndex << "] = " << v
        << ";\n";
    }
  }

  void rows(std::ostream& o) {
    const int64_t rowsCount = k_.outer(), R = k_.reduced();
    o << "template <int VEC>\n__global__ void __launch_bounds__(" << variant_.block << ") " << name_ << "_kernel("
      << params() << ") {\n"
      << "  __shared__ float scratch[33];\n"
      << "  for (int64_t row = blockIdx.x; row < " << i64(rowsCount) << "; row += gridDim.x) {\n"
      << "    const int64_t rowBase = row * " << i64(R) << ";\n"
      << "    { const int64_t lin = rowBase; (void)lin;\n";
    Scope row;
    const std::string ind = "    ";
    for (int r : reductions()) {
      const KernelValue& red = k_.values[r];
      o << ind << "float acc" << r << " = " << reduceInit(red.reduce) << ";\n"
        << ind << "for (int64_t c = threadIdx.x; c < " << i64(R) << " / VEC; c += blockDim.x) {\n"
        << ind << "  const int64_t base = rowBase + c * VEC;\n";
      laneBody(o, {red.args[0]}, row, ind + "  ",
               [&](std::ostream& os, const auto& names, const std::string& in2) {
                 os << in2 << "acc" << r << " = " << reduceOp(red.reduce) << "::apply(acc" << r << ", " << names[0]
                    << ");\n";
               },
               [](std::ostream&, const std::string&) {});
      o << ind << "}\n"
        << ind << "const float red" << r << " = blockReduce<" << reduceOp(red.reduce) << ">(acc" << r
        << ", scratch);\n";
      hoistRowValues(o, row, r, ind);
    }
    writeRowOutputs(o, row, "row", ind, true);
    if (!fullOutputs().empty()) {
      o << ind << "for (int64_t c = threadIdx.x; c < " << i64(R) << " / VEC; c += blockDim.x) {\n"
        << ind << "  const int64_t base = rowBase + c * VEC;\n";
      declareOutLanes(o, ind + "  ");
      laneBody(o, fullOutputs(), row, ind + "  ",
               [&](std::ostream& os, const auto& names, const std::string& in2) { sinkOutputs(os, names, in2); },
               [&](std::ostream& os, const std::string& in2) { storeOutputs(os, in2); });
      o << ind << "}\n";
    }
    o << "    }\n  }\n}\n";
  }

  void columns(std::ostream& o) {
    const int64_t outer = k_.outer(), R = k_.reduced(), inner = k_.inner();
    o << "template <int VEC>\n__global__ void __launch_bounds__(" << variant_.block << ") " << name_ << "_kernel("
      << params() << ") {\n"
      << "  for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < " << i64(outer * inner)
      << "; t += (int64_t)gridDim.x * blockDim.x) {\n"
      << "    const int64_t o = t / " << i64(inner) << ", i = t % " << i64(inner) << ";\n"
      << "    { const int64_t lin = o * " << i64(R * inner) << " + i; (void)lin;\n";
    Scope row;
    const std::string ind = "    ";
    for (int r : reductions()) {
      const KernelValue& red = k_.values[r];
      o << ind << "float acc" << r << " = " << reduceInit(red.reduce) << ";\n"
        << ind << "for (int64_t c = 0; c < " << i64(R) << "; ++c) {\n"
        << ind << "  const int64_t lin = (o * " << i64(R) << " + c) * " << i64(inner) << " + i;\n";
      Scope s = row;
      std::string v = value(red.args[0], s, o, ind + "  ");
      o << ind << "  acc" << r << " = " << reduceOp(red.reduce) << "::apply(acc" << r << ", " << v << ");\n"
        << ind << "}\n"
        << ind << "const float red" << r << " = acc" << r << ";\n";
      hoistRowValues(o, row, r, ind);
    }
    writeRowOutputs(o, row, "t", ind, false);
    if (!fullOutputs().empty()) {
      o << ind << "for (int64_t c = 0; c < " << i64(R) << "; ++c) {\n"
        << ind << "  const int64_t lin = (o * " << i64(R) << " + c) * " << i64(inner) << " + i;\n";
      Scope s = row;
      for (std::size_t i = 0; i < k_.outputs.size(); ++i)
        if (!k_.outputs[i].perRow) {
          const std::string v = value(k_.outputs[i].value, s, o, ind + "  ");
          o << ind << "  " << outName(i) << "[lin] = " << v << ";\n";
        }
      o << ind << "}\n";
    }
    o << "    }\n  }\n}\n";
  }

  void launcher(std::ostream& o) {
    o << "static int launch_" << name_ << "(const StitchTensor* t, cudaStream_t stream) {\n";
    std::string args, aligned = "true";
    for (std::size_t i = 0; i < k_.inputs.size(); ++i) {
      o << "  const float* " << in(i) << " = (const float*)t[" << slots_.at(k_.inputs[i].tensorId) << "].data;\n";
      args += in(i) + ", ";
      if (k_.inputs[i].linear) aligned += " && ((uintptr_t)" + in(i) + " % 16 == 0)";
    }
    for (std::size_t i = 0; i < k_.outputs.size(); ++i) {
      o << "  float* " << outName(i) << " = (float*)t[" << slots_.at(k_.outputs[i].tensorId) << "].data;\n";
      args += outName(i) + ", ";
      if (!k_.outputs[i].perRow) aligned += " && ((uintptr_t)" + outName(i) + " % 16 == 0)";
    }
    args = args.substr(0, args.size() - 2);
    const int block = variant_.block;
    bool canVector = variant_.vec == 4;
    std::string grid4, grid1;
    if (!k_.reduces()) {
      const int64_t n = k_.numel(), per = static_cast<int64_t>(block) * variant_.items;
      grid4 = std::to_string(std::max<int64_t>(1, (n / 4 + per - 1) / per));
      grid1 = std::to_string(std::max<int64_t>(1, (n + per - 1) / per));
    } else if (k_.inner() == 1) {
      canVector = canVector && k_.reduced() % 4 == 0;
      grid4 = grid1 = std::to_string(std::min<int64_t>(k_.outer(), 1 << 30));
    } else {
      canVector = false;  // a column reduction walks the reduced dim one element at a time
      grid1 = std::to_string(std::max<int64_t>(1, (k_.outer() * k_.inner() + block - 1) / block));
    }
    if (canVector)
      o << "  if (" << aligned << ")\n    " << name_ << "_kernel<4><<<" << grid4 << ", " << block << ", 0, stream>>>("
        << args << ");\n  else\n  ";
    o << "  " << name_ << "_kernel<1><<<" << grid1 << ", " << block << ", 0, stream>>>(" << args << ");\n"
      << "  return (int)cudaGetLastError();\n}\n";
  }

  const FusedKernel& k_;
  std::string name_;
  Variant variant_;
  const std::map<std::string, int>& slots_;
};

}  // namespace

std::string Variant::name() const {
  return "b" + std::to_string(block) + "v" + std::to_string(vec) + "i" + std::to_string(items);
}

EmittedKernel emitKernel(const FusedKernel& kernel, const std::string& name, const Variant& variant,
                         const std::map<std::string, int>& slots) {
  return Emitter(kernel, name, variant, slots).run();
}

std::string emitPrelude() {
  return R"(#include "stitch_abi.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

__device__ __forceinline__ float sc_gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.7071067811865476f)); }
__device__ __forceinline__ float sc_gelu_tanh(float x) {
  return 0.5f * x * (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
}
__device__ __forceinline__ float sc_silu(float x) { return x / (1.0f + expf(-x)); }
__device__ __forceinline__ float sc_softplus(float x, float beta, float threshold) {
  return x * beta > threshold ? x : log1pf(expf(x * beta)) / beta;
}
__device__ __forceinline__ float sc_mish(float x) { return x * tanhf(sc_softplus(x, 1.0f, 20.0f)); }
__device__ __forceinline__ float sc_elu(float x, float alpha, float scale, float input_scale) {
  return x > 0.0f ? x * scale : alpha * scale * expm1f(x * input_scale);
}

struct SumOp { __device__ static float apply(float a, float b) { return a + b; } };
struct ProdOp { __device__ static float apply(float a, float b) { return a * b; } };
struct MaxOp { __device__ static float apply(float a, float b) { return fmaxf(a, b); } };
struct MinOp { __device__ static float apply(float a, float b) { return fminf(a, b); } };

// Block-wide reduction: warp shuffles, then one value per warp through shared memory; every
// thread gets the result. `scratch` holds 33 floats; the trailing barrier lets the caller reuse it.
template <typename Op>
__device__ __forceinline__ float blockReduce(float v, float* scratch) {
  for (int o = 16; o > 0; o >>= 1) v = Op::apply(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, warps = (blockDim.x + 31) >> 5;
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    float w = lane < warps ? scratch[lane] : scratch[0];
    for (int o = 16; o > 0; o >>= 1) w = Op::apply(w, __shfl_xor_sync(0xffffffffu, w, o));
    if (lane == 0) scratch[32] = w;
  }
  __syncthreads();
  const float r = scratch[32];
  __syncthreads();
  return r;
}

)";
}

}  // namespace stitch::agents::builtin
