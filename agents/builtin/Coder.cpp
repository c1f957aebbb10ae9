// Candidate generation; see Coder.h. The ABI order is: the forward's tensor arguments, the
// parameters and buffers the kernels read, then every buffer a kernel writes (intermediates
// between kernels and the forward's results), all allocated by ModelNew.
#include "agents/builtin/Coder.h"

#include "agents/builtin/HostProgram.h"
#include "agents/builtin/LibraryEmitter.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <sstream>

namespace stitch::agents::builtin {
namespace {

struct Slot {
  std::string tensorId;
  std::string expr;        // how ModelNew names it
  bool allocated = false;  // ModelNew allocates it (a kernel output)
  bool kept = false;       // allocated once and reused (an intermediate buffer), not every call
};

std::string tuple(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (std::size_t i = 0; i < v.size(); ++i) s += std::to_string(v[i]) + (v.size() == 1 || i + 1 < v.size() ? ", " : "");
  if (v.size() == 1) s.pop_back();
  return s + ")";
}

std::string cArray(const std::vector<int64_t>& v) {
  std::string s = "{";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]) + "LL";
  return s + (v.empty() ? "0}" : "}");
}

int dtypeCode(const std::string& dtype) {  // stitch_abi.h's StitchDType
  static const std::map<std::string, int> codes{{"float32", 0}, {"float16", 1}, {"bfloat16", 2}, {"float64", 3},
                                                {"int32", 4},   {"int64", 5},   {"uint8", 6},    {"bool", 7}};
  auto it = codes.find(dtype);
  return it == codes.end() ? -1 : it->second;
}

std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

