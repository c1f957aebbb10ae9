// Emission of one fused kernel; see CudaEmitter.h. Values are emitted as `const float vN`
// statements in the scope that needs them: per element inside the loops, per row after each
// reduction (row statistics are computed once, not per element). Kernel shapes: flat (or tiled,
// where an input lies across the iteration order), rows
// (a warp, a few lanes or a block per row; several blocks per row with a last-block combine when rows are
// few, as one kernel per reduction when they depend on each other), columns (split over blocks
// the same way when columns are few), row and column scans; pooling windows are device
// functions any shape can call.
#include "agents/builtin/emit/CudaEmitter.h"

#include "agents/builtin/lower/ReductionPasses.h"

#include "agents/builtin/ops/OpDef.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

namespace stitch::agents::builtin {

namespace {

std::string i64(int64_t v) { return "(int64_t)" + std::to_string(v) + "LL"; }

// A kernel function's CUDA (the registry's, agents/builtin/ops). KernelBuilder::finish refuses a
// kernel whose function has none, so reaching an unknown one here is a bug, said with its name.
std::string call(const std::string& fn, const std::vector<std::string>& a, const std::vector<double>& p) {
  auto expr = ops::cudaCall(fn, {a, p});
  if (!expr) throw std::logic_error(expr.error().message);
  return std::move(expr).value();
}

const char* reduceInit(ReduceKind k) {
  switch (k) {
    case ReduceKind::Sum: return "0.0f";
    case ReduceKind::Prod: return "1.0f";
    case ReduceKind::Max:
    case ReduceKind::ArgMax: return "__int_as_float(0xff800000)";
    case ReduceKind::Min:
    case ReduceKind::ArgMin: return "__int_as_float(0x7f800000)";
  }
  return "0.0f";
}

const char* reduceOp(ReduceKind k) {
  switch (k) {
    case ReduceKind::Sum: return "SumOp";
    case ReduceKind::Prod: return "ProdOp";
    case ReduceKind::Max: return "MaxOp";
    case ReduceKind::Min: return "MinOp";
    case ReduceKind::ArgMax: return "ArgOp<true>";
    case ReduceKind::ArgMin: return "ArgOp<false>";
  }
  return "SumOp";
}

bool isArg(ReduceKind k) { return k == ReduceKind::ArgMax || k == ReduceKind::ArgMin; }

const char* ctype(const std::string& dtype) {
  if (dtype == "int64") return "long long";
  if (dtype == "bool") return "bool";
  return "float";
}

// A value written to an output of `dtype`.
std::string stored(const std::string& dtype, const std::string& v) {
  return dtype == "bool" ? "(" + v + " != 0)" : v;
}

// A place values are computed: per element (with `lin` the iteration index, lanes when
// vectorized) or per row (`lin` the row's first element). `cached`: inside a loop over the
// chunks a row kernel holds in registers (chunk `k`), whose inputs are read from there.
struct Scope {
  bool lanes = false;
  bool cached = false;
  std::map<int, std::string> memo;
  std::map<int, std::string> staged;  // inputs read from a shared-memory tile (tiled()), by input index
};

class Emitter {
  using Pass = ReductionPass;  // lower/ReductionPasses.h

public:
  Emitter(const FusedKernel& k, const std::string& name, const Variant& v, const std::map<std::string, int>& slots)
      : k_(k), name_(name), variant_(v), slots_(slots) {
    if (k_.reduces()) passes_ = reductionPasses(k_);
    else tile_ = tiledTranspose(k_);  // none for a scan
  }

  bool folds() const { return anyPass(Fold::MaxExpSum) || anyPass(Fold::Moments); }

  EmittedKernel run() {
    std::ostringstream out;
    offsets(out);
    pools(out);
    if (k_.scans()) {
      if (k_.inner() == 1) rowScan(out);
      else columnScan(out);
    } else if (tile_) {
      tiled(out);
    } else if (!k_.reduces()) {
      flat(out);
    } else if (k_.inner() == 1) {
      if (rowSplits() > 1 && onePass()) splitRows(out);
      else if (rowSplits() > 1) stagedRows(out);
      else rows(out, warpPerRow(k_, onePass()));
    } else {
      columns(out);
    }
    launcher(out);
    return {out.str(), "launch_" + name_};
  }

private:
  std::string in(int i) const { return "in" + std::to_string(i); }
  std::string outName(std::size_t i) const { return "out" + std::to_string(i); }
  bool floatInput(int i) const { return k_.inputs[i].dtype == "float32"; }
  bool floatOutput(std::size_t i) const { return k_.outputs[i].dtype == "float32"; }

  // `fn(lin)`: the element offset of row-major index `lin` over `shape` in a tensor with `strides`
  // (one per dim of `shape`) and `offset`.
  void offsetFunction(std::ostream& o, const std::string& fn, const std::vector<int64_t>& shape,
                      const std::vector<int64_t>& strides, int64_t offset) const {
    o << "__device__ __forceinline__ int64_t " << fn << "(int64_t lin) {\n"
      << "  int64_t off = " << i64(offset) << ";\n  int64_t rest = lin;\n";
    for (std::size_t d = shape.size(); d-- > 0;) {
      const int64_t size = shape[d], stride = strides[d];
      if (d == 0) {
        if (stride != 0) o << "  off += rest * " << i64(stride) << ";\n";
      } else {
        if (stride != 0 && size != 1) o << "  off += (rest % " << i64(size) << ") * " << i64(stride) << ";\n";
        if (size != 1) o << "  rest /= " << i64(size) << ";\n";
      }
    }
    o << "  return off;\n}\n";
  }

  void offsets(std::ostream& o) {
    for (std::size_t i = 0; i < k_.inputs.size(); ++i) {
      const KernelInput& input = k_.inputs[i];
      if (input.window) continue;
      if (input.linear)
        o << "__device__ __forceinline__ int64_t " << name_ << "_off" << i << "(int64_t lin) {\n  return lin;\n}\n";
      else
        offsetFunction(o, name_ + "_off" + std::to_string(i), k_.shape, input.strides, input.offset);
    }
    for (std::size_t i = 0; i < k_.outputs.size(); ++i) {
      const KernelOutput& out = k_.outputs[i];
      if (out.strided()) offsetFunction(o, outOffset(i), out.shape, out.strides, out.offset);
    }
  }

  // Output i's offset function: from its own row-major index to its place in the tensor written.
  std::string outOffset(std::size_t i) const { return name_ + "_ooff" + std::to_string(i); }

  // Output i's element at its row-major index `index`, as an lvalue.
  std::string outAt(std::size_t i, const std::string& index) const {
    const KernelOutput& out = k_.outputs[i];
    if (auto r = rowOutputStrides_.find(i); r != rowOutputStrides_.end())
      return outName(i) + "[ob" + std::to_string(i) + inRow(index, r->second) + "]";
    if (auto at = outputAt_.find(i); at != outputAt_.end()) return outName(i) + "[" + at->second + "]";
    return outName(i) + "[" + (out.strided() ? outOffset(i) + "(" + index + ")" : index) + "]";
  }

  // ` + var * stride`, nothing where the stride is 0.
  static std::string stepped(const std::string& var, int64_t stride) {
    if (stride == 0) return "";
    return " + " + var + (stride == 1 ? std::string() : " * " + i64(stride));
  }

  // Inside a row kernel, a tensor whose strides flatten over the reduced range is at its row's
  // offset (computed once, rowOffsets) plus the element's place in the row times its stride per
  // row element: the offset functions' int64 divisions otherwise run per element (four for each
  // element of level2/49's softmax over the channels of an NHWC row written NCHW: 0.66 TB/s on an
  // H200; three for the bias a training BatchNorm's statistics add to each element of a channel's
  // plane, level2/73).
  static std::string inRow(const std::string& index, int64_t stride) {
    if (stride == 0) return "";
    return " + ((" + index + ") - rowBase)" + (stride == 1 ? std::string() : " * " + i64(stride));
  }
  // Output i's stride per row element, where its trailing dims hold the reduced range and their
  // strides flatten over it.
  std::optional<int64_t> outputRowStride(std::size_t i) const {
    const KernelOutput& out = k_.outputs[i];
    int64_t covered = 1, stride = 0, next = -1;
    for (std::size_t d = out.shape.size(); d-- > 0 && covered < k_.reduced();) {
      if (out.shape[d] == 1) continue;
      if (next >= 0 && out.strides[d] != next) return std::nullopt;
      if (next < 0) stride = out.strides[d];
      next = out.strides[d] * out.shape[d];
      covered *= out.shape[d];
    }
    if (covered != k_.reduced()) return std::nullopt;
    return stride;
  }
  void rowOffsets(std::ostream& o, const std::string& ind) {
    for (const auto& [i, stride] : reducedStrides()) {
      const std::string rb = "rb" + std::to_string(i);
      o << ind << "const int64_t " << rb << " = " << name_ << "_off" << i << "(rowBase); (void)" << rb << ";\n";
      inputAt_[i] = rb + inRow("lin", stride);
    }
    for (std::size_t i = 0; i < k_.outputs.size(); ++i)
      if (k_.outputs[i].strided() && !k_.outputs[i].perRow)
        if (auto stride = outputRowStride(i)) {
          o << ind << "const int64_t ob" << i << " = " << outOffset(i) << "(rowBase);\n";
          rowOutputStrides_[i] = *stride;
        }
  }
  void endRows() {
    inputAt_.clear();
    rowOutputStrides_.clear();
  }

  // The window inputs a pooling value reads: the pooled tensor, or its prologue's inputs.
  std::vector<int> windowReads(const KernelValue& v) const {
    if (v.pool.prologue.empty()) return {v.input};
    std::vector<int> reads;
    for (const KernelValue& p : v.pool.prologue)
      if (p.op == ValueOp::Input && std::find(reads.begin(), reads.end(), p.input) == reads.end())
        reads.push_back(p.input);
    return reads;
  }

  // One device function per pooling value: the output coordinates from `lin`, then the window
  // loops in PyTorch's order (so an avg sums in the same order, a max sees NaN the same way). A
  // depthwise convolution walks its window as a max pool does (dilation, padding skipped) and
  // weights each element by its channel's kernel. A prologue computes each element the window
  // reads from its inputs at that element.
  void pools(std::ostream& o) {
    for (std::size_t id = 0; id < k_.values.size(); ++id) {
      const KernelValue& v = k_.values[id];
      if (v.op != ValueOp::Pool) continue;
      const PoolSpec& p = v.pool;
      const std::size_t r = p.kernel.size(), rank = k_.shape.size(), lead = rank - r;
      const bool weighted = p.weights >= 0;
      // Window dim j is iteration dim windowDim(j): the trailing ones unless the spec says.
      auto windowDim = [&](std::size_t j) { return p.windowDims.empty() ? lead + j : static_cast<std::size_t>(p.windowDims[j]); };
      auto windowOf = [&](std::size_t d) {
        for (std::size_t j = 0; j < r; ++j)
          if (windowDim(j) == d) return static_cast<int>(j);
        return -1;
      };
      const std::vector<int> reads = windowReads(v);
      o << "__device__ __forceinline__ float " << name_ << "_pool" << id << "(";
      for (int i : reads) o << "const " << ctype(k_.inputs[i].dtype) << "* __restrict__ " << in(i) << ", ";
      o << (weighted ? "const float* __restrict__ wgt, " : "") << "int64_t lin) {\n"
        << "  int64_t rest = lin;\n";
      // Each dim's coordinate, the last first: a window dim's is its output position oJ, another's cD.
      for (std::size_t d = rank; d-- > 0;) {
        const int j = windowOf(d);
        const int64_t size = k_.shape[d];
        if (j >= 0) o << "  const int64_t o" << j << " = rest % " << i64(size) << ";\n  rest /= " << i64(size) << ";\n";
        else if (d == 0) o << "  const int64_t c0 = rest;\n";
        else o << "  const int64_t c" << d << " = rest % " << i64(size) << ";\n  rest /= " << i64(size) << ";\n";
      }
      o << "  (void)rest;\n";
      for (int i : reads) {
        const KernelInput& input = k_.inputs[i];
        o << "  const int64_t b" << i << " = " << i64(input.offset);
        for (std::size_t d = 0; d < rank; ++d)
          if (windowOf(d) < 0 && input.strides[d] != 0) o << " + c" << d << " * " << i64(input.strides[d]);
        o << ";\n";
      }
      auto at = [&](int i) {
        std::string idx = "b" + std::to_string(i);
        for (std::size_t j = 0; j < r; ++j)
          if (k_.inputs[i].strides[windowDim(j)] != 0)
            idx += " + i" + std::to_string(j) + " * " + i64(k_.inputs[i].strides[windowDim(j)]);
        const std::string load = in(i) + "[" + idx + "]";
        return floatInput(i) ? load : "(float)" + load;
      };
      // The window's element at (i0, i1, ...): loaded, or computed by the prologue.
      auto element = [&](const std::string& ind) {
        if (p.prologue.empty()) return at(v.input);
        std::vector<std::string> names;
        for (std::size_t q = 0; q < p.prologue.size(); ++q) {
          const KernelValue& pv = p.prologue[q];
          std::string expr;
          if (pv.op == ValueOp::Constant) {
            names.push_back(floatLiteral(pv.params.at(0)));
            continue;
          }
          if (pv.op == ValueOp::Input) {
            expr = at(pv.input);
          } else {
            std::vector<std::string> args;
            for (int a : pv.args) args.push_back(names.at(a));
            expr = call(pv.fn, args, pv.params);
          }
          names.push_back("p" + std::to_string(q));
          o << ind << "const float " << names.back() << " = " << expr << ";\n";
        }
        return names.back();
      };
      std::string ind = "  ";
      if (p.max || weighted) {
        o << (weighted ? "  float sum = 0.0f;\n" : "  float m = __int_as_float(0xff800000);\n");
        for (std::size_t j = 0; j < r; ++j) {
          const std::string J = std::to_string(j);
          o << ind << "for (int64_t k" << J << " = 0; k" << J << " < " << p.kernel[j] << "; ++k" << J << ") {\n"
            << ind << "  const int64_t i" << J << " = o" << J << " * " << p.stride[j] << " - " << p.padding[j] << " + k" << J
            << " * " << p.dilation[j] << ";\n"
            << ind << "  if (i" << J << " < 0 || i" << J << " >= " << p.inSize[j] << ") continue;\n";
          ind += "  ";
        }
        if (weighted) {
          const KernelInput& w = k_.inputs[p.weights];
          std::string widx = i64(w.offset) + " + c" + std::to_string(p.channelDim) + " * " + i64(p.weightStrides[0]);
          for (std::size_t j = 0; j < r; ++j) widx += " + k" + std::to_string(j) + " * " + i64(p.weightStrides[1 + j]);
          const std::string e = element(ind);
          o << ind << "sum += " << e << " * wgt[" << widx << "];\n";
        } else {
          const std::string e = element(ind);
          o << ind << "const float v = " << e << ";\n" << ind << "if (v > m || v != v) m = v;\n";
        }
        for (std::size_t j = 0; j < r; ++j) o << std::string(2 + 2 * (r - 1 - j), ' ') << "}\n";
        o << (weighted ? "  return sum;\n}\n" : "  return m;\n}\n");
        continue;
      }
      averageWindow(o, p, element);
    }
  }

