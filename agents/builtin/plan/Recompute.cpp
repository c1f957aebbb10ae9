#include "agents/builtin/plan/Recompute.h"

#include "agents/builtin/kernel/NodeArgs.h"
#include "agents/builtin/lower/KernelBuilder.h"
#include "agents/builtin/lower/LibraryCall.h"
#include "agents/builtin/ops/OpClass.h"
#include "agents/builtin/ops/OpDef.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace stitch::agents::builtin {
namespace {

// More operators than this and a reader recomputing them could turn compute-bound.
constexpr int kMaxOps = 12;
// Each reader's kernel computes the producer once more.
constexpr int kMaxReaders = 4;

// Whether a kernel function's CUDA calls a math function (expf, tanhf, a prelude activation)
// rather than only adding, multiplying, comparing or taking a min, max or magnitude. Such a
// producer is compute-bound on its own: level2/52's tanh(softplus(x)) * x took 342 µs over 520 MB
// on an H200 (where 1 GB moves in about 230 µs), and computed again in the statistics' and the
// normalization's kernels it cost them 250 and 300 µs more, 1421 -> 1633 µs for the forward.
bool callsMath(const KernelValue& v) {
  const ops::KernelFn* fn = ops::findFn(v.fn);
  if (!fn) return true;
  const std::string cuda = fn->cuda(ops::Operands{{"a", "b", "c"}, v.params});
  static const std::set<std::string> cheap = {"sc_max", "sc_min", "fmaxf", "fminf", "fabsf", "floorf", "ceilf", "truncf"};
  for (std::size_t i = 0; i < cuda.size(); ++i) {
    if (!std::isalpha(static_cast<unsigned char>(cuda[i])) && cuda[i] != '_') continue;
    std::size_t j = i;
    while (j < cuda.size() && (std::isalnum(static_cast<unsigned char>(cuda[j])) || cuda[j] == '_')) ++j;
    if (j < cuda.size() && cuda[j] == '(' && !cheap.count(cuda.substr(i, j - i))) return true;
    i = j;
  }
  return false;
}

bool mapsElements(const FusedKernel& k) {
  if (k.reduceBegin >= 0) return false;
  return std::all_of(k.values.begin(), k.values.end(), [](const KernelValue& v) {
    return v.op == ValueOp::Input || v.op == ValueOp::Constant || v.op == ValueOp::Unary ||
           v.op == ValueOp::Binary || v.op == ValueOp::Select;
  });
}

// A node whose generated kernel can take the producer's nodes as its prologue.
bool generatedReader(const Graph& g, const Node& n) {
  const OpClass c = classifyOp(n.op);
  return n.kind != "view" && (c == OpClass::Elementwise || c == OpClass::Reduction) && !isLibraryOp(n.op) &&
         !ops::isPooling(n.op) && !generatesConvolution(g, n);
}

}  // namespace

bool recomputable(const Graph& graph, const FusedKernel& kernel, const std::vector<int>& nodeIds) {
  if (!mapsElements(kernel) || kernel.outputs.empty()) return false;
  for (const KernelValue& v : kernel.values)
    if ((v.op == ValueOp::Unary || v.op == ValueOp::Binary) && callsMath(v)) return false;
  int ops = 0;
  for (int id : nodeIds) {
    const Node& n = *graph.node(id);
    if (writeBackTarget(graph, n)) return false;
    ops += n.kind != "view";
  }
  if (ops > kMaxOps) return false;

  std::set<std::string> read;
  int64_t readBytes = 0, writtenBytes = 0;
  for (const KernelInput& in : kernel.inputs)
    if (read.insert(in.tensorId).second) readBytes += graph.tensor(in.tensorId)->bytes();
  for (const Node& n : graph.nodes)
    if (const std::string* target = writeBackTarget(graph, n))
      for (const std::string& r : read)
        if (graph.reaches(r, *target) || graph.reaches(*target, r)) return false;

  const std::set<int> inside(nodeIds.begin(), nodeIds.end());
  for (const KernelOutput& out : kernel.outputs) {
    if (out.perRow) return false;
    const TensorInfo* t = graph.tensor(out.tensorId);
    if (!t || t->role != "intermediate") return false;
    writtenBytes += t->bytes();
    for (const std::string& o : graph.outputs)
      if (graph.reaches(o, out.tensorId)) return false;
    int readers = 0;
    for (const Node& n : graph.nodes) {
      if (inside.count(n.id)) continue;
      bool direct = false, throughView = false;
      for (const Argument& a : n.inputs)
        for (const std::string& id : a.tensorIds()) {
          direct = direct || id == out.tensorId;
          throughView = throughView || (id != out.tensorId && !id.empty() && graph.reaches(id, out.tensorId));
        }
      if (throughView || (direct && !generatedReader(graph, n))) return false;
      readers += direct;
    }
    if (readers == 0 || readers > kMaxReaders) return false;
  }
  // Per-channel parameters a broadcast reads (a bias) stay in cache: a sixteenth of slack.
  return readBytes <= writtenBytes + writtenBytes / 16;
}

}  // namespace stitch::agents::builtin