// `self.a.b` for a dotted module path; components that are not identifiers ("0" of an
// nn.Sequential) are read with getattr.
std::string attributePath(const std::string& dotted) {
  std::string expr = "self";
  std::size_t start = 0;
  while (!dotted.empty() && start <= dotted.size()) {
    const std::size_t dot = std::min(dotted.find('.', start), dotted.size());
    const std::string part = dotted.substr(start, dot - start);
    const bool identifier = !part.empty() && !std::isdigit(static_cast<unsigned char>(part[0])) &&
                            std::all_of(part.begin(), part.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
    expr = identifier ? expr + "." + part : "getattr(" + expr + ", \"" + part + "\")";
    start = dot + 1;
  }
  return expr;
}

struct Layout {
  std::vector<Slot> slots;
  std::map<std::string, int> index;
  std::map<std::string, std::string> returned;  // each forward result's Python expression
  std::vector<std::string> buffers;             // tensor ids whose shape and dtype each bufN has
};

// A result that is a view of a buffer a kernel writes (a reshape after the last kernel, as
// instance norm ends) is returned as that view of the buffer.
std::optional<std::string> viewExpr(const Graph& graph, const Layout& l, const std::string& id) {
  const TensorInfo* t = graph.tensor(id);
  const TensorInfo* root = t;
  while (root->viewOf && !l.index.count(root->id)) root = graph.tensor(*root->viewOf);
  auto it = l.index.find(root->id);
  if (it == l.index.end() || !l.slots[it->second].allocated) return std::nullopt;
  const std::string& buffer = l.slots[it->second].expr;
  if (root == t) return buffer;
  if (t->storageOffset == root->storageOffset && t->strides == contiguousStrides(t->shape))
    return buffer + ".view(" + tuple(t->shape) + ")";
  return buffer + ".as_strided(" + tuple(t->shape) + ", " + tuple(t->strides) + ", " +
         std::to_string(t->storageOffset - root->storageOffset) + ")";
}

// The forward's results are fresh tensors every call (outN). Intermediates between steps are
// planned once: buffers made on the first call and kept, one shared by every intermediate of the
// same shape and dtype whose lifetimes do not overlap (steps run in order on one stream, so a
// buffer is free once its last reader has been launched).
void nameBuffers(const Graph& graph, const Plan& plan, Layout& l) {
  std::set<int> returnedSlots;
  for (const auto& o : graph.outputs) {
    const TensorInfo* t = graph.tensor(o);
    while (t && !l.index.count(t->id)) t = t->viewOf ? graph.tensor(*t->viewOf) : nullptr;
    if (t) returnedSlots.insert(l.index.at(t->id));
  }
  std::map<std::string, std::size_t> lastRead;
  for (std::size_t i = 0; i < plan.kernels.size(); ++i)
    for (const auto& id : plan.kernels[i].reads()) lastRead[id] = i;
  std::vector<std::size_t> freeAfter;  // per buffer: the last step that reads its current tenant
  int outs = 0;
  for (std::size_t step = 0; step < plan.kernels.size(); ++step)
    for (const auto& id : plan.kernels[step].writes()) {
      Slot& slot = l.slots[l.index.at(id)];
      if (!slot.expr.empty()) continue;
      if (returnedSlots.count(l.index.at(id))) {
        slot.expr = "out" + std::to_string(outs++);
        continue;
      }
      const TensorInfo* t = graph.tensor(id);
      std::size_t b = 0;
      for (; b < l.buffers.size(); ++b) {
        const TensorInfo* u = graph.tensor(l.buffers[b]);
        if (freeAfter[b] < step && u->shape == t->shape && u->dtype == t->dtype) break;
      }
      if (b == l.buffers.size()) {
        l.buffers.push_back(id);
        freeAfter.push_back(0);
      }
      freeAfter[b] = lastRead.count(id) ? lastRead[id] : step;
      slot.expr = "buf" + std::to_string(b);
      slot.kept = true;
    }
}

Outcome<Layout> layout(const Graph& graph, const Plan& plan, const ForwardSource& forward) {
  if (!plan.wholeForward())
    return Failure{"the plan leaves " + std::to_string(plan.uncovered.size()) +
                   " operator(s) in PyTorch; this coder generates whole-forward candidates only"};
  if (graph.inputs.size() != forward.params.size())
    return Failure{"forward takes " + std::to_string(forward.params.size()) + " argument(s) but the graph has " +
                   std::to_string(graph.inputs.size()) + " tensor input(s); non-tensor arguments are not generated"};
  Layout l;
  auto add = [&](const std::string& id, std::string expr, bool allocated) {
    if (l.index.count(id)) return;
    l.index[id] = static_cast<int>(l.slots.size());
    l.slots.push_back({id, std::move(expr), allocated});
  };
  for (std::size_t i = 0; i < graph.inputs.size(); ++i) add(graph.inputs[i], forward.params[i], false);
  for (const auto& k : plan.kernels)
    for (const auto& id : k.reads()) {
      const TensorInfo* t = graph.tensor(id);
      if (t->role == "parameter" || t->role == "buffer") {
        if (!t->name) return Failure{"parameter " + t->id + " has no name; ModelNew cannot register it"};
        add(t->id, attributePath(*t->name), false);
      }
    }
  for (const auto& k : plan.kernels)
    for (const auto& id : k.writes()) add(id, "", true);
  for (const auto& k : plan.kernels)
    for (const auto& id : k.reads())
      if (!l.index.count(id))
        return Failure{"step " + k.id + " reads " + id + ", which no step writes and the forward does not take"};
  nameBuffers(graph, plan, l);
  for (const auto& o : graph.outputs) {
    auto e = viewExpr(graph, l, o);
    if (!e) return Failure{"the forward returns " + o + ", which is not written by a generated kernel"};
    l.returned[o] = *e;
  }
  for (const Slot& s : l.slots)
    if (dtypeCode(graph.tensor(s.tensorId)->dtype) < 0)
      return Failure{"tensor " + s.tensorId + " has dtype " + graph.tensor(s.tensorId)->dtype + ", which the ABI cannot pass"};
  return l;
}

// The allocation lines and the library call of a forward, at `indent`.
std::string forwardBody(const Graph& graph, const Layout& l, const ForwardSource& forward, const std::string& lib,
                        const std::string& indent) {
  std::ostringstream py;
  const std::string device = forward.params.empty() ? "None" : forward.params[0] + ".device";
  auto empty = [&](const TensorInfo* t) {
    return "torch.empty(" + tuple(t->shape) + ", dtype=torch." + t->dtype + ", device=" + device + ")";
  };
  if (!l.buffers.empty()) {
    // Made on the first call (and again only if the device changes), then reused.
    std::string names;
    for (std::size_t b = 0; b < l.buffers.size(); ++b) names += (b ? ", " : "") + std::string("buf") + std::to_string(b);
    py << indent << "buffers = getattr(self, \"_stitch_buffers\", None)\n"
       << indent << "if buffers is None or buffers[0].device != " << device << ":\n"
       << indent << "    buffers = self._stitch_buffers = (";
    for (std::size_t b = 0; b < l.buffers.size(); ++b) py << (b ? ", " : "") << empty(graph.tensor(l.buffers[b]));
    py << (l.buffers.size() == 1 ? ",)\n" : ")\n") << indent << names << (l.buffers.size() == 1 ? ", = buffers\n" : " = buffers\n");
  }
  for (const Slot& s : l.slots)
    if (s.allocated && !s.kept) py << indent << s.expr << " = " << empty(graph.tensor(s.tensorId)) << "\n";
  py << indent << lib << ".forward(";
  for (std::size_t i = 0; i < l.slots.size(); ++i) py << (i ? ", " : "") << l.slots[i].expr;
  py << ")\n" << indent << "return ";
  for (std::size_t i = 0; i < graph.outputs.size(); ++i)
    py << (i ? ", " : "") << l.returned.at(graph.outputs[i]);
  py << "\n";
  return py.str();
}

// Every parameter and buffer registered under the reference's dotted names (also those no
// kernel reads, such as num_batches_tracked), so the harness can copy the reference's
// state_dict into ModelNew: it does so only when the keys match. Names need not be Python
// identifiers (nn.Sequential's children are "0", "1", ...), so modules are added by name.
std::string registrations(const Graph& graph) {
  std::ostringstream py;
  std::set<std::string> modules;
  auto split = [](const std::string& name) {
    const auto dot = name.rfind('.');
    return dot == std::string::npos ? std::make_pair(std::string(), name)
                                    : std::make_pair(name.substr(0, dot), name.substr(dot + 1));
  };
  for (const TensorInfo& info : graph.tensors) {
    const TensorInfo* t = &info;
    if ((t->role != "parameter" && t->role != "buffer") || !t->name) continue;
    const std::string name = *t->name;
    for (std::size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', dot + 1)) {
      const std::string prefix = name.substr(0, dot);
      if (!modules.insert(prefix).second) continue;
      const auto [parent, leaf] = split(prefix);
      py << "        " << attributePath(parent) << ".add_module(\"" << leaf << "\", nn.Module())\n";
    }
    const auto [owner, leaf] = split(name);
    if (t->role == "parameter")
      py << "        " << attributePath(owner) << ".register_parameter(\"" << leaf << "\", nn.Parameter(torch.empty("
         << tuple(t->shape) << ")))\n";
    else
      py << "        " << attributePath(owner) << ".register_buffer(\"" << leaf << "\", torch.empty(" << tuple(t->shape)
         << ", dtype=torch." << t->dtype << "))\n";
  }
  return py.str();
}

}  // namespace