  // An average pool's window (the rest of pools()): its extent with and without the padding,
  // summed in PyTorch's order and divided as ATen divides (count_include_pad, divisor_override).
  void averageWindow(std::ostream& o, const PoolSpec& p, const std::function<std::string(const std::string&)>& element) {
    const std::size_t r = p.kernel.size();
    std::string ind = "  ";
    std::string pool = "1", count = "1";
    for (std::size_t j = 0; j < r; ++j) {
      const std::string J = std::to_string(j);
      o << "  int64_t s" << J << " = o" << J << " * " << p.stride[j] << " - " << p.padding[j] << ";\n"
        << "  int64_t e" << J << " = min(s" << J << " + " << p.kernel[j] << ", (int64_t)" << p.inSize[j] + p.padding[j]
        << ");\n";
      pool += " * (e" + J + " - s" + J + ")";
    }
    o << "  const int64_t pool = " << pool << ";\n";
    for (std::size_t j = 0; j < r; ++j) {
      const std::string J = std::to_string(j);
      o << "  s" << J << " = max(s" << J << ", (int64_t)0);\n  e" << J << " = min(e" << J << ", (int64_t)" << p.inSize[j]
        << ");\n";
      count += " * (e" + J + " - s" + J + ")";
    }
    o << "  if (" << count << " == 0) return 0.0f;  // a window wholly in the padding, as ATen\n"
      << "  float sum = 0.0f;\n";
    for (std::size_t j = 0; j < r; ++j) {
      const std::string J = std::to_string(j);
      o << ind << "for (int64_t i" << J << " = s" << J << "; i" << J << " < e" << J << "; ++i" << J << ") {\n";
      ind += "  ";
    }
    const std::string e = element(ind);
    o << ind << "sum += " << e << ";\n";
    for (std::size_t j = 0; j < r; ++j) o << std::string(2 + 2 * (r - 1 - j), ' ') << "}\n";
    const std::string divisor = p.divisorOverride != 0 ? std::to_string(p.divisorOverride)
                                : p.countIncludePad     ? std::string("pool")
                                                        : count;
    o << "  (void)pool;\n  return sum / (float)(" << divisor << ");\n}\n";
  }

  // The kernel takes the rows of the call (RuntimeRows.h): dim 0 of its iteration space is
  // k_.perRow times them.
  bool runtimeRows() const { return k_.perRow > 0; }

  // `n`, a count of the captured iteration space that dim 0 multiplies (its elements, its rows,
  // its columns), as an expression: a constant, or that count per row times `rows`.
  std::string count(int64_t n) const {
    if (!runtimeRows()) return i64(n);
    const int64_t perRow = n / k_.shape[0] * k_.perRow;
    return perRow == 1 ? "rows" : "(rows * " + i64(perRow) + ")";
  }

  std::string params() const {
    std::string p;
    for (std::size_t i = 0; i < k_.inputs.size(); ++i)
      p += std::string("const ") + ctype(k_.inputs[i].dtype) + "* __restrict__ " + in(static_cast<int>(i)) + ", ";
    for (std::size_t i = 0; i < k_.outputs.size(); ++i)
      p += std::string(ctype(k_.outputs[i].dtype)) + "* __restrict__ " + outName(i) + ", ";
    if (runtimeRows()) p += "const int64_t rows, ";
    return p.substr(0, p.size() - 2);
  }

  // Inputs (not behind a reduction) that the value needs, to preload 16-byte lanes.
  void collectInputs(int id, std::set<int>& inputs, std::set<int>& seen) const {
    if (!seen.insert(id).second) return;
    const KernelValue& v = k_.values[id];
    if (v.op == ValueOp::Input) inputs.insert(v.input);
    // A concatenation loads only its chosen piece, itself (concat below), padding only inside
    // the padded tensor (pad below), and a gather the row its index chose: none is preloaded.
    if (v.op == ValueOp::Reduce || v.op == ValueOp::ArgIndex || v.op == ValueOp::Scan || v.op == ValueOp::Concat ||
        v.op == ValueOp::Pad || v.op == ValueOp::Gather)
      return;
    for (int a : v.args) collectInputs(a, inputs, seen);
  }

  std::string value(int id, Scope& s, std::ostream& o, const std::string& indent) {
    if (auto it = s.memo.find(id); it != s.memo.end()) return it->second;
    const KernelValue& v = k_.values[id];
    std::string expr;
    switch (v.op) {
      case ValueOp::Constant: return floatLiteral(v.params.at(0));
      case ValueOp::Reduce: return "red" + std::to_string(id);
      case ValueOp::ArgIndex: return "idx" + std::to_string(v.args.at(0));
      case ValueOp::Scan: return "scan" + std::to_string(id);
      case ValueOp::Pool:
        expr = name_ + "_pool" + std::to_string(id) + "(";
        for (int i : windowReads(v)) expr += in(i) + ", ";
        expr += (v.pool.weights >= 0 ? in(v.pool.weights) + ", " : "") + "lin)";
        break;
      case ValueOp::Input:
        if (auto st = s.staged.find(v.input); st != s.staged.end()) expr = st->second;
        else if (s.cached && cached_.count(v.input)) expr = "C" + std::to_string(v.input) + "[k]" + (s.lanes ? "[l]" : "");
        else if (s.lanes && k_.inputs[v.input].linear && floatInput(v.input)) expr = "L" + std::to_string(v.input) + "[l]";
        else expr = load(v.input);
        break;
      case ValueOp::Concat:
        expr = concat(id, o, indent);
        break;
      case ValueOp::Triangle:
        expr = triangle(id, value(v.args.at(0), s, o, indent), o, indent);
        break;
      case ValueOp::Pad:
        expr = pad(id, o, indent);
        break;
      case ValueOp::Gather:
        expr = gather(id, value(v.args.at(1), s, o, indent));
        break;
      default: {
        std::vector<std::string> args;
        for (int a : v.args) args.push_back(value(a, s, o, indent));
        expr = call(v.fn, args, v.params);
      }
    }
    const std::string var = "v" + std::to_string(id);
    o << indent << "const " << (v.integer ? "long long " : "float ") << var << " = " << expr << ";\n";
    s.memo[id] = var;
    return var;
  }

  // Input i at the element `lin`, as float (bool as 0/1) or, for int64, exact (KernelValue::integer).
  std::string load(int i) const {
    std::string e;
    if (auto at = inputAt_.find(i); at != inputAt_.end())
      e = in(i) + "[" + at->second + "]";
    else
      e = in(i) + "[" + name_ + "_off" + std::to_string(i) + "(lin)]";
    return k_.inputs[i].dtype == "bool" ? "(float)" + e : e;
  }

  // Iteration dim d's coordinate of the element at `lin` (0 for a dim of size 1 or none), as an
  // operand of + and - (% binds tighter).
  std::string coordinate(int d) const {
    if (d < 0) return "(int64_t)0";
    int64_t inner = 1;
    for (std::size_t e = d + 1; e < k_.shape.size(); ++e) inner *= k_.shape[e];
    // lin stays below the element count, so dim 0's coordinate needs no modulo (and its size
    // may be the call's).
    if (d == 0) return "(lin / " + i64(inner) + ")";
    return "(lin / " + i64(inner) + ") % " + i64(k_.shape[d]);
  }

  // triu/tril: the value where its (row, col) lie on the kept side of the diagonal, else zero.
  std::string triangle(int id, const std::string& x, std::ostream& o, const std::string& indent) const {
    const KernelValue& v = k_.values[id];
    const std::size_t rank = v.dimMap.size();
    const std::string d = "tri" + std::to_string(id);  // col - row
    o << indent << "const int64_t " << d << " = " << coordinate(v.dimMap[rank - 1]) << " - "
      << coordinate(v.dimMap[rank - 2]) << ";\n";
    const auto diagonal = static_cast<int64_t>(v.params.at(0));
    return "(" + d + (v.params.at(1) != 0 ? " >= " : " <= ") + i64(diagonal) + " ? " + x + " : 0.0f)";
  }

  // Constant padding: the load only where the element lies inside the padded tensor (the
  // conditional operator evaluates it alone there), the value elsewhere.
  std::string pad(int id, std::ostream& o, const std::string& indent) const {
    const KernelValue& v = k_.values[id];
    const std::string c = "pad" + std::to_string(id);
    std::string inside;
    for (std::size_t p = 0; p < v.dimMap.size(); ++p) {
      if (v.dimMap[p] < 0 || (v.padBefore[p] == 0 && v.padInner[p] == k_.shape[v.dimMap[p]])) continue;
      const std::string x = c + "_" + std::to_string(p);
      o << indent << "const int64_t " << x << " = " << coordinate(v.dimMap[p]) << " - " << i64(v.padBefore[p]) << ";\n";
      inside += std::string(inside.empty() ? "" : " && ") + x + " >= 0 && " + x + " < " + i64(v.padInner[p]);
    }
    const std::string load = this->load(k_.values[v.args.at(0)].input);
    return inside.empty() ? load : "((" + inside + ") ? " + load + " : " + floatLiteral(v.params.at(0)) + ")";
  }

  // The table's element at the row `index` chose (counted from the end when negative, as PyTorch
  // does) and the element's own coordinates within the row. An index outside the table, which
  // PyTorch raises on, reads the nearest row rather than outside it (nll_loss's ignored targets
  // are read so, and their terms dropped).
  std::string gather(int id, const std::string& index) const {
    const KernelValue& v = k_.values[id];
    const int i = k_.values[v.args.at(0)].input;
    const auto rows = static_cast<int64_t>(v.params.at(0)), rowStride = static_cast<int64_t>(v.params.at(1));
    const std::string wrapped = "(int64_t)(" + index + " < 0 ? " + index + " + " + i64(rows) + " : " + index + ")";
    return in(i) + "[" + name_ + "_off" + std::to_string(i) + "(lin) + min(max(" + wrapped + ", (int64_t)0), " +
           i64(rows - 1) + ") * " + i64(rowStride) + "]";
  }

  // The concatenation's element at `lin`: its coordinate along the concatenated dim picks the
  // piece, and the conditional operator evaluates that piece's load alone.
  std::string concat(int id, std::ostream& o, const std::string& indent) const {
    const KernelValue& v = k_.values[id];
    const std::string c = "cat" + std::to_string(id);  // the coordinate along the concatenated dim
    o << indent << "const int64_t " << c << " = " << coordinate(v.concatDim) << ";\n";
    std::string expr = load(k_.values[v.args.back()].input);
    for (std::size_t p = v.args.size() - 1; p-- > 0;)
      expr = "(" + c + " < " + i64(v.concatEnds[p]) + " ? " + load(k_.values[v.args[p]].input) + " : " + expr + ")";
    return expr;
  }

  // Loads the linear float inputs `ids` for VEC lanes at `base` (16-byte loads when VEC is 4).
  void loadLanes(std::ostream& o, const std::set<int>& ids, const std::string& indent, bool cached = false) {
    for (int i : ids) {
      if (!k_.inputs[i].linear || !floatInput(i) || (cached && cached_.count(i))) continue;
      o << indent << "float L" << i << "[VEC];\n"
        << indent << "if constexpr (VEC == 4) { const float4 q = *reinterpret_cast<const float4*>(" << in(i)
        << " + base); L" << i << "[0] = q.x; L" << i << "[1] = q.y; L" << i << "[2] = q.z; L" << i << "[3] = q.w; }\n"
        << indent << "else { for (int l = 0; l < VEC; ++l) L" << i << "[l] = " << in(i) << "[base + l]; }\n";
    }
  }

  // A strided output's four lanes go to consecutive elements only where vectorStores() says so;
  // otherwise each lane is stored at its own offset.
  void storeLanes(std::ostream& o, std::size_t outIndex, const std::string& indent) {
    const std::string a = "O" + std::to_string(outIndex);
    const KernelOutput& out = k_.outputs[outIndex];
    if (out.vectorStores())
      o << indent << "if constexpr (VEC == 4) *reinterpret_cast<float4*>(" << outName(outIndex) << " + "
        << (out.strided() ? outOffset(outIndex) + "(base)" : std::string("base")) << ") = make_float4(" << a << "[0], "
        << a << "[1], " << a << "[2], " << a << "[3]);\n"
        << indent << "else ";
    else
      o << indent;
    o << "{ for (int l = 0; l < VEC; ++l) " << outAt(outIndex, "base + l") << " = " << a << "[l]; }\n";
  }

  // The body over VEC lanes at `base`: preload, compute, then `sink` for each lane.
  void laneBody(std::ostream& o, const std::vector<int>& roots, const Scope& outer, const std::string& indent,
                const std::function<void(std::ostream&, const std::vector<std::string>&, const std::string&)>& sink,
                const std::function<void(std::ostream&, const std::string&)>& after) {
    std::set<int> inputs, seen;
    for (int r : roots) collectInputs(r, inputs, seen);
    loadLanes(o, inputs, indent, outer.cached);
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
      if (!k_.outputs[i].perRow) o << indent << ctype(k_.outputs[i].dtype) << " O" << i << "[VEC];\n";
  }

  void sinkOutputs(std::ostream& o, const std::vector<std::string>& names, const std::string& indent) {
    std::size_t j = 0;
    for (std::size_t i = 0; i < k_.outputs.size(); ++i)
      if (!k_.outputs[i].perRow) o << indent << "O" << i << "[l] = " << stored(k_.outputs[i].dtype, names[j++]) << ";\n";
  }

  void storeOutputs(std::ostream& o, const std::string& indent) {
    for (std::size_t i = 0; i < k_.outputs.size(); ++i)
      if (!k_.outputs[i].perRow) storeLanes(o, i, indent);
  }

  // Every output at element `lin`, computed in a fresh scope seeded with `seed`.
  void writeElement(std::ostream& o, const Scope& seed, const std::string& indent) {
    Scope s = seed;
    for (std::size_t i = 0; i < k_.outputs.size(); ++i)
      if (!k_.outputs[i].perRow) {
        const std::string v = value(k_.outputs[i].value, s, o, indent);
        o << indent << outAt(i, "lin") << " = " << stored(k_.outputs[i].dtype, v) << ";\n";
      }
  }

  std::string kernelHead(const std::string& templ = "template <int VEC>\n", const std::string& stage = "") const {
    return templ + "__global__ void __launch_bounds__(" + std::to_string(variant_.block) + ") " + name_ + stage +
           "_kernel(" + params() + ") {\n";
  }

  void flat(std::ostream& o) {
    const std::string n = count(k_.numel());
    o << kernelHead() << "  const int64_t chunks = " << n << " / VEC;\n"
      << "  for (int64_t c = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; c < chunks; c += (int64_t)gridDim.x * blockDim.x) {\n"
      << "    const int64_t base = c * VEC;\n";
    declareOutLanes(o, "    ");
    laneBody(o, fullOutputs(), Scope{}, "    ",
             [&](std::ostream& os, const auto& names, const std::string& ind) { sinkOutputs(os, names, ind); },
             [&](std::ostream& os, const std::string& ind) { storeOutputs(os, ind); });
    o << "  }\n";
    // The tail that does not fill a vector: scalar, by the first threads of the grid.
    o << "  for (int64_t lin = chunks * VEC + blockIdx.x * (int64_t)blockDim.x + threadIdx.x; lin < " << n
      << "; lin += (int64_t)gridDim.x * blockDim.x) {\n";
    writeElement(o, Scope{}, "    ");
    o << "  }\n}\n";
  }

  // A flat kernel over tiles of (across, inner) dims (TiledTranspose, LaunchShape.h), a block of
  // 256 threads per tile, tiles striding over the grid: the staged inputs are loaded with
  // neighbouring threads along `across` (their contiguous dim) into shared memory, then every
  // output element is computed with neighbouring threads along `inner` (the outputs' contiguous
  // dim), reading the staged inputs transposed from the tile. A tile row is padded by 32 / TI
  // floats, so that the lanes of a warp reading down its TI rows (at 32 / TI neighbouring columns)
  // hit distinct banks in both passes.
  static constexpr int kTileThreads = 256;
  // Tiles along `inner` and `across`, and the element count of the other dims (captured).
  struct TileCounts {
    int64_t a, b, rest;
  };
  TileCounts tileCounts() const {
    const int64_t A = k_.shape[tile_->inner], B = k_.shape[tile_->across];
    const int64_t TI = tile_->innerTile, TB = tile_->acrossTile();
    return {(A + TI - 1) / TI, (B + TB - 1) / TB, k_.numel() / (A * B)};
  }
  void tiled(std::ostream& o) {
    const TiledTranspose& t = *tile_;
    const int rank = static_cast<int>(k_.shape.size());
    auto innerOf = [&](int d) {
      int64_t n = 1;
      for (int e = d + 1; e < rank; ++e) n *= k_.shape[e];
      return n;
    };
    const int64_t A = k_.shape[t.inner], B = k_.shape[t.across];
    const int TI = t.innerTile, TB = t.acrossTile();
    const auto [tilesA, tilesB, rest] = tileCounts();
    o << "template <int VEC>\n__global__ void __launch_bounds__(" << kTileThreads << ") " << name_ << "_kernel("
      << params() << ") {\n";
    for (int i : t.staged) o << "  __shared__ float T" << i << "[" << TI << "][" << TB + 32 / TI << "];\n";
    o << "  const int rb = threadIdx.x % " << TB << ", ra = threadIdx.x / " << TB << ";\n"
      << "  const int wa = threadIdx.x % " << TI << ", wb = threadIdx.x / " << TI << ";\n"
      << "  const int64_t tiles = " << count(rest) << " * " << i64(tilesA * tilesB) << ";\n"
      << "  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {\n"
      << "    const int64_t a0 = (t % " << i64(tilesA) << ") * " << TI << ", b0 = ((t / " << i64(tilesA) << ") % "
      << i64(tilesB) << ") * " << TB << ";\n"
      << "    int64_t rest = t / " << i64(tilesA * tilesB) << ", lin0 = 0;\n";
    // The tile's other coordinates, innermost first; dim 0 takes what is left (the call's rows).
    for (int d = rank; d-- > 0;) {
      if (d == t.inner || d == t.across || (d > 0 && k_.shape[d] == 1)) continue;
      if (d == 0) {
        o << "    lin0 += rest * " << i64(innerOf(0)) << ";\n";
      } else {
        o << "    lin0 += (rest % " << i64(k_.shape[d]) << ") * " << i64(innerOf(d)) << ";\n"
          << "    rest /= " << i64(k_.shape[d]) << ";\n";
      }
    }
    o << "    (void)rest;\n";
    // Strided tensors read or written per element: the tile's offset, stepped along a and b (the
    // offset functions' int64 divisions otherwise ran per element: four per-channel parameters of
    // level2/52's batch norm, written NCHW from NHWC, at 2.3 TB/s on an H200).
    for (std::size_t i = 0; i < k_.inputs.size(); ++i) {
      const KernelInput& input = k_.inputs[i];
      if (input.window || input.linear || std::find(t.staged.begin(), t.staged.end(), static_cast<int>(i)) != t.staged.end())
        continue;
      o << "    const int64_t tb" << i << " = " << name_ << "_off" << i << "(lin0);\n";
      inputAt_[static_cast<int>(i)] =
          "tb" + std::to_string(i) + stepped("b", input.strides[t.across]) + stepped("a", input.strides[t.inner]);
    }
    for (std::size_t i = 0; i < k_.outputs.size(); ++i) {
      const KernelOutput& out = k_.outputs[i];
      if (out.perRow || !out.strided() || out.shape != k_.shape) continue;
      o << "    const int64_t to" << i << " = " << outOffset(i) << "(lin0);\n";
      outputAt_[i] = "to" + std::to_string(i) + stepped("b", out.strides[t.across]) + stepped("a", out.strides[t.inner]);
    }
    for (int i : t.staged) {
      const KernelInput& input = k_.inputs[i];
      o << "    {\n      const int64_t base = " << name_ << "_off" << i << "(lin0), b = b0 + rb;\n"
        << "      for (int j = ra; j < " << TI << "; j += " << kTileThreads / TB << ")\n"
        << "        if (b < " << i64(B) << " && a0 + j < " << i64(A) << ") T" << i << "[j][rb] = " << in(i)
        << "[base + b * " << i64(input.strides[t.across]) << " + (a0 + j) * " << i64(input.strides[t.inner])
        << "];\n"
        << "    }\n";
    }
    o << "    __syncthreads();\n"
      << "    for (int j = wb; j < " << TB << "; j += " << kTileThreads / TI << ") {\n"
      << "      const int64_t a = a0 + wa, b = b0 + j;\n"
      << "      if (a >= " << i64(A) << " || b >= " << i64(B) << ") continue;\n"
      << "      const int64_t lin = lin0 + b * " << i64(innerOf(t.across)) << " + a * " << i64(innerOf(t.inner)) << ";\n";
    Scope seed;
    for (int i : t.staged) seed.staged[i] = "T" + std::to_string(i) + "[wa][j]";
    writeElement(o, seed, "      ");
    o << "    }\n    __syncthreads();\n  }\n}\n";
    inputAt_.clear();
    outputAt_.clear();
  }

  // Reductions of a row kernel in order. Each pass over the row computes one of them, or two
  // folded into one state (reductionPasses); then the row values that depend only on finished
  // reductions are hoisted into `row`.
  std::vector<int> reductions() const { return reductionValues(k_); }

  bool anyArg() const {
    for (int r : reductions())
      if (isArg(k_.values[r].reduce)) return true;
    return false;
  }

  // `done`: the reductions finished so far.
  void hoistRowValues(std::ostream& o, Scope& row, const std::set<int>& done, const std::string& indent) {
    for (int i = 0; i < static_cast<int>(k_.values.size()); ++i) {
      const KernelValue& v = k_.values[i];
      if (v.op == ValueOp::Unary || v.op == ValueOp::Binary || v.op == ValueOp::Select)
        if (!k_.variesOverReduced(i) && dependsOnlyOnRow(i, done)) value(i, row, o, indent);
    }
  }

  bool dependsOnlyOnRow(int id, const std::set<int>& done) const {
    const KernelValue& v = k_.values[id];
    if (v.op == ValueOp::Reduce) return done.count(id) > 0;
    if (v.op == ValueOp::Input) return !k_.variesOverReduced(id);
    for (int a : v.args)
      if (!dependsOnlyOnRow(a, done)) return false;
    return true;
  }

  // The reductions of the first `count` passes.
  std::set<int> finished(std::size_t count) const {
    std::set<int> done;
    for (std::size_t p = 0; p < count; ++p) done.insert(passes_[p].reds.begin(), passes_[p].reds.end());
    return done;
  }

  bool anyPass(Fold f) const {
    for (const Pass& p : passes_)
      if (p.fold == f) return true;
    return false;
  }

  static const char* foldType(Fold f) { return f == Fold::MaxExpSum ? "MaxExpSum" : "Moments"; }
  static std::string foldScratch(Fold f) { return f == Fold::MaxExpSum ? "mscratch" : "wscratch"; }
  // The state a fold pass accumulates into.
  static std::string foldState(const Pass& p) { return "st" + std::to_string(p.reds[0]); }

  // The reductions of a folded pass as fields of its merged state `st`, recorded in `row` (a
  // norm's mean too: the state holds it, where sum / n would round it again).
  void bindFold(Scope& row, const Pass& p, const std::string& st) {
    if (p.fold == Fold::MaxExpSum) {
      row.memo[p.reds[0]] = st + ".m";
      row.memo[p.reds[1]] = st + ".s";
    } else {
      row.memo[p.reds[0]] = "(" + st + ".mean * " + floatLiteral(static_cast<double>(k_.reduced())) + ")";
      row.memo[p.reds[1]] = st + ".m2";
      row.memo[p.mean] = st + ".mean";
    }
  }

  bool dependsOnReduction(int id) const { return builtin::dependsOnReduction(k_, id); }

  // `guard`: which threads store (empty: all).
  void writeRowOutputs(std::ostream& o, Scope& row, const std::string& rowIndex, const std::string& indent,
                       const std::string& guard) {
    for (std::size_t i = 0; i < k_.outputs.size(); ++i) {
      if (!k_.outputs[i].perRow) continue;
      std::string v = value(k_.outputs[i].value, row, o, indent);
      o << indent << (guard.empty() ? "" : "if (" + guard + ") ") << outAt(i, rowIndex) << " = "
        << stored(k_.outputs[i].dtype, v) << ";\n";
    }
  }

  void declareScratch(std::ostream& o) {
    if (anyPass(Fold::None)) o << "  __shared__ float scratch[33];\n";
    if (anyArg()) o << "  __shared__ long long iscratch[33];\n";
    for (Fold f : {Fold::MaxExpSum, Fold::Moments})
      if (anyPass(f)) o << "  __shared__ " << foldType(f) << " " << foldScratch(f) << "[33];\n";
  }

  // A row read more than once (several passes, or a pass and the write of full-size outputs) and
  // short enough is held in registers: each thread loads its chunks once, at most cacheFloats()
  // floats, and every pass and the write read them there (Scope::cached). A row a warp takes (up
  // to 1024 floats) or a block of 256 threads (up to 8192) then moves through the SM once, as its
  // floor does; longer rows are read again by each pass.
  // Floats a thread of a `block`-thread launch may hold: 32, fewer where a thread's share of the
  // SM's registers is smaller (64 at 1024 threads), so that they are not spilled.
  static int64_t cacheFloats(int64_t block) { return std::min<int64_t>(32, 16384 / block); }
  void cacheRow(std::ostream& o, const std::string& first, int64_t stride, const std::string& ind) {
    if (passes_.size() + (fullOutputs().empty() ? 0 : 1) < 2) return;
    std::set<int> inputs, seen;
    for (const Pass& p : passes_) collectInputs(p.fold != Fold::None ? p.input : k_.values[p.reds[0]].args[0], inputs, seen);
    for (int v : fullOutputs()) collectInputs(v, inputs, seen);
    std::set<int> cache;
    for (int i : inputs)
      if (k_.inputs[i].linear && floatInput(i)) cache.insert(i);
    // Floats per thread and input, with 16-byte chunks or without (VEC 1 takes as many or fewer).
    const int64_t R = k_.reduced(), floats = 4 * (((R + 3) / 4 + stride - 1) / stride);
    if (cache.empty() || floats * static_cast<int64_t>(cache.size()) > cacheFloats(variant_.block)) return;
    cached_ = cache;
    // At least one slot: a row shorter than one 16-byte chunk has no chunks at VEC 4 (its elements are
    // the scalar head and tail), and a zero-sized array does not compile.
    o << ind << "constexpr int kCached = (int)((" << i64(R) << " / VEC + " << i64(stride - 1) << ") / " << i64(stride)
      << ") > 0 ? (int)((" << i64(R) << " / VEC + " << i64(stride - 1) << ") / " << i64(stride) << ") : 1;\n";
    for (int i : cache) o << ind << "float C" << i << "[kCached][VEC];\n";
    o << ind << "#pragma unroll\n"
      << ind << "for (int k = 0; k < kCached; ++k) {\n"
      << ind << "  const int64_t c = " << first << " + (int64_t)k * " << i64(stride) << ";\n"
      << ind << "  if (c < " << chunks() << ") {\n"
      << ind << "    const int64_t base = " << chunkBase() << ";\n";
    for (int i : cache) {
      const std::string C = "C" + std::to_string(i) + "[k]";
      o << ind << "    if constexpr (VEC == 4) { const float4 q = *reinterpret_cast<const float4*>(" << in(i) << " + base); "
        << C << "[0] = q.x; " << C << "[1] = q.y; " << C << "[2] = q.z; " << C << "[3] = q.w; }\n"
        << ind << "    else { for (int l = 0; l < VEC; ++l) " << C << "[l] = " << in(i) << "[base + l]; }\n";
    }
    o << ind << "  }\n" << ind << "}\n";
  }