Outcome<CandidateSource> generateCandidate(const Graph& graph, const Plan& plan, const ForwardSource& forward,
                                           const Variant& variant, const std::string& title) {
  auto l = layout(graph, plan, forward);
  if (!l) return l.error();
  const Layout& lay = l.value();
  std::ostringstream cu;
  cu << "// " << title << "\n// Generated by the StitchCUDA built-in coder, variant " << variant.name() << ". Tensors:";
  for (std::size_t i = 0; i < lay.slots.size(); ++i) cu << (i ? ", " : " ") << lay.slots[i].expr;
  bool gemm = false, conv = false, directDeconv = false;
  for (const auto& k : plan.kernels) {
    // A pointwise convolution measures a cuBLASLt GEMM against cuDNN.
    gemm = gemm || (k.library && (k.library->kind == LibraryCall::Kind::Gemm ||
                                  (k.library->kind == LibraryCall::Kind::Conv && pointwiseGemm(k.library->conv))));
    conv = conv || (k.library && k.library->kind == LibraryCall::Kind::Conv);
    directDeconv =
        directDeconv || (k.library && k.library->kind == LibraryCall::Kind::Conv && directDeconvTile(k.library->conv));
  }
  cu << ".\n" << emitPrelude() << emitLibraryPrelude(gemm, conv, directDeconv, plan.tensorCores);
  std::vector<std::string> launchers;
  for (const auto& k : plan.kernels) {
    const EmittedKernel e =
        k.library ? emitLibraryCall(*k.library, k.id, lay.index) : emitKernel(k.kernel, k.id, variant, lay.index);
    cu << e.device << "\n";
    launchers.push_back(e.launcher);
  }

  // Every slot is checked against the captured layout: the kernels bake these shapes in.
  cu << "static const int32_t kDtype[] = {";
  for (std::size_t i = 0; i < lay.slots.size(); ++i) cu << (i ? ", " : "") << dtypeCode(graph.tensor(lay.slots[i].tensorId)->dtype);
  cu << "};\nstatic const int32_t kNdim[] = {";
  for (std::size_t i = 0; i < lay.slots.size(); ++i) cu << (i ? ", " : "") << graph.tensor(lay.slots[i].tensorId)->shape.size();
  cu << "};\nstatic const int64_t kSizes[][8] = {";
  for (std::size_t i = 0; i < lay.slots.size(); ++i) cu << (i ? ", " : "") << cArray(graph.tensor(lay.slots[i].tensorId)->shape);
  cu << "};\nstatic const int64_t kStrides[][8] = {";
  for (std::size_t i = 0; i < lay.slots.size(); ++i) {
    const TensorInfo* t = graph.tensor(lay.slots[i].tensorId);
    cu << (i ? ", " : "") << cArray(lay.slots[i].allocated ? contiguousStrides(t->shape) : t->strides);
  }
  cu << "};\n";
  const std::string checks =
      "  for (int i = 0; i < n; ++i) {\n"
      "    if (t[i].dtype != kDtype[i] || t[i].ndim != kNdim[i]) return (int)cudaErrorInvalidValue;\n"
      "    for (int d = 0; d < t[i].ndim; ++d)\n"
      "      if (t[i].sizes[d] != kSizes[i][d] || (kSizes[i][d] != 1 && t[i].strides[d] != kStrides[i][d]))\n"
      "        return (int)cudaErrorInvalidValue;\n"
      "  }\n";
  // A generated kernel's launch costs the host what a graph launch does, so one runs directly.
  // Several launches replay as one, and so does a library call: its host path (descriptor checks,
  // then the launch) cost 8-15 µs per call for one cuBLASLt GEMM on an H100, where the timer
  // waits for the host (bench/results/bench_2026-11-24_h100.md).
  bool replay = plan.kernels.size() >= 2;
  for (const auto& k : plan.kernels) replay = replay || k.library;
  cu << emitHostEntry(launchers, lay.slots.size(), checks, replay);

  std::ostringstream py;
  py << "# " << title << "\n# Generated by the StitchCUDA built-in coder: allocation and one library call per forward.\n"
     << "import torch\nimport torch.nn as nn\nfrom stitchcuda_harness.abi import load_library\n\n\n"
     << "class ModelNew(nn.Module):\n"
     << "    def __init__(self, *args, **kwargs):\n        super().__init__()\n"
     << registrations(graph) << "        self.lib = load_library(__stitch_library__)\n\n"
     << "    def forward(self";
  for (const auto& p : forward.params) py << ", " << p;
  py << "):\n" << forwardBody(graph, lay, forward, "self.lib", "        ");

  CandidateSource out{cu.str(), py.str(), {}};
  for (const Slot& s : lay.slots) out.slots.push_back(s.expr);
  return out;
}

std::string forwardReplacement(const Graph& graph, const Plan& plan, const ForwardSource& forward,
                               const std::string& libraryPath) {
  auto l = layout(graph, plan, forward);
  if (!l) return "";
  const std::string& in = forward.bodyIndent;
  std::ostringstream py;
  py << in << "# StitchCUDA: " << plan.kernels.size() << " step(s) in one compiled library, one call per forward\n"
     << in << "from stitchcuda_harness.abi import load_library\n"
     << in << "if not hasattr(self, \"_stitch_lib\"):\n"
     << in << "    self._stitch_lib = load_library(\"" << libraryPath << "\")\n"
     << forwardBody(graph, l.value(), forward, "self._stitch_lib", in);
  return py.str();
}

}  // namespace stitch::agents::builtin