  // The loop over the chunks `first, first + stride, ...` of the row at `rowBase`; `body` emits
  // what one chunk (at `base`) does, in the scope it is given. The stride is the launch's thread
  // count as a constant, so the loop unrolls and each thread has four 16-byte loads in flight
  // instead of one: a row of 1024 floats over 128 threads is two chunks per thread, and with one
  // load at a time the block waits out the latency twice. A row held in registers (cacheRow)
  // loops over the thread's chunks there, unrolled whole.
  void chunkLoop(std::ostream& o, const Scope& row, const std::string& first, int64_t stride, int unroll,
                 const std::string& indent, const std::function<void(const Scope&, const std::string&)>& body) {
    if (cached_.empty()) {
      o << indent << "#pragma unroll " << unroll << "\n"
        << indent << "for (int64_t c = " << first << "; c < " << chunks() << "; c += " << i64(stride) << ") {\n"
        << indent << "  const int64_t base = " << chunkBase() << ";\n";
      body(row, indent + "  ");
      o << indent << "}\n";
      return;
    }
    Scope s = row;
    s.cached = true;
    o << indent << "#pragma unroll\n"
      << indent << "for (int k = 0; k < kCached; ++k) {\n"
      << indent << "  const int64_t c = " << first << " + (int64_t)k * " << i64(stride) << ";\n"
      << indent << "  if (c < " << chunks() << ") {\n"
      << indent << "    const int64_t base = " << chunkBase() << ";\n";
    body(s, indent + "    ");
    o << indent << "  }\n" << indent << "}\n";
  }

  // The row's whole chunks and the first element of chunk `c`: from rowBase, or in a ragged row
  // from its first 16-byte boundary.
  std::string chunks() const { return ragged_ ? std::string("chunks") : i64(k_.reduced()) + " / VEC"; }
  std::string chunkBase() const { return ragged_ ? "rowBase + head + c * VEC" : "rowBase + c * VEC"; }

  // A ragged row's elements outside its whole chunks, one at a time (`lin` each): those before
  // its first 16-byte boundary and those after its last whole chunk.
  void elementLoop(std::ostream& o, const Scope& row, const std::string& first, int64_t stride, const std::string& ind,
                   const std::function<void(Scope&, const std::string&)>& body) {
    if (!ragged_) return;
    o << ind << "for (int64_t j = " << first << "; j < " << i64(k_.reduced()) << " - chunks * VEC; j += " << i64(stride)
      << ") {\n"
      << ind << "  const int64_t lin = rowBase + (j < head ? j : j + chunks * VEC);\n";
    Scope s = row;
    body(s, ind + "  ");
    o << ind << "}\n";
  }

  // Accumulates pass `p` over the chunks `first, first + stride, ...` of the row at `rowBase`:
  // into acc<r> (and acci<r>), or a fold's state, which takes each chunk whole (pushAll).
  void accumulate(std::ostream& o, Scope& row, const Pass& p, const std::string& first, int64_t stride,
                  const std::string& indent, int unroll = 4) {
    if (p.fold != Fold::None) {
      const std::string T = foldType(p.fold), st = foldState(p);
      o << indent << T << " " << st << " = " << T << "::identity();\n";
      chunkLoop(o, row, first, stride, unroll, indent, [&](const Scope& s, const std::string& in2) {
        o << in2 << "float X[VEC];\n";
        laneBody(o, {p.input}, s, in2,
                 [&](std::ostream& os, const auto& names, const std::string& in3) { os << in3 << "X[l] = " << names[0] << ";\n"; },
                 [&](std::ostream& os, const std::string& in3) {
                   os << in3 << st << ".pushAll<VEC>(X);\n";
                 });
      });
      elementLoop(o, row, first, stride, indent, [&](Scope& s, const std::string& in2) {
        const std::string v = value(p.input, s, o, in2);
        o << in2 << st << ".push(" << v << ");\n";
      });
      return;
    }
    const int r = p.reds[0];
    const KernelValue& red = k_.values[r];
    const std::string R = std::to_string(r);
    o << indent << "float acc" << R << " = " << reduceInit(red.reduce) << ";\n";
    if (isArg(red.reduce)) o << indent << "long long acci" << R << " = 0x7fffffffffffffffLL;\n";
    chunkLoop(o, row, first, stride, unroll, indent, [&](const Scope& s, const std::string& in2) {
      laneBody(o, {red.args[0]}, s, in2,
               [&](std::ostream& os, const auto& names, const std::string& in3) {
                 if (isArg(red.reduce))
                   os << in3 << reduceOp(red.reduce) << "::apply(acc" << R << ", acci" << R << ", " << names[0]
                      << ", lin - rowBase);\n";
                 else
                   os << in3 << "acc" << R << " = " << reduceOp(red.reduce) << "::apply(acc" << R << ", " << names[0]
                      << ");\n";
               },
               [](std::ostream&, const std::string&) {});
    });
    elementLoop(o, row, first, stride, indent, [&](Scope& s, const std::string& in2) {
      const std::string v = value(red.args[0], s, o, in2);
      if (isArg(red.reduce))
        o << in2 << reduceOp(red.reduce) << "::apply(acc" << R << ", acci" << R << ", " << v << ", lin - rowBase);\n";
      else
        o << in2 << "acc" << R << " = " << reduceOp(red.reduce) << "::apply(acc" << R << ", " << v << ");\n";
    });
  }

  // Plain passes from `p` on whose inputs depend on no reduction read the row in one loop, each
  // input loaded once for all of them: a triplet loss's two distances read the anchor once, not
  // twice (level1/99 at 0.87x of torch.compile with two loops). The end of those passes.
  std::size_t sharedLoop(std::size_t p) const {
    auto plain = [&](std::size_t q) {
      return passes_[q].fold == Fold::None && !dependsOnReduction(k_.values[passes_[q].reds[0]].args[0]);
    };
    std::size_t end = p + 1;
    if (plain(p))
      while (end < passes_.size() && plain(end)) ++end;
    return end;
  }

  // One step of plain reduction `r` over `v`, the element's index in the row being `lin - rowBase`.
  void applyPlain(std::ostream& o, int r, const std::string& v, const std::string& ind) const {
    const KernelValue& red = k_.values[r];
    const std::string R = std::to_string(r);
    if (isArg(red.reduce))
      o << ind << reduceOp(red.reduce) << "::apply(acc" << R << ", acci" << R << ", " << v << ", lin - rowBase);\n";
    else
      o << ind << "acc" << R << " = " << reduceOp(red.reduce) << "::apply(acc" << R << ", " << v << ");\n";
  }

  // Plain passes [p, end) accumulated in one loop over the row's chunks (sharedLoop).
  void accumulateTogether(std::ostream& o, Scope& row, std::size_t p, std::size_t end, const std::string& first,
                          int64_t stride, const std::string& indent, int unroll) {
    std::vector<int> reds, args;
    for (std::size_t q = p; q < end; ++q) {
      const int r = passes_[q].reds[0];
      const KernelValue& red = k_.values[r];
      reds.push_back(r);
      args.push_back(red.args[0]);
      o << indent << "float acc" << r << " = " << reduceInit(red.reduce) << ";\n";
      if (isArg(red.reduce)) o << indent << "long long acci" << r << " = 0x7fffffffffffffffLL;\n";
    }
    chunkLoop(o, row, first, stride, unroll, indent, [&](const Scope& s, const std::string& in2) {
      laneBody(o, args, s, in2,
               [&](std::ostream&, const auto& names, const std::string& in3) {
                 for (std::size_t k = 0; k < reds.size(); ++k) applyPlain(o, reds[k], names[k], in3);
               },
               [](std::ostream&, const std::string&) {});
    });
    elementLoop(o, row, first, stride, indent, [&](Scope& s, const std::string& in2) {
      for (std::size_t k = 0; k < reds.size(); ++k) applyPlain(o, reds[k], value(args[k], s, o, in2), in2);
    });
  }

  // The block-wide (or with `warp`, warp-wide) combine of pass `p`'s accumulators: into red<r>
  // (and idx<r>), or a fold's merged state st<r>r.
  void mergeBlock(std::ostream& o, const Pass& p, const std::string& indent, bool warp = false) {
    // A segment of fewer lanes than a warp shuffles within itself (xor offsets below its width).
    const std::string width = segment_ < 32 ? ", " + std::to_string(segment_) : "";
    if (p.fold != Fold::None) {
      const std::string st = foldState(p);
      o << indent << "const " << foldType(p.fold) << " " << st << "r = "
        << (warp ? (segment_ < 32 ? "warpMerge<" + std::to_string(segment_) + ">(" : "warpMerge(") + st + ")"
                 : "blockMerge(" + st + ", " + foldScratch(p.fold) + ")")
        << ";\n";
      return;
    }
    const int r = p.reds[0];
    const KernelValue& red = k_.values[r];
    const std::string R = std::to_string(r);
    const std::string isMax = red.reduce == ReduceKind::ArgMax ? "true" : "false";
    if (isArg(red.reduce)) {
      o << indent << (warp ? "warpArgReduce<" + isMax + width + ">(acc" + R + ", acci" + R + ");\n"
                           : "blockArgReduce<" + isMax + ">(acc" + R + ", acci" + R + ", scratch, iscratch);\n")
        << indent << "const float red" << R << " = acc" << R << ";\n"
        << indent << "const long long idx" << R << " = acci" << R << ";\n";
    } else {
      o << indent << "const float red" << R << " = " << (warp ? "warpReduce<" : "blockReduce<") << reduceOp(red.reduce)
        << (warp ? width : "") << ">(acc" << R << (warp ? ");\n" : ", scratch);\n");
    }
  }

  // mergeBlock, and a fold's reductions bound from its state.
  void combine(std::ostream& o, Scope& row, const Pass& p, const std::string& indent, bool warp = false) {
    mergeBlock(o, p, indent, warp);
    if (p.fold != Fold::None) bindFold(row, p, foldState(p) + "r");
  }

  // The pass that writes the full-size outputs of the row at `rowBase`.
  void writeFullOutputs(std::ostream& o, Scope& row, const std::string& first, int64_t stride, int unroll,
                        const std::string& ind) {
    if (fullOutputs().empty()) return;
    chunkLoop(o, row, first, stride, unroll, ind, [&](const Scope& s, const std::string& in2) {
      declareOutLanes(o, in2);
      laneBody(o, fullOutputs(), s, in2,
               [&](std::ostream& os, const auto& names, const std::string& in3) { sinkOutputs(os, names, in3); },
               [&](std::ostream& os, const std::string& in3) { storeOutputs(os, in3); });
    });
    elementLoop(o, row, first, stride, ind, [&](Scope& s, const std::string& in2) { writeElement(o, s, in2); });
  }

  // A block per row (or with `warp`, a warp per row), rows striding over the grid. A short row
  // takes `lanesPerRow` lanes of a warp (LaunchShape.h): the warp's rows step together, so that
  // every lane reaches each shuffle; past the last row a lane re-reads it and stores nothing.
  void rows(std::ostream& o, bool warp) {
    const std::string rowsCount = count(k_.outer());
    const int64_t R = k_.reduced(), warps = variant_.block / 32;
    o << kernelHead();
    segment_ = warp ? lanesPerRow(k_) : 32;
    if (warp && segment_ < 32) {
      const int64_t perWarp = 32 / segment_;
      o << "  const int lane = threadIdx.x & " << segment_ - 1 << ";\n"
        << "  for (int64_t first = (blockIdx.x * " << i64(warps) << " + (threadIdx.x >> 5)) * " << i64(perWarp)
        << "; first < " << rowsCount << "; first += (int64_t)gridDim.x * " << i64(warps * perWarp) << ") {\n"
        << "    const int64_t mine = first + ((threadIdx.x & 31) >> " << std::countr_zero(static_cast<unsigned>(segment_))
        << ");\n"
        << "    const bool live = mine < " << rowsCount << ";\n"
        << "    const int64_t row = live ? mine : " << rowsCount << " - 1;\n";
    } else if (warp) {
      o << "  const int lane = threadIdx.x & 31;\n"
        << "  for (int64_t row = blockIdx.x * " << i64(warps) << " + (threadIdx.x >> 5); row < " << rowsCount
        << "; row += (int64_t)gridDim.x * " << i64(warps) << ") {\n";
    } else {
      declareScratch(o);
      o << "  for (int64_t row = blockIdx.x; row < " << rowsCount << "; row += gridDim.x) {\n";
    }
    o << "    const int64_t rowBase = row * " << i64(R) << ";\n"
      << "    { const int64_t lin = rowBase; (void)lin;\n";
    rowOffsets(o, "    ");
    // A row whose length 16-byte chunks do not divide starts at any element: with VEC 4 its
    // chunks start at its first 16-byte boundary (the pointers are aligned), and the elements
    // around them are taken one at a time (elementLoop).
    ragged_ = R % 4 != 0;
    if (ragged_)
      o << "    const int64_t head = VEC == 4 ? (-rowBase) & 3 : 0;\n"
        << "    const int64_t chunks = (" << i64(R) << " - head) / VEC;\n";
    Scope row;
    const std::string ind = "    ", first = warp ? "lane" : "threadIdx.x";
    const int64_t stride = warp ? segment_ : variant_.block;
    const int unroll = warp ? 8 : 4;
    cacheRow(o, first, stride, ind);
    for (std::size_t p = 0; p < passes_.size();) {
      const std::size_t end = sharedLoop(p);
      if (end - p > 1) accumulateTogether(o, row, p, end, first, stride, ind, unroll);
      else accumulate(o, row, passes_[p], first, stride, ind, unroll);
      for (std::size_t q = p; q < end; ++q) combine(o, row, passes_[q], ind, warp);
      hoistRowValues(o, row, finished(end), ind);
      p = end;
    }
    const bool segmented = segment_ < 32;
    writeRowOutputs(o, row, "row", ind, first + " == 0" + (segmented ? " && live" : ""));
    if (segmented && !fullOutputs().empty()) o << ind << "if (live) {\n";
    writeFullOutputs(o, row, first, stride, unroll, segmented ? ind + "  " : ind);
    if (segmented && !fullOutputs().empty()) o << ind << "}\n";
    o << "    }\n  }\n}\n";
    cached_.clear();
    ragged_ = false;
    segment_ = 32;
    endRows();
  }

  // A one-pass kernel: per-row outputs only, and passes whose inputs depend on no reduction.
  bool onePass() const { return builtin::onePass(k_); }

  // Blocks per row when rows are too few to fill the GPU (a loss or a full reduction is one
  // row; group norm over [16,64,128,128] is 128 rows of 131072): about four blocks per SM, at
  // least two vector chunks per thread.
  int64_t rowSplits() const {
    const int64_t rowsCount = k_.outer(), chunks = k_.reduced() / 4;
    const int64_t want = (4 * 132 + rowsCount - 1) / rowsCount;
    const int64_t most = chunks / (2 * static_cast<int64_t>(variant_.block));
    return std::max<int64_t>(1, std::min({want, most, int64_t{1024}}));
  }

  // The row's index and its split (block within the row) from blockIdx.x, and the open scope.
  void openSplitRow(std::ostream& o, int64_t S) {
    o << "  const int64_t row = blockIdx.x / " << i64(S) << ", split = blockIdx.x % " << i64(S) << ";\n"
      << "  const int64_t rowBase = row * " << i64(k_.reduced()) << ";\n"
      << "  { const int64_t lin = rowBase; (void)lin;\n";
    rowOffsets(o, "  ");
  }

  std::string splitChunk() const { return "split * " + i64(variant_.block) + " + threadIdx.x"; }

  // Where reduction `r` stands among the kernel's reductions (its slot in the split buffers).
  int64_t position(int r) const {
    const auto reds = reductions();
    return std::find(reds.begin(), reds.end(), r) - reds.begin();
  }

  // A fold pass's buffer of partial states, one per split of each row.
  std::string foldPart(const Pass& p) const { return name_ + "_fpart" + std::to_string(p.reds[0]); }

  // Thread 0 stores this block's result of each pass in `ps` as partial `split` of its row (the
  // buffer holds one per reduction and split; a fold's states have their own). The row's last
  // block to arrive (an atomic count, reset for the next launch) combines the S partials of each
  // in split order, so the result does not depend on timing, into red<r>f (and idx<r>f),
  // recorded in `row`.
  void combineSplits(std::ostream& o, Scope& row, const std::vector<std::size_t>& ps, int64_t S, const std::string& ind) {
    const int64_t nred = static_cast<int64_t>(reductions().size());
    for (std::size_t p : ps) {
      const Pass& pass = passes_[p];
      if (pass.fold != Fold::None) {
        o << ind << "if (threadIdx.x == 0) " << foldPart(pass) << "[row * " << i64(S) << " + split] = " << foldState(pass)
          << "r;\n";
        continue;
      }
      const int r = pass.reds[0];
      const std::string slot = "(row * " + i64(S) + " + split) * " + i64(nred) + " + " + std::to_string(position(r));
      o << ind << "if (threadIdx.x == 0) " << name_ << "_part[" << slot << "] = red" << r << ";\n";
      if (isArg(k_.values[r].reduce))
        o << ind << "if (threadIdx.x == 0) " << name_ << "_parti[" << slot << "] = idx" << r << ";\n";
    }
    o << ind << "if (threadIdx.x == 0) {\n"
      << ind << "  __threadfence();\n"
      << ind << "  last = atomicAdd(&" << name_ << "_count[row], 1u) == " << S - 1 << "u;\n"
      << ind << "}\n"
      << ind << "__syncthreads();\n"
      << ind << "if (!last) return;\n"
      << ind << "__threadfence();\n";
    for (std::size_t p : ps) {
      const Pass& pass = passes_[p];
      if (pass.fold != Fold::None) {
        const std::string T = foldType(pass.fold), P = "p" + std::to_string(pass.reds[0]);
        o << ind << T << " " << P << " = " << T << "::identity();\n"
          << ind << "for (int64_t q = threadIdx.x; q < " << i64(S) << "; q += blockDim.x) " << P << " = " << T
          << "::merge(" << P << ", " << T << "::load(&" << foldPart(pass) << "[row * " << i64(S) << " + q]));\n"
          << ind << "const " << T << " " << P << "r = blockMerge(" << P << ", " << foldScratch(pass.fold) << ");\n";
        bindFold(row, pass, P + "r");
        continue;
      }
      const int r = pass.reds[0];
      const KernelValue& red = k_.values[r];
      const std::string R = std::to_string(r), P = "p" + R;
      const std::string slot = "(row * " + i64(S) + " + q) * " + i64(nred) + " + " + std::to_string(position(r));
      o << ind << "float " << P << " = " << reduceInit(red.reduce) << ";\n";
      if (isArg(red.reduce)) o << ind << "long long " << P << "i = 0x7fffffffffffffffLL;\n";
      o << ind << "for (int64_t q = threadIdx.x; q < " << i64(S) << "; q += blockDim.x)";
      if (isArg(red.reduce))
        o << " " << reduceOp(red.reduce) << "::apply(" << P << ", " << P << "i, __ldcg(&" << name_ << "_part[" << slot
          << "]), __ldcg(&" << name_ << "_parti[" << slot << "]));\n"
          << ind << "blockArgReduce<" << (red.reduce == ReduceKind::ArgMax ? "true" : "false") << ">(" << P << ", " << P
          << "i, scratch, iscratch);\n"
          << ind << "const float red" << R << "f = " << P << ";\n"
          << ind << "const long long idx" << R << "f = " << P << "i;\n";
      else
        o << " " << P << " = " << reduceOp(red.reduce) << "::apply(" << P << ", __ldcg(&" << name_ << "_part[" << slot
          << "]));\n"
          << ind << "const float red" << R << "f = blockReduce<" << reduceOp(red.reduce) << ">(" << P << ", scratch);\n";
      row.memo[r] = "red" + R + "f";
      for (std::size_t i = 0; i < k_.values.size(); ++i)
        if (k_.values[i].op == ValueOp::ArgIndex && k_.values[i].args[0] == r) row.memo[static_cast<int>(i)] = "idx" + R + "f";
    }
    o << ind << "if (threadIdx.x == 0) " << name_ << "_count[row] = 0u;\n";
  }

  void declareSplitBuffers(std::ostream& o, int64_t S, int64_t nred) {
    const int64_t rowsCount = k_.outer();
    o << "__device__ float " << name_ << "_part[" << rowsCount * S * nred << "];\n";
    if (anyArg()) o << "__device__ long long " << name_ << "_parti[" << rowsCount * S * nred << "];\n";
    for (const Pass& p : passes_)
      if (p.fold != Fold::None) o << "__device__ " << foldType(p.fold) << " " << foldPart(p) << "[" << rowsCount * S << "];\n";
    o << "__device__ unsigned int " << name_ << "_count[" << rowsCount << "];\n";
  }

  // A one-pass kernel over few rows: several blocks per row, combined by the row's last block.
  void splitRows(std::ostream& o) {
    const int64_t S = rowSplits();
    const int64_t nred = static_cast<int64_t>(reductions().size());
    declareSplitBuffers(o, S, nred);
    o << kernelHead();
    declareScratch(o);
    o << "  __shared__ bool last;\n";
    openSplitRow(o, S);
    Scope row;
    const std::string ind = "  ";
    std::vector<std::size_t> ps;
    for (std::size_t p = 0; p < passes_.size();) {
      const std::size_t end = sharedLoop(p);
      if (end - p > 1) accumulateTogether(o, row, p, end, splitChunk(), S * variant_.block, ind, 4);
      else accumulate(o, row, passes_[p], splitChunk(), S * variant_.block, ind);
      for (; p < end; ++p) {
        mergeBlock(o, passes_[p], ind);
        ps.push_back(p);
      }
    }
    combineSplits(o, row, ps, S, ind);
    hoistRowValues(o, row, finished(passes_.size()), ind);
    writeRowOutputs(o, row, "row", ind, "threadIdx.x == 0");
    o << "  }\n}\n";
    endRows();
  }

  // Few long rows whose reductions depend on each other (a norm's variance on its mean) or that
  // write a full-size output. One block per row left group norm's 128 rows on 128 blocks of 256
  // threads, 204 µs against eager's 176 (H100). Here each pass is a kernel of its own, S blocks
  // per row combined by the row's last block into a per-row result buffer, and a last kernel,
  // also S blocks per row, reads those results and writes the outputs.
  void stagedRows(std::ostream& o) {
    const int64_t S = rowSplits();
    const int64_t nred = static_cast<int64_t>(reductions().size());
    declareSplitBuffers(o, S, nred);
    o << "__device__ float " << name_ << "_red[" << k_.outer() * nred << "];\n";
    if (anyArg()) o << "__device__ long long " << name_ << "_redi[" << k_.outer() * nred << "];\n";
    const std::string ind = "  ";
    for (std::size_t p = 0; p < passes_.size(); ++p) {
      o << kernelHead("template <int VEC>\n", stageName(static_cast<int64_t>(p)));
      declareScratch(o);
      o << "  __shared__ bool last;\n";
      openSplitRow(o, S);
      Scope row;
      loadRowResults(o, finished(p), ind);
      hoistRowValues(o, row, finished(p), ind);
      accumulate(o, row, passes_[p], splitChunk(), S * variant_.block, ind);
      mergeBlock(o, passes_[p], ind);
      combineSplits(o, row, {p}, S, ind);
      for (int r : passes_[p].reds) {
        const std::string R = std::to_string(r), at = "[row * " + i64(nred) + " + " + std::to_string(position(r)) + "]";
        o << ind << "if (threadIdx.x == 0) " << name_ << "_red" << at << " = " << row.memo.at(r) << ";\n";
        if (isArg(k_.values[r].reduce))
          o << ind << "if (threadIdx.x == 0) " << name_ << "_redi" << at << " = idx" << R << "f;\n";
      }
      o << "  }\n}\n";
    }
    o << kernelHead("template <int VEC>\n", stageName(static_cast<int64_t>(passes_.size())));
    openSplitRow(o, S);
    Scope row;
    loadRowResults(o, finished(passes_.size()), ind);
    hoistRowValues(o, row, finished(passes_.size()), ind);
    writeRowOutputs(o, row, "row", ind, "split == 0 && threadIdx.x == 0");
    writeFullOutputs(o, row, splitChunk(), S * variant_.block, 4, ind);
    o << "  }\n}\n";
    endRows();
  }

  std::string stageName(int64_t j) const { return "_s" + std::to_string(j); }

  // red<r> (and idx<r>) of the reductions `done`, as earlier stages left them at row (or column) `rowIndex`.
  void loadRowResults(std::ostream& o, const std::set<int>& done, const std::string& ind, const std::string& rowIndex = "row") {
    const auto reds = reductions();
    const int64_t nred = static_cast<int64_t>(reds.size());
    for (int64_t j = 0; j < nred; ++j) {
      if (!done.count(reds[j])) continue;
      const std::string R = std::to_string(reds[j]), at = "[" + rowIndex + " * " + i64(nred) + " + " + std::to_string(j) + "]";
      o << ind << "const float red" << R << " = " << name_ << "_red" << at << ";\n";
      if (isArg(k_.values[reds[j]].reduce)) o << ind << "const long long idx" << R << " = " << name_ << "_redi" << at << ";\n";
    }
  }

  // Row groups a column kernel splits its reduced dim over: a power of two up to the block's warps,
  // no more than the reduced dim has elements. One thread per output left 16k threads walking
  // 1024 rows each for argmin over [64,1024,256] (23% of the copy floor as a bare kernel); 8 groups
  // reach 54%, eager's argmin 35% (bench/results/kernel_patterns_2026-11-23_h100.md).
  int columnGroups() const {
    int s = 1;
    while (s * 2 <= variant_.block / 32 && s * 2 <= k_.reduced()) s *= 2;
    return s;
  }

  // Columns a thread of a column kernel takes: J > 1 where the kernel is one plain reduction (no
  // fold, no full-size output) over columns enough that J-wide blocks still fill the GPU (about
  // eight blocks per SM on an H100's 132, 1024 blocks). A warp then reads J neighbouring 128-byte
  // segments of each row, J independent loads per step: sum over dim 1 of [128,4096,4095] reached
  // 81% of the copy floor with one column a thread and 106% with four, argmax 75% and 92%; with
  // few columns the grid shrinks J-fold ([16,4096,256]: 44% fell to 17%)
  // (bench/results/column_reductions_2026-11-27_h100.md). An arg-reduction keeps one column a
  // thread: in the whole job (level1/51, bench/results/kernelbench_2026-11-27e_h100) the four-column
  // form ran 0.59x of eager where one column a thread had run 0.81x, whatever the micro-benchmark said;
  // with ArgOp::step one column a thread reached 97% on an H200, four 35%
  // (bench/results/argmax_2026-11-29_h200).
  int columnsPerThread() const {
    if (passes_.size() != 1 || passes_[0].fold != Fold::None || !fullOutputs().empty()) return 1;
    for (int r : passes_[0].reds)
      if (isArg(k_.values[r].reduce)) return 1;
    const int64_t cols = k_.outer() * k_.inner();
    for (int J : {4, 2})
      if (cols / (32 * J) >= 1024) return J;
    return 1;
  }

  // The column kernel of one plain reduction with J = columnsPerThread() > 1 columns a thread:
  // thread tx of a block takes columns t0 + tx + 32 j (j < J), its row group every S-th row of
  // them; the groups' partials combine in group order as in columns().
  void wideColumns(std::ostream& o, int J) {
    const int64_t R = k_.reduced(), inner = k_.inner();
    const std::string cols = count(k_.outer() * inner), C = std::to_string(32 * J), Js = std::to_string(J);
    const int S = columnGroups();
    const int r = passes_[0].reds[0];
    const KernelValue& red = k_.values[r];
    const bool arg = isArg(red.reduce);
    const std::string Rs = std::to_string(r), op = reduceOp(red.reduce), acc = "acc" + Rs + "[j]", acci = "acci" + Rs + "[j]";
    o << "template <int VEC>\n__global__ void __launch_bounds__(" << 32 * S << ") " << name_ << "_kernel(" << params()
      << ") {\n"
      << "  __shared__ float cpart[" << S << "][" << C << "];\n";
    if (arg) o << "  __shared__ long long cparti[" << S << "][" << C << "];\n";
    o << "  const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;\n"
      << "  for (int64_t t0 = blockIdx.x * " << C << "LL; t0 < " << cols << "; t0 += gridDim.x * " << C << "LL) {\n"
      << "    // Columns past the end read the last column (in bounds) and write nothing.\n"
      << "    int64_t first[" << Js << "];\n"
      << "    float acc" << Rs << "[" << Js << "];\n";
    if (arg) o << "    long long acci" << Rs << "[" << Js << "];\n";
    o << "    #pragma unroll\n"
      << "    for (int j = 0; j < " << Js << "; ++j) {\n"
      << "      const int64_t t = min(t0 + tx + 32 * j, " << cols << " - 1);\n"
      << "      first[j] = t / " << i64(inner) << " * " << i64(R * inner) << " + t % " << i64(inner) << ";\n"
      << "      " << acc << " = " << reduceInit(red.reduce) << ";\n";
    if (arg) o << "      " << acci << " = 0x7fffffffffffffffLL;\n";
    o << "    }\n"
      << "    #pragma unroll " << 8 / J << "\n"
      << "    for (int64_t c = ty; c < " << i64(R) << "; c += " << S << ") {\n"
      << "      #pragma unroll\n"
      << "      for (int j = 0; j < " << Js << "; ++j) {\n"
      << "        const int64_t lin = first[j] + c * " << i64(inner) << ";\n";
    Scope element;
    const std::string v = value(red.args[0], element, o, "        ");
    if (arg) o << "        " << op << "::apply(" << acc << ", " << acci << ", " << v << ", c);\n";
    else o << "        " << acc << " = " << op << "::apply(" << acc << ", " << v << ");\n";
    o << "      }\n    }\n"
      << "    #pragma unroll\n"
      << "    for (int j = 0; j < " << Js << "; ++j) {\n"
      << "      cpart[ty][tx + 32 * j] = " << acc << ";\n";
    if (arg) o << "      cparti[ty][tx + 32 * j] = " << acci << ";\n";
    o << "    }\n    __syncthreads();\n"
      << "    if (ty == 0) {\n"
      << "      #pragma unroll\n"
      << "      for (int j = 0; j < " << Js << "; ++j) {\n"
      << "        const int64_t t = t0 + tx + 32 * j;\n"
      << "        float red" << Rs << " = cpart[0][tx + 32 * j];\n";
    if (arg)
      o << "        long long idx" << Rs << " = cparti[0][tx + 32 * j];\n"
        << "        for (int g = 1; g < " << S << "; ++g) " << op << "::apply(red" << Rs << ", idx" << Rs
        << ", cpart[g][tx + 32 * j], cparti[g][tx + 32 * j]);\n";
    else
      o << "        for (int g = 1; g < " << S << "; ++g) red" << Rs << " = " << op << "::apply(red" << Rs
        << ", cpart[g][tx + 32 * j]);\n";
    o << "        if (t < " << cols << ") {\n"
      << "          const int64_t lin = t / " << i64(inner) << " * " << i64(R * inner) << " + t % " << i64(inner)
      << "; (void)lin;\n";
    Scope row;
    hoistRowValues(o, row, finished(1), "          ");
    writeRowOutputs(o, row, "t", "          ", "");
    o << "        }\n      }\n    }\n"
      << "    __syncthreads();  // cpart is reused by the next column block\n  }\n}\n";
  }

  // A reduction over a dim with contiguous dims after it: several columns a thread, columns split
  // over blocks, or whole columns a block (wholeColumns).
  void columns(std::ostream& o) {
    if (const int J = columnsPerThread(); J > 1) return wideColumns(o, J);
    for (const auto& [i, stride] : reducedStrides())
      inputAt_[i] = "cb" + std::to_string(i) + stepped("c", stride);
    if (columnSplits() > 1) onePass() ? splitColumns(o) : stagedColumns(o);
    else wholeColumns(o);
    inputAt_.clear();
  }

  // A strided input's stride per element of the reduced range, where its strides flatten over it
  // (each reduced dim's stride the next one's times that one's size, size-1 dims aside; 0 where it
  // broadcasts along all of them): its offset at row c of column t is then the column's plus c
  // times it, its offset at element e of a row the row's plus e times it. Column and row kernels
  // compute the column's or row's once (columnOffsets, rowOffsets) instead of calling the offset
  // function per element: a bias read per element took a 64-bit division by the channel count,
  // and could not be hoisted out of the loop.
  std::map<int, int64_t> reducedStrides() const {
    std::map<int, int64_t> strides;
    for (std::size_t i = 0; i < k_.inputs.size(); ++i) {
      const KernelInput& input = k_.inputs[i];
      if (input.window || input.linear) continue;
      int64_t stride = 0, next = -1;
      bool flat = true;
      for (int d = k_.reduceEnd; d-- > k_.reduceBegin && flat;) {
        if (k_.shape[d] == 1) continue;
        if (next >= 0 && input.strides[d] != next) flat = false;
        if (next < 0) stride = input.strides[d];
        next = input.strides[d] * k_.shape[d];
      }
      if (flat) strides[static_cast<int>(i)] = stride;
    }
    return strides;
  }

  // The column offsets of the inputs reducedStrides() steps, where `first` is the column's first
  // element.
  void columnOffsets(std::ostream& o, const std::string& ind, const std::string& first = "lin") {
    for (const auto& entry : inputAt_) {
      const std::string i = std::to_string(entry.first);
      o << ind << "const int64_t cb" << i << " = " << name_ << "_off" << i << "(" << first << "); (void)cb" << i << ";\n";
    }
  }

  // Blocks of 32 neighbouring columns (coalesced) x `columnGroups()` row groups. Each group
  // reduces every S-th row of its columns; the partials meet in shared memory and every thread
  // combines them in group order, so the result does not depend on timing. Elementwise outputs
  // after the reductions are written by all groups, rows split the same way.
  void wholeColumns(std::ostream& o) {
    const int64_t R = k_.reduced(), inner = k_.inner();
    const std::string cols = count(k_.outer() * inner);
    const int S = columnGroups();
    o << "template <int VEC>\n__global__ void __launch_bounds__(" << 32 * S << ") " << name_ << "_kernel(" << params()
      << ") {\n";
    declareColumnScratch(o, S);
    o << "  const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;\n"
      << "  for (int64_t t0 = blockIdx.x * 32LL; t0 < " << cols << "; t0 += gridDim.x * 32LL) {\n"
      << "    const bool live = t0 + tx < " << cols << ";\n"
      << "    // Lanes past the end compute on the last column (their row values read in bounds) and write nothing.\n"
      << "    const int64_t t = live ? t0 + tx : " << cols << " - 1;\n"
      << "    const int64_t o = t / " << i64(inner) << ", i = t % " << i64(inner) << ";\n"
      << "    { const int64_t lin = o * " << i64(R * inner) << " + i; (void)lin;\n";
    Scope row;
    const std::string ind = "    ";
    columnOffsets(o, ind);
    cacheColumn(o, S, ind);
    for (std::size_t p = 0; p < passes_.size(); ++p) {
      columnPass(o, row, passes_[p], S, ind);
      hoistRowValues(o, row, finished(p + 1), ind);
    }
    columnOutputs(o, row, S, ind, "live && ty == 0");
    o << "    }\n  }\n}\n";
    cached_.clear();
  }

  // A column block's outputs: its row outputs written by the threads `who` names (the first row
  // group), its full-size outputs by every group.
  void columnOutputs(std::ostream& o, Scope& row, int S, const std::string& ind, const std::string& who) {
    o << ind << "if (" << who << ") {\n";
    Scope rowOutputs = row;  // what this block declares stays in it
    writeRowOutputs(o, rowOutputs, "t", ind + "  ", "");
    o << ind << "}\n";
    if (fullOutputs().empty()) return;
    if (const std::vector<std::size_t> across = outputsAcrossColumns(); !across.empty())
      return columnTiles(o, row, S, ind, across);
    columnLoop(o, row, S, ind, [&](Scope& s, const std::string& in2) { writeElement(o, s, in2); });
  }

  // Full-size float outputs a column kernel would scatter: contiguous along the reduced rows (stride
  // 1 along the innermost reduced dim of more than one element) but not along the columns, as a
  // channels-last instance or batch norm writes its NCHW result. Element by element, a warp's 32
  // columns land in 32 sectors (level2/17's channels-last candidate at 0.34x of torch.compile).
  std::vector<std::size_t> outputsAcrossColumns() const {
    int lane = -1, last = -1;
    for (int d = k_.reduceBegin; d < k_.reduceEnd; ++d)
      if (k_.shape[d] != 1) last = d;
    for (int d = k_.reduceEnd; d < static_cast<int>(k_.shape.size()); ++d)
      if (k_.shape[d] != 1) lane = d;
    std::vector<std::size_t> across;
    if (lane < 0 || last < 0) return across;
    for (std::size_t i = 0; i < k_.outputs.size(); ++i) {
      const KernelOutput& out = k_.outputs[i];
      if (!out.perRow && floatOutput(i) && out.strided() && out.shape == k_.shape && out.strides[last] == 1 &&
          out.strides[lane] != 1)
        across.push_back(i);
    }
    return across;
  }

  // The full-size outputs of a column block over tiles of 32 rows: each row group computes its
  // rows of the tile (neighbouring lanes on neighbouring columns, as the passes read), the outputs
  // in `across` into shared memory, the others stored at once; then each warp writes whole
  // columns of the tile, neighbouring lanes on neighbouring rows: 128 contiguous bytes. An
  // element's offset is its column's (once per column block) plus its row's (once per tile), both
  // from the output's offset function: Σ coordinate·stride splits over the two.
  void columnTiles(std::ostream& o, Scope& row, int S, const std::string& ind, const std::vector<std::size_t>& across) {
    const int64_t R = k_.reduced(), inner = k_.inner();
    const std::string cols = count(k_.outer() * inner), per = std::to_string(32 / S), Ss = std::to_string(S);
    const std::string begin = splitColumns_ ? "cBegin" : "(int64_t)0", end = splitColumns_ ? "cEnd" : i64(R);
    const std::set<std::size_t> tiled(across.begin(), across.end());
    o << ind << "// Columns of the tile this row group writes: ty, ty + " << Ss << ", ...\n";
    for (std::size_t i : across)
      o << ind << "__shared__ float tile" << i << "[32][33];\n"
        << ind << "int64_t colOff" << i << "[" << per << "];\n"
        << ind << "#pragma unroll\n"
        << ind << "for (int kk = 0; kk < " << per << "; ++kk) {\n"
        << ind << "  const int64_t u = min(t0 + ty + " << Ss << " * kk, " << cols << " - 1);\n"
        << ind << "  colOff" << i << "[kk] = " << outOffset(i) << "(u / " << i64(inner) << " * " << i64(R * inner)
        << " + u % " << i64(inner) << ");\n"
        << ind << "}\n";
    // A column held in registers (cacheColumn) is indexed by constants only where every loop unrolls.
    if (!cached_.empty()) o << ind << "#pragma unroll\n";
    o << ind << "for (int64_t c0 = " << begin << "; c0 < " << end << "; c0 += 32) {\n"
      << ind << "  #pragma unroll\n"
      << ind << "  for (int kk = 0; kk < " << per << "; ++kk) {\n"
      << ind << "    const int64_t c = c0 + ty + " << Ss << " * kk;\n"
      << ind << "    if (c < " << end << ") {\n";
    const std::string in3 = ind + "      ";
    o << in3 << "const int64_t lin = (o * " << i64(R) << " + c) * " << i64(inner) << " + i;\n";
    Scope s = row;
    if (!cached_.empty()) {
      s.cached = true;
      o << in3 << "const int k = (int)(c0 / " << Ss << ") + kk;\n";
    }
    for (std::size_t i = 0; i < k_.outputs.size(); ++i) {
      if (k_.outputs[i].perRow) continue;
      const std::string v = stored(k_.outputs[i].dtype, value(k_.outputs[i].value, s, o, in3));
      if (tiled.count(i)) o << in3 << "tile" << i << "[ty + " << Ss << " * kk][tx] = " << v << ";\n";
      else o << in3 << "if (live) " << outAt(i, "lin") << " = " << v << ";\n";
    }
    o << ind << "    }\n" << ind << "  }\n" << ind << "  __syncthreads();\n"
      << ind << "  if (c0 + tx < " << end << ") {\n";
    for (std::size_t i : across)
      o << ind << "    const int64_t rowOff" << i << " = " << outOffset(i) << "((c0 + tx) * " << i64(inner) << ")"
        << (k_.outputs[i].offset != 0 ? " - " + i64(k_.outputs[i].offset) : std::string()) << ";\n";
    o << ind << "    #pragma unroll\n"
      << ind << "    for (int kk = 0; kk < " << per << "; ++kk)\n"
      << ind << "      if (t0 + ty + " << Ss << " * kk < " << cols << ") {\n";
    for (std::size_t i : across)
      o << ind << "        " << outName(i) << "[colOff" << i << "[kk] + rowOff" << i << "] = tile" << i << "[tx][ty + " << Ss
        << " * kk];\n";
    o << ind << "      }\n" << ind << "  }\n" << ind << "  __syncthreads();  // the tiles are reused by the next rows\n"
      << ind << "}\n";
  }

  // Parts a column kernel splits its reduced dim into when its columns are too few to fill the GPU
  // (splitsColumns, CudaEmitter.h).
  int64_t columnSplits() const { return splitsColumns(k_); }

  // A column block's part as `blockIdx.x` gives it: its 32 columns from t0, its rows [cBegin,
  // cEnd), and the open scope of its column `t`, as columns() opens it.
  void openColumnPart(std::ostream& o, const std::string& stage, int S, int64_t P) {
    const int64_t R = k_.reduced(), inner = k_.inner(), cols = k_.outer() * inner, chunk = (R + P - 1) / P;
    o << "template <int VEC>\n__global__ void __launch_bounds__(" << 32 * S << ") " << name_ << stage << "_kernel("
      << params() << ") {\n";
    declareColumnScratch(o, S);
    o << "  __shared__ bool last;\n"
      << "  const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;\n"
      << "  const int64_t t0 = blockIdx.x / " << i64(P) << " * 32LL, part = blockIdx.x % " << i64(P) << ";\n"
      << "  const int64_t cBegin = part * " << i64(chunk) << ", cEnd = min(cBegin + " << i64(chunk) << ", " << i64(R)
      << ");\n"
      << "  const bool live = t0 + tx < " << i64(cols) << ";\n"
      << "  const int64_t t = live ? t0 + tx : " << i64(cols) << " - 1;\n"
      << "  const int64_t o = t / " << i64(inner) << ", i = t % " << i64(inner) << ";\n"
      << "  { const int64_t lin = o * " << i64(R * inner) << " + i; (void)lin;\n";
    columnOffsets(o, "  ");
  }

  std::string columnPart(const Pass& p) const { return name_ + "_cpart" + std::to_string(p.reds[0]); }

  // Buffers of a split column kernel: each pass's partial per column and part (floats, indices, a
  // fold's states), a count of the parts arrived per column block, and with `results` each
  // reduction's value per column for the stages after it.
  void declareColumnParts(std::ostream& o, int64_t P, bool results) {
    const int64_t cols = k_.outer() * k_.inner(), nred = static_cast<int64_t>(reductions().size());
    o << "__device__ float " << name_ << "_part[" << cols * P * nred << "];\n";
    if (anyArg()) o << "__device__ long long " << name_ << "_parti[" << cols * P * nred << "];\n";
    for (const Pass& p : passes_)
      if (p.fold != Fold::None) o << "__device__ " << foldType(p.fold) << " " << columnPart(p) << "[" << cols * P << "];\n";
    o << "__device__ unsigned int " << name_ << "_count[" << (cols + 31) / 32 << "];\n";
    if (!results) return;
    o << "__device__ float " << name_ << "_red[" << cols * nred << "];\n";
    if (anyArg()) o << "__device__ long long " << name_ << "_redi[" << cols * nred << "];\n";
  }

  // Row group 0 stores this block's result of each pass in `ps` as part `part` of its columns. The
  // column block's last block to arrive (an atomic count, reset for the next launch) combines the
  // P parts of each column: row group g takes parts g, g + S, ... in order, and the groups meet in
  // group order, so the result does not depend on timing; into red<r>f (and idx<r>f) or a fold's
  // state, recorded in `row`.
  void combineColumnParts(std::ostream& o, Scope& row, const std::vector<std::size_t>& ps, int S, int64_t P,
                          const std::string& ind) {
    const int64_t nred = static_cast<int64_t>(reductions().size());
    const std::string Ps = i64(P);
    auto slot = [&](int r, const std::string& q) {
      return "(t * " + Ps + " + " + q + ") * " + i64(nred) + " + " + std::to_string(position(r));
    };
    for (std::size_t p : ps) {
      const Pass& pass = passes_[p];
      if (pass.fold != Fold::None) {
        o << ind << "if (live && ty == 0) " << columnPart(pass) << "[t * " << Ps << " + part] = " << foldState(pass) << ";\n";
        continue;
      }
      const int r = pass.reds[0];
      o << ind << "if (live && ty == 0) " << name_ << "_part[" << slot(r, "part") << "] = red" << r << ";\n";
      if (isArg(k_.values[r].reduce)) o << ind << "if (live && ty == 0) " << name_ << "_parti[" << slot(r, "part") << "] = idx" << r << ";\n";
    }
    o << ind << "__threadfence();\n"
      << ind << "__syncthreads();\n"
      << ind << "if (threadIdx.x == 0) last = atomicAdd(&" << name_ << "_count[blockIdx.x / " << Ps << "], 1u) == "
      << P - 1 << "u;\n"
      << ind << "__syncthreads();\n"
      << ind << "if (!last) return;\n"
      << ind << "__threadfence();\n";
    for (std::size_t p : ps) {
      const Pass& pass = passes_[p];
      const std::string P0 = "p" + std::to_string(pass.reds[0]);
      if (pass.fold != Fold::None) {
        const std::string T = foldType(pass.fold), part = "c" + foldState(pass);
        o << ind << T << " " << P0 << " = " << T << "::identity();\n"
          << ind << "for (int64_t q = ty; q < " << Ps << "; q += " << S << ") " << P0 << " = " << T << "::merge(" << P0
          << ", " << T << "::load(&" << columnPart(pass) << "[t * " << Ps << " + q]));\n"
          << ind << part << "[ty][tx] = " << P0 << ";\n"
          << ind << "__syncthreads();\n"
          << ind << P0 << " = " << part << "[0][tx];\n"
          << ind << "for (int g = 1; g < " << S << "; ++g) " << P0 << " = " << T << "::merge(" << P0 << ", " << part
          << "[g][tx]);\n";
        bindFold(row, pass, P0);
        continue;
      }
      const int r = pass.reds[0];
      const KernelValue& red = k_.values[r];
      const bool arg = isArg(red.reduce);
      const std::string R = std::to_string(r);
      o << ind << "float " << P0 << " = " << reduceInit(red.reduce) << ";\n";
      if (arg) o << ind << "long long " << P0 << "i = 0x7fffffffffffffffLL;\n";
      o << ind << "for (int64_t q = ty; q < " << Ps << "; q += " << S << ") ";
      if (arg)
        o << reduceOp(red.reduce) << "::apply(" << P0 << ", " << P0 << "i, __ldcg(&" << name_ << "_part[" << slot(r, "q")
          << "]), __ldcg(&" << name_ << "_parti[" << slot(r, "q") << "]));\n";
      else
        o << P0 << " = " << reduceOp(red.reduce) << "::apply(" << P0 << ", __ldcg(&" << name_ << "_part[" << slot(r, "q")
          << "]));\n";
      groupCombine(o, red.reduce, P0, arg ? P0 + "i" : "", S, ind);
      o << ind << "const float red" << R << "f = " << P0 << ";\n";
      if (arg) o << ind << "const long long idx" << R << "f = " << P0 << "i;\n";
      row.memo[r] = "red" + R + "f";
      for (std::size_t i = 0; i < k_.values.size(); ++i)
        if (k_.values[i].op == ValueOp::ArgIndex && k_.values[i].args[0] == r) row.memo[static_cast<int>(i)] = "idx" + R + "f";
    }
    o << ind << "if (threadIdx.x == 0) " << name_ << "_count[blockIdx.x / " << Ps << "] = 0u;\n";
  }

  // A one-pass column reduction over columns too few to fill the GPU: each column block's rows in
  // P parts, a block each, combined by the column block's last block. Training BatchNorm1d over
  // [204800, 48] left 48 columns on two blocks (NetVLAD at 0.21x of eager); a sum over dim 1 of
  // [16,4096,256] split so went from 44% to 55% of the copy floor, argmax from 10% to 32%
  // (bench/results/column_reductions_2026-11-27_h100.md).
  void splitColumns(std::ostream& o) {
    const int64_t P = columnSplits();
    const int S = columnGroups();
    declareColumnParts(o, P, false);
    openColumnPart(o, "", S, P);
    splitColumns_ = true;
    Scope row;
    const std::string ind = "  ";
    std::vector<std::size_t> ps;
    for (std::size_t p = 0; p < passes_.size(); ++p) {
      columnPass(o, row, passes_[p], S, ind);
      ps.push_back(p);
    }
    combineColumnParts(o, row, ps, S, P, ind);
    hoistRowValues(o, row, finished(passes_.size()), ind);
    o << ind << "if (live && ty == 0) {\n";
    writeRowOutputs(o, row, "t", ind + "  ", "");
    o << ind << "}\n  }\n}\n";
    splitColumns_ = false;
  }

  // Few columns whose reductions depend on each other (a norm's variance on its mean) or that
  // write a full-size output: as stagedRows for rows, each pass a kernel of its own, split as
  // splitColumns, whose last blocks leave each column's results in a buffer; a last kernel, split
  // the same way, reads them and writes the outputs.
  void stagedColumns(std::ostream& o) {
    const int64_t P = columnSplits(), nred = static_cast<int64_t>(reductions().size());
    const int S = columnGroups();
    declareColumnParts(o, P, true);
    splitColumns_ = true;
    const std::string ind = "  ";
    for (std::size_t p = 0; p < passes_.size(); ++p) {
      openColumnPart(o, stageName(static_cast<int64_t>(p)), S, P);
      Scope row;
      loadRowResults(o, finished(p), ind, "t");
      hoistRowValues(o, row, finished(p), ind);
      columnPass(o, row, passes_[p], S, ind);
      combineColumnParts(o, row, {p}, S, P, ind);
      for (int r : passes_[p].reds) {
        const std::string at = "[t * " + i64(nred) + " + " + std::to_string(position(r)) + "]";
        o << ind << "if (live && ty == 0) " << name_ << "_red" << at << " = " << row.memo.at(r) << ";\n";
        if (isArg(k_.values[r].reduce))
          o << ind << "if (live && ty == 0) " << name_ << "_redi" << at << " = idx" << r << "f;\n";
      }
      o << "  }\n}\n";
    }
    openColumnPart(o, stageName(static_cast<int64_t>(passes_.size())), S, P);
    Scope row;
    loadRowResults(o, finished(passes_.size()), ind, "t");
    hoistRowValues(o, row, finished(passes_.size()), ind);
    columnOutputs(o, row, S, ind, "live && ty == 0 && part == 0");
    o << "  }\n}\n";
    splitColumns_ = false;
  }

  // The shared memory where a column kernel's row groups meet: a float (and index) per group and
  // column, and each fold's states.
  void declareColumnScratch(std::ostream& o, int S) {
    o << "  __shared__ float cpart[" << S << "][32];\n";
    if (anyArg()) o << "  __shared__ long long cparti[" << S << "][32];\n";
    for (const Pass& p : passes_)
      if (p.fold != Fold::None) o << "  __shared__ " << foldType(p.fold) << " c" << foldState(p) << "[" << S << "][32];\n";
  }

  // Pass `p` of a column kernel: each row group accumulates its rows, then the groups' partials
  // meet in shared memory, combined in group order into red<r> (and idx<r>), or a fold's state.
  void columnPass(std::ostream& o, Scope& row, const Pass& p, int S, const std::string& ind) {
    if (p.fold != Fold::None) return foldColumns(o, row, p, S, ind);
    const int r = p.reds[0];
    const KernelValue& red = k_.values[r];
    const bool arg = isArg(red.reduce);
    const std::string Rs = std::to_string(r), op = reduceOp(red.reduce);
    o << ind << "float acc" << Rs << " = " << reduceInit(red.reduce) << ";\n";
    // A row group scans its rows in order from its first: ArgOp::step needs no index comparison.
    if (arg) o << ind << "long long acci" << Rs << " = " << columnFirstRow() << ";\n";
    columnLoop(o, row, S, ind, [&](Scope& s, const std::string& in2) {
      std::string v = value(red.args[0], s, o, in2);
      if (arg) o << in2 << op << "::step(acc" << Rs << ", acci" << Rs << ", " << v << ", c);\n";
      else o << in2 << "acc" << Rs << " = " << op << "::apply(acc" << Rs << ", " << v << ");\n";
    });
    groupCombine(o, red.reduce, "acc" + Rs, arg ? "acci" + Rs : "", S, ind);
    o << ind << "const float red" << Rs << " = acc" << Rs << ";\n";
    if (arg) o << ind << "const long long idx" << Rs << " = acci" << Rs << ";\n";
  }

  // Each row group's `acc` (and with `acci` its index) through shared memory, combined by every
  // thread in group order: the result does not depend on timing.
  void groupCombine(std::ostream& o, ReduceKind kind, const std::string& acc, const std::string& acci, int S,
                    const std::string& ind) {
    const std::string op = reduceOp(kind), Ss = std::to_string(S);
    o << ind << "cpart[ty][tx] = " << acc << ";\n";
    if (!acci.empty()) o << ind << "cparti[ty][tx] = " << acci << ";\n";
    o << ind << "__syncthreads();\n" << ind << acc << " = cpart[0][tx];\n";
    if (!acci.empty())
      o << ind << acci << " = cparti[0][tx];\n"
        << ind << "for (int g = 1; g < " << Ss << "; ++g) " << op << "::apply(" << acc << ", " << acci
        << ", cpart[g][tx], cparti[g][tx]);\n";
    else
      o << ind << "for (int g = 1; g < " << Ss << "; ++g) " << acc << " = " << op << "::apply(" << acc << ", cpart[g][tx]);\n";
    o << ind << "__syncthreads();  // cpart is reused by the next reduction or column block\n";
  }

  // The loop of a column kernel's row group over its rows `ty, ty + S, ...` of the column; `body`
  // emits what one element (at `lin`, row `c`) does, in the scope it is given. Unrolled eight
  // times: a warp's load is 128 bytes (a float per column), and at nvcc's own unroll of four an
  // SM's 64 warps keep 32 KB in flight, less than HBM3's latency takes to stream at full rate
  // (a mean over one dim ran at 0.80x of torch.compile, issue 32). A column held in
  // registers (cacheColumn) loops over the thread's elements there, unrolled whole.
  void columnLoop(std::ostream& o, const Scope& row, int S, const std::string& ind,
                  const std::function<void(Scope&, const std::string&)>& body) {
    const int64_t R = k_.reduced(), inner = k_.inner();
    Scope s = row;
    std::string in2 = ind + "  ";
    if (cached_.empty()) {
      const std::string end = splitColumns_ ? "cEnd" : i64(R);
      o << ind << "#pragma unroll 8\n"
        << ind << "for (int64_t c = live ? " << columnFirstRow() << " : " << end << "; c < " << end << "; c += " << S
        << ") {\n";
    } else {
      s.cached = true;
      in2 += "  ";
      o << ind << "#pragma unroll\n"
        << ind << "for (int k = 0; k < kCached; ++k) {\n"
        << ind << "  const int64_t c = ty + (int64_t)k * " << S << ";\n"
        << ind << "  if (live && c < " << i64(R) << ") {\n";
    }
    o << in2 << "const int64_t lin = (o * " << i64(R) << " + c) * " << i64(inner) << " + i;\n";
    if (!cached_.empty()) o << in2 << "(void)lin;\n";
    body(s, in2);
    if (!cached_.empty()) o << ind << "  }\n";
    o << ind << "}\n";
  }

  // The first row of a column kernel's row group `ty`: a split column kernel (splitColumns) walks
  // only its part's rows [cBegin, cEnd).
  std::string columnFirstRow() const { return splitColumns_ ? "cBegin + ty" : "ty"; }

  // A column read more than once (several passes, or a pass and the write) whose share per thread
  // is short (RMS norm or softmax over 64 channels: 8 elements a thread) is held in registers,
  // as cacheRow holds a row: read once, as its floor.
  void cacheColumn(std::ostream& o, int S, const std::string& ind) {
    if (passes_.size() + (fullOutputs().empty() ? 0 : 1) < 2) return;
    std::set<int> inputs, seen;
    for (const Pass& p : passes_) collectInputs(p.fold != Fold::None ? p.input : k_.values[p.reds[0]].args[0], inputs, seen);
    for (int v : fullOutputs()) collectInputs(v, inputs, seen);
    std::set<int> cache;
    for (int i : inputs) {
      const KernelInput& input = k_.inputs[i];
      bool varies = false;
      for (int d = k_.reduceBegin; d < k_.reduceEnd; ++d) varies = varies || input.strides[d] != 0;
      if (floatInput(i) && !input.window && varies) cache.insert(i);
    }
    const int64_t R = k_.reduced(), each = (R + S - 1) / S;
    if (cache.empty() || each * static_cast<int64_t>(cache.size()) > cacheFloats(32 * S)) return;
    cached_ = cache;
    o << ind << "constexpr int kCached = " << each << ";\n";
    for (int i : cache) o << ind << "float C" << i << "[kCached];\n";
    o << ind << "#pragma unroll\n"
      << ind << "for (int k = 0; k < kCached; ++k) {\n"
      << ind << "  const int64_t c = ty + (int64_t)k * " << S << ";\n"
      << ind << "  if (live && c < " << i64(R) << ") {\n"
      << ind << "    const int64_t lin = (o * " << i64(R) << " + c) * " << i64(k_.inner()) << " + i;\n";
    for (int i : cache) o << ind << "    C" << i << "[k] = " << load(i) << ";\n";
    o << ind << "  }\n" << ind << "}\n";
  }

  // A fold pass of the column kernel: each row group merges its rows' elements one by one, then
  // the groups' states meet in shared memory, merged in group order.
  void foldColumns(std::ostream& o, Scope& row, const Pass& p, int S, const std::string& ind) {
    const std::string T = foldType(p.fold), st = foldState(p), part = "c" + st;
    o << ind << T << " " << st << " = " << T << "::identity();\n";
    columnLoop(o, row, S, ind, [&](Scope& s, const std::string& in2) {
      const std::string v = value(p.input, s, o, in2);
      o << in2 << st << ".push(" << v << ");\n";
    });
    o << ind << part << "[ty][tx] = " << st << ";\n"
      << ind << "__syncthreads();\n"
      << ind << st << " = " << part << "[0][tx];\n"
      << ind << "for (int g = 1; g < " << S << "; ++g) " << st << " = " << T << "::merge(" << st << ", " << part << "[g][tx]);\n"
      << ind << "__syncthreads();  // " << part << " is reused by the next column block\n";
    bindFold(row, p, st);
  }

  int scanValue() const {
    for (std::size_t i = 0; i < k_.values.size(); ++i)
      if (k_.values[i].op == ValueOp::Scan) return static_cast<int>(i);
    return -1;
  }

  std::string scanOp() const {
    return k_.values[scanValue()].reduce == ReduceKind::Prod ? "ScanProd" : "ScanSum";
  }

  // A scan along the contiguous last dim: one block per row, tiles of kThreads × kItems
  // consecutive elements. A tile is staged through shared memory, so that its loads and its stores
  // are coalesced (a warp's 32 neighbouring elements per access) while each thread scans kItems
  // consecutive ones; the block scans the thread totals, and a carry joins the tiles. Read straight
  // from memory, a thread's consecutive items made each warp access touch kItems lines, and larger
  // tiles ran slower, not faster (bench/results/ceilings_2026-11-29_h200). kItems is 4 per item of
  // the variant (Variant::items), the refine search's knob here: a long row's tiles are steps in
  // series, each ending in a block-wide scan. The stage holds doubles, the scan's precision, with a
  // padding double after every 16 so that a thread's consecutive items fall in distinct banks.
  void rowScan(std::ostream& o) {
    const std::string rowsCount = count(k_.outer());
    const std::string R = i64(k_.reduced());
    const int sv = scanValue();
    const std::string op = scanOp(), S = std::to_string(sv);
    o << kernelHead() << "  constexpr int kThreads = " << variant_.block << ", kItems = " << 4 * variant_.items
      << ";\n  __shared__ double stage[kThreads * kItems + kThreads * kItems / 16];\n"
      << "  __shared__ double sscratch[33];\n"
      << "  for (int64_t row = blockIdx.x; row < " << rowsCount << "; row += gridDim.x) {\n"
      << "    const int64_t rowBase = row * " << R << ";\n";
    rowOffsets(o, "    ");  // a strided row's offsets once per row, not an offset function per element
    o << "    double carry = " << op << "::identity();\n"
      << "    for (int64_t t0 = 0; t0 < " << R << "; t0 += kThreads * kItems) {\n"
      << "      #pragma unroll\n      for (int l = 0; l < kItems; ++l) {\n"
      << "        const int p = l * kThreads + threadIdx.x;\n"
      << "        if (t0 + p < " << R << ") {\n          const int64_t lin = rowBase + t0 + p;\n";
    Scope s;
    const std::string v = value(k_.values[sv].args[0], s, o, "          ");
    o << "          stage[p + p / 16] = (double)" << v << ";\n        }\n      }\n"
      << "      __syncthreads();\n"
      << "      const int first = threadIdx.x * kItems;\n"
      << "      double loc[kItems];\n      double run = " << op << "::identity();\n"
      << "      #pragma unroll\n      for (int l = 0; l < kItems; ++l) {\n"
      << "        const int p = first + l;\n"
      << "        if (t0 + p < " << R << ") run = " << op << "::apply(run, stage[p + p / 16]);\n"
      << "        loc[l] = run;\n      }\n"
      << "      double total;\n"
      << "      const double below = blockExclusiveScan<" << op << ">(run, sscratch, total);\n"
      << "      #pragma unroll\n      for (int l = 0; l < kItems; ++l) {\n"
      << "        const int p = first + l;\n"
      << "        stage[p + p / 16] = " << op << "::apply(" << op << "::apply(carry, below), loc[l]);\n      }\n"
      << "      __syncthreads();\n"
      << "      #pragma unroll\n      for (int l = 0; l < kItems; ++l) {\n"
      << "        const int p = l * kThreads + threadIdx.x;\n"
      << "        if (t0 + p < " << R << ") {\n          const int64_t lin = rowBase + t0 + p;\n"
      << "          const float scan" << S << " = (float)stage[p + p / 16];\n";
    Scope out;
    out.memo[sv] = "scan" + S;
    writeElement(o, out, "          ");
    o << "        }\n      }\n      carry = " << op << "::apply(carry, total);\n"
      << "      __syncthreads();  // the next tile's loads overwrite the stage\n    }\n  }\n}\n";
    endRows();
  }

  // A scan along a dim with contiguous dims after it: one thread per (outer, inner) position
  // walks the scanned dim; neighbouring threads read neighbouring elements. A strided input is
  // read at its column's offset (computed once, columnOffsets) plus the row times its stride.
  void columnScan(std::ostream& o) {
    const int64_t R = k_.reduced(), inner = k_.inner();
    const int sv = scanValue();
    const std::string op = scanOp(), S = std::to_string(sv);
    for (const auto& [i, stride] : reducedStrides()) inputAt_[i] = "cb" + std::to_string(i) + stepped("c", stride);
    o << kernelHead() << "  for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < " << count(k_.outer() * inner)
      << "; t += (int64_t)gridDim.x * blockDim.x) {\n"
      << "    const int64_t o = t / " << i64(inner) << ", i = t % " << i64(inner) << ";\n";
    if (!inputAt_.empty()) {
      o << "    const int64_t column = o * " << i64(R * inner) << " + i;\n";
      columnOffsets(o, "    ", "column");
    }
    o << "    double acc = " << op << "::identity();\n"
      << "    for (int64_t c = 0; c < " << i64(R) << "; ++c) {\n"
      << "      const int64_t lin = (o * " << i64(R) << " + c) * " << i64(inner) << " + i;\n";
    Scope s;
    const std::string v = value(k_.values[sv].args[0], s, o, "      ");
    o << "      acc = " << op << "::apply(acc, (double)" << v << ");\n"
      << "      const float scan" << S << " = (float)acc;\n";
    s.memo[sv] = "scan" + S;
    writeElement(o, s, "      ");
    o << "    }\n  }\n}\n";
    inputAt_.clear();
  }

  void launcher(std::ostream& o) {
    o << "static int launch_" << name_ << "(const StitchTensor* t, int64_t rows, cudaStream_t stream) {\n";
    if (!runtimeRows()) o << "  (void)rows;\n";
    std::string args, aligned = "true";
    for (std::size_t i = 0; i < k_.inputs.size(); ++i) {
      const char* type = ctype(k_.inputs[i].dtype);
      o << "  const " << type << "* " << in(static_cast<int>(i)) << " = (const " << type << "*)t["
        << slots_.at(k_.inputs[i].tensorId) << "].data;\n";
      args += in(static_cast<int>(i)) + ", ";
      if (k_.inputs[i].linear && floatInput(static_cast<int>(i)))
        aligned += " && ((uintptr_t)" + in(static_cast<int>(i)) + " % 16 == 0)";
    }
    for (std::size_t i = 0; i < k_.outputs.size(); ++i) {
      const char* type = ctype(k_.outputs[i].dtype);
      o << "  " << type << "* " << outName(i) << " = (" << type << "*)t[" << slots_.at(k_.outputs[i].tensorId)
        << "].data;\n";
      args += outName(i) + ", ";
      if (!k_.outputs[i].perRow && k_.outputs[i].vectorStores())
        aligned += " && ((uintptr_t)" + outName(i) + " % 16 == 0)";
    }
    if (runtimeRows()) args += "rows, ";
    args = args.substr(0, args.size() - 2);
    int block = variant_.block;
    bool canVector = variant_.vec == 4;
    std::vector<std::string> stages{""};  // kernels launched in order, one grid and block for all
    // Each grid: `work` items at `per` a block, at least one block and at most `most`; a number
    // where the shape is fixed, else computed by the launcher from the call's rows.
    struct Grid {
      std::string work;
      int64_t fixedWork = 0, per = 1, most = (int64_t{1} << 31) - 1;
    };
    std::optional<Grid> grid4;
    Grid grid1;
    auto fixedOrCount = [&](int64_t n) { return Grid{count(n), n}; };
    if (tile_) {
      canVector = false;  // a tile's element per thread
      block = kTileThreads;
      const auto [tilesA, tilesB, rest] = tileCounts();
      grid1 = Grid{"(" + count(rest) + " * " + i64(tilesA * tilesB) + ")", rest * tilesA * tilesB, 1, 1 << 30};
    } else if (k_.scans()) {
      canVector = false;  // scans read one element at a time, in order
      if (k_.inner() == 1) grid1 = fixedOrCount(k_.outer()), grid1.most = 1 << 30;
      else grid1 = fixedOrCount(k_.outer() * k_.inner()), grid1.per = block;
    } else if (!k_.reduces()) {
      const int64_t per = static_cast<int64_t>(block) * variant_.items;
      grid1 = fixedOrCount(k_.numel());
      grid1.per = per;
      grid4 = Grid{grid1.work + " / 4", k_.numel() / 4, per};
    } else if (k_.inner() == 1) {
      canVector = canVector && (k_.reduced() % 4 == 0 || rowSplits() == 1);  // rows() takes ragged rows
      const int64_t S = rowSplits();
      if (S > 1) {
        grid1 = Grid{i64(k_.outer() * S), k_.outer() * S};
      } else {
        grid1 = fixedOrCount(k_.outer());
        grid1.per = warpPerRow(k_, onePass()) ? block / lanesPerRow(k_) : 1;
        grid1.most = 1 << 30;
      }
      grid4 = grid1;
      if (S > 1 && !onePass()) {
        stages.clear();
        for (std::size_t j = 0; j <= passes_.size(); ++j) stages.push_back(stageName(static_cast<int64_t>(j)));
      }
    } else if (const int64_t P = columnSplits(); P > 1) {
      canVector = false;
      block = 32 * columnGroups();
      grid1 = Grid{"", (k_.outer() * k_.inner() + 31) / 32 * P};
      if (!onePass()) {
        stages.clear();
        for (std::size_t j = 0; j <= passes_.size(); ++j) stages.push_back(stageName(static_cast<int64_t>(j)));
      }
    } else {
      canVector = false;  // a column reduction walks the reduced dim one element at a time
      block = 32 * columnGroups();
      grid1 = fixedOrCount(k_.outer() * k_.inner());
      grid1.per = 32 * columnsPerThread();
      grid1.most = 1 << 30;
    }
    auto gridText = [&](const Grid& g, const std::string& local) {
      if (!runtimeRows())
        return std::to_string(std::clamp<int64_t>((g.fixedWork + g.per - 1) / g.per, 1, g.most));
      o << "  const unsigned int " << local << " = sc_blocks(" << g.work << ", " << g.per << ", " << g.most << ");\n";
      return local;
    };
    const std::string g1 = gridText(grid1, "grid1");
    const std::string g4 = canVector ? gridText(*grid4, "grid4") : "";
    auto launches = [&](int vec, const std::string& grid, const std::string& indent) {
      std::string calls;
      for (const auto& stage : stages)
        calls += indent + name_ + stage + "_kernel<" + std::to_string(vec) + "><<<" + grid + ", " + std::to_string(block) +
                 ", 0, stream>>>(" + args + ");\n";
      return calls;
    };
    if (canVector)
      o << "  if (" << aligned << ") {\n" << launches(4, g4, "    ") << "  } else {\n" << launches(1, g1, "    ") << "  }\n";
    else
      o << launches(1, g1, "  ");
    o << "  return (int)cudaGetLastError();\n}\n";
  }

  const FusedKernel& k_;
  std::string name_;
  Variant variant_;
  const std::map<std::string, int>& slots_;
  std::vector<Pass> passes_;
  std::optional<TiledTranspose> tile_;  // a flat kernel reading some input across its order
  int segment_ = 32;                     // lanes per row while rows() emits a warp-per-row kernel
  std::map<std::size_t, int64_t> rowOutputStrides_;  // while a row kernel emits: outputs at ob<i> (rowOffsets)
  std::set<int> cached_;  // inputs a row kernel holds in registers (rows())
  bool ragged_ = false;   // rows(): 16-byte chunks do not divide the row
  bool splitColumns_ = false;  // columnLoop(): the reduced dim is split over blocks (splitColumns)
  // While columns(), tiled() or a row kernel emits: the index an input is read at (its column's,
  // tile's or row's offset, stepped by its strides), in place of its offset function of `lin`.
  std::map<int, std::string> inputAt_;
  std::map<std::size_t, std::string> outputAt_;  // tiled(): the same for strided outputs
};

}  // namespace

// Short rows combine by shuffles alone. A block per row spent more on its barriers than on the
// row: argmax over [16384,1024] took 42 µs against eager's 30 (H100).
bool foldsReductions(const FusedKernel& kernel) {
  const std::map<std::string, int> noSlots;
  return Emitter(kernel, "", Variant{}, noSlots).folds();
}

EmittedKernel emitKernel(const FusedKernel& kernel, const std::string& name, const Variant& variant,
                         const std::map<std::string, int>& slots) {
  return Emitter(kernel, name, variant, slots).run();
}

}  // namespace stitch::agents::builtin
