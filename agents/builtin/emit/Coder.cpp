// Candidate generation; see Coder.h. Each compiled segment's ABI order is: the tensors its steps
// read (the forward's arguments, parameters and buffers, what earlier steps wrote), then those
// they write (intermediates between steps and the forward's results, allocated by ModelNew).
#include "agents/builtin/emit/Coder.h"

#include "agents/builtin/emit/HostProgram.h"
#include "agents/builtin/emit/LibraryEmitter.h"
#include "agents/builtin/emit/SharedKernels.h"
#include "agents/builtin/emit/TorchCall.h"
#include "agents/builtin/lower/KernelBuilder.h"
#include "agents/builtin/plan/RuntimeRows.h"
#include "agents/program/ProgramImport.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cctype>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <variant>

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

// One entry of the forward, in order: a compiled segment (consecutive planned steps behind one
// library entry point) or a node the plan leaves in PyTorch.
struct Step {
  std::vector<std::size_t> kernels;  // indices into plan.kernels (a compiled segment)
  std::optional<int> node;           // a graph node issued from Python
};

struct Layout {
  std::vector<Slot> slots;                  // every tensor a compiled step reads or writes, once
  std::map<std::string, int> index;         // tensor id → slot
  std::vector<Step> steps;
  std::vector<std::vector<std::string>> segmentTensors;  // per compiled segment: its ABI order
  std::vector<std::string> stepLines;       // per step: its Python (the call or the PyTorch op)
  std::map<std::string, std::string> names;  // tensor id → Python expression, as the forward binds them
  std::map<std::string, int> pytorchOps;     // schema name → calls left in PyTorch
  // The non-tensor arguments the graph bakes in: each a Python condition that holds when an
  // argument differs from its captured value, and what the program was generated for.
  std::vector<std::pair<std::string, std::string>> guards;
  std::string device;                         // the Python expression of the forward's device
  std::vector<std::string> returned;         // each forward result's Python expression
  std::vector<std::string> buffers;          // tensor ids whose shape and dtype each bufN has
  const BatchRows* rows = nullptr;           // the plan's, where the batch is a run-time parameter
  // A tensor's shape as a Python tuple; where the rows are the call's, dim 0 of a tensor that
  // carries them in terms of the forward's `rows`.
  std::string shape(const TensorInfo& t) const {
    if (!rows || !rows->perRow.count(t.id)) return tuple(t.shape);
    std::string s = "(" + rows->sizeText(t.id) + ",";
    for (std::size_t d = 1; d < t.shape.size(); ++d) s += (d > 1 ? ", " : " ") + std::to_string(t.shape[d]);
    return s + ")";
  }
  bool partial() const { return steps.size() != 1 || steps[0].kernels.empty(); }
};

// The tensor whose storage `id` is (Graph::viewRoot); null for an unknown id.
const TensorInfo* rootOf(const Graph& graph, const std::string& id) {
  const TensorInfo* t = graph.tensor(id);
  return t ? graph.viewRoot(*t) : nullptr;
}

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
  if (t->storageOffset == root->storageOffset && root->contiguous() && t->strides == contiguousStrides(t->shape))
    return buffer + ".view(" + l.shape(*t) + ")";
  return buffer + ".as_strided(" + l.shape(*t) + ", " + tuple(t->strides) + ", " +
         std::to_string(t->storageOffset - root->storageOffset) + ")";
}

// The forward in order: planned steps grouped into segments, split where the plan leaves a
// node in PyTorch.
std::vector<Step> orderSteps(const Plan& plan) {
  std::vector<Step> steps;
  std::vector<const UncoveredOp*> left;
  for (const auto& u : plan.uncovered)
    if (u.node) left.push_back(&u);
  std::stable_sort(left.begin(), left.end(), [](const UncoveredOp* a, const UncoveredOp* b) {
    return a->afterSteps != b->afterSteps ? a->afterSteps < b->afterSteps : *a->node < *b->node;
  });
  std::size_t next = 0;
  for (std::size_t k = 0; k <= plan.kernels.size(); ++k) {
    for (; next < left.size() && left[next]->afterSteps == k; ++next) steps.push_back({{}, left[next]->node});
    if (k == plan.kernels.size()) break;
    if (steps.empty() || steps.back().node) steps.push_back({});
    steps.back().kernels.push_back(k);
  }
  return steps;
}

// Which steps read each tensor's root last: a buffer is free once its last reader has been
// issued (steps run in order on one stream, PyTorch's operators on the same stream as ours).
std::map<std::string, std::size_t> lastReads(const Graph& graph, const Plan& plan, const std::vector<Step>& steps) {
  std::map<std::string, std::size_t> last;
  auto read = [&](const std::string& id, std::size_t at) {
    if (const TensorInfo* r = rootOf(graph, id)) last[r->id] = std::max(last[r->id], at);
  };
  for (std::size_t s = 0; s < steps.size(); ++s) {
    for (std::size_t k : steps[s].kernels)
      for (const auto& id : plan.kernels[k].reads()) read(id, s);
    if (steps[s].node)
      for (const Argument& a : graph.node(*steps[s].node)->inputs)
        for (const auto& id : a.tensorIds())
          if (!id.empty()) read(id, s);
  }
  return last;
}

// The forward's results are fresh tensors every call (outN): those a kernel writes and the
// forward returns, directly or through views or PyTorch's in-place operators. Intermediates
// between steps are planned once: buffers made on the first call and kept, one shared by every
// intermediate of the same shape and dtype whose lifetimes do not overlap.
void nameBuffers(const Graph& graph, const Plan& plan, Layout& l) {
  std::set<std::string> returnedRoots;
  for (const auto& o : graph.outputs)
    if (const TensorInfo* r = rootOf(graph, o)) returnedRoots.insert(r->id);
  const auto lastRead = lastReads(graph, plan, l.steps);
  std::vector<std::size_t> freeAfter;  // per buffer: the last step that reads its current tenant
  int outs = 0;
  for (std::size_t step = 0; step < l.steps.size(); ++step)
    for (std::size_t k : l.steps[step].kernels)
      for (const auto& id : plan.kernels[k].writes()) {
        Slot& slot = l.slots[l.index.at(id)];
        if (!slot.expr.empty()) continue;
        if (returnedRoots.count(rootOf(graph, id)->id)) {
          slot.expr = "out" + std::to_string(outs++);
          continue;
        }
        const TensorInfo* t = graph.tensor(id);
        std::size_t b = 0;
        for (; b < l.buffers.size(); ++b) {
          const TensorInfo* u = graph.tensor(l.buffers[b]);
          if (freeAfter[b] < step && u->shape == t->shape && u->dtype == t->dtype &&
              u->allocationStrides() == t->allocationStrides())
            break;
        }
        if (b == l.buffers.size()) {
          l.buffers.push_back(id);
          freeAfter.push_back(0);
        }
        auto it = lastRead.find(rootOf(graph, id)->id);
        freeAfter[b] = it != lastRead.end() ? std::max(it->second, step) : step;
        slot.expr = "buf" + std::to_string(b);
        slot.kept = true;
      }
}

// Names tensors in Python as the forward binds them, issuing the views (and allocations) that a
// PyTorch step or a result needs just before it.
class PythonNames {
public:
  PythonNames(const Graph& graph, Layout& l, std::string device) : graph_(graph), l_(l), device_(std::move(device)) {}

  Outcome<std::string> operator()(const std::string& id, std::string& lines) {
    if (auto it = l_.names.find(id); it != l_.names.end()) return it->second;
    // A view of a buffer a compiled step writes is that buffer's view.
    if (auto v = viewExpr(graph_, l_, id)) return l_.names[id] = *v;
    const TensorInfo* t = graph_.tensor(id);
    // A small constant the forward makes outside ATen (`torch.tensor(self.c)`) is made again.
    if (t && t->role == "constant" && t->py) {
      lines += "v_" + id + " = " + withDevice(*t->py, device_) + "\n";
      return l_.names[id] = "v_" + id;
    }
    const Node* producer = t && t->producer ? graph_.node(*t->producer) : nullptr;
    // A view or an allocation moves no data: it is issued again where it is needed.
    if (producer && (producer->kind == "view" || classifyOp(producer->op) == OpClass::Allocation)) {
      if (auto issued = issue(*producer, lines); !issued) return issued.error();
      if (auto it = l_.names.find(id); it != l_.names.end()) return it->second;
    }
    return Failure{"tensor " + id + (producer ? " (from " + producer->where() + ")" : std::string()) +
                   " is neither written by a compiled step nor computed in PyTorch, so the forward cannot name it"};
  }

  // `node` issued through torch.ops; its tensor results are bound to locals.
  Outcome<bool> issue(const Node& node, std::string& lines) {
    std::string before;
    auto args = torchCallArgs(node, [&](const std::string& id) { return (*this)(id, before); }, device_);
    if (!args) return args.error();
    lines += before;
    const std::string call = torchOpExpr(node.op) + "(" + args.value() + ")";
    std::vector<std::string> locals;
    for (const auto& o : node.outputs) locals.push_back("v_" + o);
    if (!node.resultIndex) {
      lines += (locals.empty() ? std::string() : locals[0] + " = ") + call + "\n";
    } else {
      lines += "_r = " + call + "\n";
      for (std::size_t i = 0; i < locals.size() && i < node.resultIndex->size(); ++i)
        lines += locals[i] + " = _r[" + std::to_string((*node.resultIndex)[i]) + "]\n";
    }
    for (std::size_t i = 0; i < node.outputs.size(); ++i) l_.names[node.outputs[i]] = locals[i];
    return true;
  }

private:
  const Graph& graph_;
  Layout& l_;
  std::string device_;
};

std::string indented(const std::string& lines, const std::string& indent) {
  std::string out;
  std::istringstream in(lines);
  for (std::string line; std::getline(in, line);) out += (line.empty() ? "" : indent) + line + "\n";
  return out;
}

std::size_t paramIndex(const ForwardSource& forward, const std::string& name) {
  return static_cast<std::size_t>(std::find(forward.params.begin(), forward.params.end(), name) - forward.params.begin());
}

// A default the generated signature can repeat as written: None, a bool, a number or a string.
bool pythonLiteral(const std::string& d) {
  static const std::regex literal(R"(None|True|False|[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|'[^'\\]*'|"[^"\\]*")");
  return std::regex_match(d, literal);
}

Outcome<Layout> layout(const Graph& graph, const Plan& plan, const ForwardSource& forward) {
  if (plan.kernels.empty()) return Failure{"no operator of this forward has a generated kernel"};
  Layout l;
  if (plan.rows) l.rows = &*plan.rows;
  // Inputs by position: a tensor input is named "inputs[i]"; a non-tensor one is baked into the
  // graph, so the forward checks it still has the captured value.
  for (const std::string& id : graph.inputs) {
    const TensorInfo* t = graph.tensor(id);
    const std::size_t i = t->name && t->name->rfind("inputs[", 0) == 0 ? std::strtoul(t->name->c_str() + 7, nullptr, 10)
                                                                        : forward.params.size();
    if (i >= forward.params.size())
      return Failure{"tensor input " + id + " is not one of forward's " + std::to_string(forward.params.size()) + " argument(s)"};
    l.names[id] = forward.params[i];
  }
  std::size_t passed = 0;  // how many of forward's arguments the task passes (get_inputs' length)
  for (const auto& [id, param] : l.names) passed = std::max(passed, paramIndex(forward, param) + 1);
  auto guard = [&](const std::string& p, const std::string& value) {
    l.guards.push_back({p + " != " + value, "\"this program was generated for " + p + " == \" + repr(" + value +
                                                ") + \", got \" + repr(" + p + ")"});
  };
  for (const auto& [i, value] : graph.inputValues) {
    if (i < 0 || static_cast<std::size_t>(i) >= forward.params.size()) continue;
    passed = std::max(passed, static_cast<std::size_t>(i) + 1);
    guard(forward.params[static_cast<std::size_t>(i)], value);
  }
  // An argument the task leaves at its default (`h0=None`) was captured with that value: the
  // program keeps the default in its signature and refuses another value.
  for (std::size_t i = passed; i < forward.params.size(); ++i) {
    const std::string& p = forward.params[i];
    const std::string& d = i < forward.defaults.size() ? forward.defaults[i] : "";
    if (!pythonLiteral(d))
      return Failure{"forward's argument " + p + (d.empty() ? " has no default and is not passed by the task"
                                                               : " defaults to " + d + ", which is not a literal")};
    if (d == "None")
      l.guards.push_back({p + " is not None", "\"this program was generated for " + p + " left at None, got \" + repr(type(" +
                                                  p + "))"});
    else
      guard(p, d);
  }
  l.steps = orderSteps(plan);
  auto add = [&](const std::string& id, std::string expr, bool allocated) {
    if (l.index.count(id)) return;
    l.index[id] = static_cast<int>(l.slots.size());
    l.slots.push_back({id, std::move(expr), allocated});
  };
  for (const TensorInfo& t : graph.tensors)
    if ((t.role == "parameter" || t.role == "buffer" || t.role == "attribute") && t.name)
      l.names[t.id] = attributePath(*t.name);
  for (const auto& k : plan.kernels)
    for (const auto& id : k.writes()) {
      // A write-back (running statistics, a counter) goes into the module's own buffer.
      if (graph.tensor(id)->role != "buffer") add(id, "", true);
      else if (auto name = l.names.find(id); name != l.names.end()) add(id, name->second, false);
      else return Failure{"buffer " + id + " has no name; the forward cannot write it back"};
    }
  nameBuffers(graph, plan, l);

  // The device everything is made on: the first tensor input's.
  l.device = graph.inputs.empty() ? "None" : l.names.at(graph.inputs.front()) + ".device";
  PythonNames names(graph, l, l.device);
  for (const Step& step : l.steps) {
    std::string lines;
    if (step.node) {
      const Node& n = *graph.node(*step.node);
      if (auto issued = names.issue(n, lines); !issued) return issued.error();
      if (n.kind != "view") ++l.pytorchOps[schemaName(n.op)];
      l.stepLines.push_back(lines);
      continue;
    }
    std::vector<std::string> tensors;
    auto take = [&](const std::string& id) {
      if (std::find(tensors.begin(), tensors.end(), id) == tensors.end()) tensors.push_back(id);
    };
    std::set<std::string> written;
    for (std::size_t k : step.kernels)
      for (const auto& id : plan.kernels[k].writes()) written.insert(id);
    for (std::size_t k : step.kernels)
      for (const auto& id : plan.kernels[k].reads())
        if (!written.count(id)) take(id);
    for (std::size_t k : step.kernels)
      for (const auto& id : plan.kernels[k].writes()) take(id);
    std::string args;
    for (const auto& id : tensors) {
      const TensorInfo* t = graph.tensor(id);
      if (dtypeCode(t->dtype) < 0) return Failure{"tensor " + id + " has dtype " + t->dtype + ", which the ABI cannot pass"};
      if ((t->role == "parameter" || t->role == "buffer") && !t->name)
        return Failure{"parameter " + id + " has no name; ModelNew cannot register it"};
      auto e = names(id, lines);
      if (!e) return Failure{"a compiled step reads " + id + ", which no step writes and the forward does not take (" +
                             e.error().message + ")"};
      args += ", " + e.value();
    }
    l.stepLines.push_back(lines + "{lib}." + (l.partial() ? "segment(" + std::to_string(l.segmentTensors.size()) + args + ")"
                                                          : "forward(" + args.substr(2) + ")") + "\n");
    l.segmentTensors.push_back(std::move(tensors));
  }
  std::string tail;
  std::set<std::string> rebound;
  for (const auto& [name, id] : graph.state) rebound.insert(attributePath(name));
  for (std::size_t i = 0; i + graph.stateOutputs < graph.outputs.size(); ++i) {
    const std::string& o = graph.outputs[i];
    auto e = names(o, tail);
    if (!e) return Failure{"the forward returns " + o + ": " + e.error().message};
    // A result that is an attribute's old value is taken before the attribute is rebound.
    if (rebound.count(e.value())) tail += "v_" + o + " = " + e.value() + "\n";
    l.returned.push_back(rebound.count(e.value()) ? "v_" + o : e.value());
  }
  // The module state the forward leaves for the next call, bound as the forward binds it.
  for (const auto& [name, id] : graph.state) {
    auto e = names(id, tail);
    if (!e) return Failure{"the forward leaves " + id + " in " + attributePath(name) + ": " + e.error().message};
    tail += attributePath(name) + " = " + e.value() + "\n";
  }
  l.stepLines.push_back(tail);
  return l;
}

// The allocation lines, the steps and the return of a forward, at `indent`.
std::string forwardBody(const Graph& graph, const Layout& l, const ForwardSource& forward, const std::string& lib,
                        const std::string& indent) {
  std::ostringstream py;
  for (const auto& [differs, generatedFor] : l.guards)
    py << indent << "if " << differs << ":\n" << indent << "    raise ValueError(" << generatedFor << ")\n";
  const std::string device = l.device;
  auto empty = [&](const TensorInfo* t) {
    const std::string kind = ", dtype=torch." + t->dtype + ", device=" + device + ")";
    if (t->contiguous()) return "torch.empty(" + l.shape(*t) + kind;
    return "torch.empty_strided(" + l.shape(*t) + ", " + tuple(t->allocationStrides()) + kind;
  };
  // The call's rows, from the first input (every input carries them).
  std::string rowsKey;
  if (l.rows) {
    const std::string& first = graph.inputs.front();
    const int64_t per = l.rows->perRow.at(first);
    py << indent << "rows = " << l.names.at(first) << ".shape[0]" << (per == 1 ? "" : " // " + std::to_string(per)) << "\n";
    rowsKey = " or self._stitch_rows != rows";
  }
  if (!l.buffers.empty()) {
    // Made on the first call (and again only if the device, or the rows where they are the
    // call's, change), then reused.
    std::string names;
    for (std::size_t b = 0; b < l.buffers.size(); ++b) names += (b ? ", " : "") + std::string("buf") + std::to_string(b);
    py << indent << "buffers = getattr(self, \"_stitch_buffers\", None)\n"
       << indent << "if buffers is None or buffers[0].device != " << device << rowsKey << ":\n";
    if (l.rows) py << indent << "    self._stitch_rows = rows\n";
    py << indent << "    buffers = self._stitch_buffers = (";
    for (std::size_t b = 0; b < l.buffers.size(); ++b) py << (b ? ", " : "") << empty(graph.tensor(l.buffers[b]));
    py << (l.buffers.size() == 1 ? ",)\n" : ")\n") << indent << names << (l.buffers.size() == 1 ? ", = buffers\n" : " = buffers\n");
  }
  for (const Slot& s : l.slots)
    if (s.allocated && !s.kept) py << indent << s.expr << " = " << empty(graph.tensor(s.tensorId)) << "\n";
  std::string steps;
  for (const auto& lines : l.stepLines) steps += lines;
  for (std::size_t at = steps.find("{lib}"); at != std::string::npos; at = steps.find("{lib}", at)) steps.replace(at, 5, lib);
  py << indented(steps, indent) << indent << "return ";
  for (std::size_t i = 0; i < l.returned.size(); ++i) py << (i ? ", " : "") << l.returned[i];
  py << "\n";
  return py.str();
}

// Fallback when the capture could not give Model's construction: every parameter and buffer
// registered under the reference's dotted names (also those no kernel reads, such as
// num_batches_tracked). Names need not be Python identifiers (nn.Sequential's children are "0",
// "1", ...), so modules are added by name. Such a ModelNew draws no weights of its own.
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
    if ((t->role != "parameter" && t->role != "buffer" && t->role != "attribute") || !t->name) continue;
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
    else if (t->role == "attribute")
      py << "        setattr(" << attributePath(owner) << ", \"" << leaf << "\", torch.empty(" << tuple(t->shape)
         << ", dtype=torch." << t->dtype << "))\n";
    else
      py << "        " << attributePath(owner) << ".register_buffer(\"" << leaf << "\", torch.empty(" << tuple(t->shape)
         << ", dtype=torch." << t->dtype << "))\n";
  }
  return py.str();
}

// The C++ arrays segment `s` checks its tensors against, and the check itself: the kernels bake
// these layouts in (but for the rows, where they are the call's, which the check then sets).
std::string layoutChecks(const Graph& graph, const Layout& l, std::size_t s, std::ostringstream& cu) {
  const auto& ids = l.segmentTensors[s];
  const std::string n = std::to_string(s);
  auto allocated = [&](const std::string& id) { return l.slots[l.index.at(id)].allocated; };
  cu << "static const int32_t kDtype" << n << "[] = {";
  for (std::size_t i = 0; i < ids.size(); ++i) cu << (i ? ", " : "") << dtypeCode(graph.tensor(ids[i])->dtype);
  cu << "};\nstatic const int32_t kNdim" << n << "[] = {";
  for (std::size_t i = 0; i < ids.size(); ++i) cu << (i ? ", " : "") << graph.tensor(ids[i])->shape.size();
  cu << "};\nstatic const int64_t kSizes" << n << "[][8] = {";
  for (std::size_t i = 0; i < ids.size(); ++i) cu << (i ? ", " : "") << cArray(graph.tensor(ids[i])->shape);
  cu << "};\nstatic const int64_t kStrides" << n << "[][8] = {";
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const TensorInfo* t = graph.tensor(ids[i]);
    cu << (i ? ", " : "") << cArray(l.index.count(ids[i]) && allocated(ids[i]) ? t->allocationStrides() : t->strides);
  }
  cu << "};\n";
  // Where the rows are the call's, dim 0 of a tensor that carries them is its size per row times
  // the rows, which the first such tensor gives.
  int first = -1;
  if (l.rows) {
    cu << "static const int64_t kPerRow" << n << "[] = {";
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const auto it = l.rows->perRow.find(ids[i]);
      const int64_t per = it == l.rows->perRow.end() ? 0 : it->second;
      if (per && first < 0) first = static_cast<int>(i);
      cu << (i ? ", " : "") << per;
    }
    cu << "};\n";
  }
  std::string rows, size = "kSizes" + n + "[i][d]";
  if (first >= 0) {
    const std::string per = "kPerRow" + n, f = std::to_string(first);
    rows = "      if (t[" + f + "].ndim < 1 || t[" + f + "].sizes[0] < " + per + "[" + f + "] || t[" + f + "].sizes[0] % " +
           per + "[" + f + "] != 0)\n"
           "        return (int)cudaErrorInvalidValue;\n"
           "      rows = t[" + f + "].sizes[0] / " + per + "[" + f + "];\n";
    size = "d == 0 && " + per + "[i] ? rows * " + per + "[i] : " + size;
  }
  return rows +
         "      for (int i = 0; i < n; ++i) {\n"
         "        if (t[i].dtype != kDtype" + n + "[i] || t[i].ndim != kNdim" + n + "[i]) return (int)cudaErrorInvalidValue;\n"
         "        for (int d = 0; d < t[i].ndim; ++d) {\n"
         "          const int64_t size = " + size + ";\n"
         "          if (t[i].sizes[d] != size || (size != 1 && t[i].strides[d] != kStrides" + n + "[i][d]))\n"
         "            return (int)cudaErrorInvalidValue;\n"
         "        }\n"
         "      }\n";
}

// ModelNew's class: Model's own construction (so the same seed draws the same weights) and the
// generated forward.
std::string modelClass(const Graph& graph, const Layout& lay, const ForwardSource& forward, const std::string& lib) {
  std::ostringstream py;
  py << "class ModelNew(nn.Module):\n";
  if (graph.construction && graph.construction->body.find("def __init__") != std::string::npos)
    py << indented(graph.construction->body, "    ") << "\n";
  else
    py << "    def __init__(self, *args, **kwargs):\n        super().__init__()\n" << registrations(graph) << "\n";
  py << "    def forward(self";
  for (std::size_t i = 0; i < forward.params.size(); ++i) {
    py << ", " << forward.params[i];
    if (i < forward.defaults.size() && !forward.defaults[i].empty()) py << "=" << forward.defaults[i];
  }
  py << "):\n" << forwardBody(graph, lay, forward, lib, "        ");
  return py.str();
}

}  // namespace

Outcome<CandidateSource> generateCandidate(const Graph& graph, const Plan& plan, const ForwardSource& forward,
                                           const Variant& variant, const std::string& title) {
  auto l = layout(graph, plan, forward);
  if (!l) return l.error();
  const Layout& lay = l.value();
  std::ostringstream cu;
  cu << "// " << title << "\n// Generated by the StitchCUDA built-in coder, variant " << variant.name() << ".";
  for (std::size_t s = 0; s < lay.segmentTensors.size(); ++s) {
    cu << (lay.segmentTensors.size() > 1 ? "\n// Segment " + std::to_string(s) + " tensors:" : std::string(" Tensors:"));
    for (std::size_t i = 0; i < lay.segmentTensors[s].size(); ++i) {
      const std::string& id = lay.segmentTensors[s][i];
      cu << (i ? ", " : " ") << (lay.names.count(id) ? lay.names.at(id) : id);
    }
  }
  if (plan.rows)
    cu << "\n// Rows: any; the program was captured with " << plan.rows->captured
       << " and takes the rows of each call (dim 0 of its inputs)";
  else if (!plan.fixedRowsWhy.empty())
    cu << "\n// Rows: fixed at " << (graph.independentRows ? std::to_string(*graph.independentRows) : std::string("those captured"))
       << ": " << plan.fixedRowsWhy;
  bool gemm = false, conv = false, rnn = false, directDeconv = false, folds = false;
  for (const auto& k : plan.kernels) {
    folds = folds || (!k.library && foldsReductions(k.kernel));
    // A pointwise convolution measures a cuBLASLt GEMM against cuDNN.
    gemm = gemm || (k.library && (k.library->kind == LibraryCall::Kind::Gemm ||
                                  (k.library->kind == LibraryCall::Kind::Conv && pointwiseGemm(k.library->conv))));
    conv = conv || (k.library && k.library->kind == LibraryCall::Kind::Conv);
    rnn = rnn || (k.library && k.library->kind == LibraryCall::Kind::Rnn);
    directDeconv =
        directDeconv || (k.library && k.library->kind == LibraryCall::Kind::Conv && directDeconvTile(k.library->conv));
  }
  // The markers let the build compile the generated kernels in several translation units at once
  // (harness nvcc_build.py, protocol/HARNESS.md): what precedes kSharedEnd is all a kernel needs.
  cu << ".\n" << emitPrelude() << (folds ? emitFoldPrelude() : "") << kSharedEnd << "\n"
     << emitLibraryPrelude(gemm, conv, rnn, directDeconv, plan.tensorCores);
  std::vector<SegmentEntry> segments;
  // The file in pieces: text, and the place of each block of generated kernels, written once all
  // its launchers are known (a repeat of an earlier kernel joins that kernel's block).
  SharedKernels kernels;
  std::size_t blocksPlaced = 0;
  std::vector<std::variant<std::string, std::size_t>> pieces;
  for (const Step& step : lay.steps) {
    if (step.node) continue;
    const std::size_t s = segments.size();
    std::map<std::string, int> index;  // this segment's ABI order
    for (const auto& id : lay.segmentTensors[s]) index.emplace(id, static_cast<int>(index.size()));
    SegmentEntry entry;
    entry.slots = index.size();
    // A generated kernel's launch costs the host what a graph launch does, so one runs directly.
    // Several launches replay as one, and so does a library call: its host path (descriptor
    // checks, then the launch) cost 8-15 µs per call for one cuBLASLt GEMM on an H100, where the
    // timer waits for the host (bench/results/bench_2026-11-24_h100.md).
    entry.replay = step.kernels.size() >= 2;
    for (std::size_t k : step.kernels) {
      const PlannedKernel& p = plan.kernels[k];
      entry.replay = entry.replay || p.library;
      const EmittedKernel e =
          p.library ? emitLibraryCall(*p.library, p.id, k, index) : emitKernel(p.kernel, p.id, variant, index);
      if (p.library) {
        cu << e.device << "\n";
      } else if (const std::size_t b = kernels.add(p.id, e); b == blocksPlaced) {
        pieces.emplace_back(cu.str());
        pieces.emplace_back(b);
        cu.str("");
        ++blocksPlaced;
      }
      entry.launchers.push_back(e.launcher);
    }
    entry.checks = layoutChecks(graph, lay, s, cu);
    segments.push_back(std::move(entry));
  }
  cu << emitHostEntry(segments);
  pieces.emplace_back(cu.str());
  std::string cuda;
  for (const auto& piece : pieces)
    cuda += std::holds_alternative<std::string>(piece) ? std::get<std::string>(piece) : kernels.text(std::get<std::size_t>(piece));

  std::ostringstream py;
  std::string prelude = graph.construction ? graph.construction->prelude : std::string();
  std::string future;  // `from __future__` lines must open the file
  for (std::size_t at = prelude.find("from __future__"); at != std::string::npos; at = prelude.find("from __future__")) {
    const std::size_t end = std::min(prelude.find('\n', at), prelude.size());
    future += prelude.substr(at, end - at) + "\n";
    prelude.erase(at, end - at + (end < prelude.size()));
  }
  py << future << "# " << title << "\n# Generated by the StitchCUDA built-in coder: Model's own construction, then "
     << (lay.partial() ? "the compiled segments and the operators left in PyTorch, in order.\n"
                       : "allocation and one library call per forward.\n")
     << "import torch\nimport torch.nn as nn\nfrom stitchcuda_harness.abi import load_library\n";
  if (!prelude.empty()) py << "\n# From the task file: what Model's construction uses.\n" << prelude << "\n";
  py << "\n# The operators this candidate leaves in PyTorch (the plan's uncovered list, with their counts per\n"
     << "# forward): the verifier accepts exactly these.\nSTITCH_PYTORCH_OPS = {";
  std::size_t i = 0;
  for (const auto& [op, n] : lay.pytorchOps) py << (i++ ? ", " : "") << "\"" << op << "\": " << n;
  py << "}\n";
  if (plan.rows)
    py << "# The program takes the rows (dim 0 of the inputs) of each call: the verifier also runs it on\n"
       << "# another batch size.\nSTITCH_ANY_ROWS = True\n";
  py << "\n_stitch_lib = load_library(__stitch_library__)\n\n\n" << modelClass(graph, lay, forward, "_stitch_lib");

  CandidateSource out{std::move(cuda), py.str(), {}};
  for (const auto& id : lay.segmentTensors.front()) out.slots.push_back(lay.names.count(id) ? lay.names.at(id) : id);
  return out;
}

std::string forwardReplacement(const Graph& graph, const Plan& plan, const ForwardSource& forward,
                               const program::ProgramNames& program, std::optional<double> speedupEager) {
  auto l = layout(graph, plan, forward);
  if (!l) return "";
  const std::string& in = forward.bodyIndent;
  // What the program was generated for: each tensor input's dtype, shape and strides, by name.
  std::string inputs, accepts;
  for (const std::string& id : graph.inputs) {
    const TensorInfo* t = graph.tensor(id);
    const std::string& name = l.value().names.at(id);
    inputs += (inputs.empty() ? "" : ", ") + std::string("\"") + name + "\": (\"" + t->dtype + "\", " + tuple(t->shape) + ", " +
              tuple(t->strides) + ")";
    accepts += (accepts.empty() ? "" : ", ") + name + "=" + name;
  }
  // Other batch sizes run in chunks of the generated rows where the capture found every row
  // computed from itself alone, and the program writes no module state (a chunk at a time would
  // update running statistics once per chunk).
  std::string batch;
  if (graph.independentRows && !writesModuleState(graph, plan)) {
    batch = ", batch=" + std::to_string(*graph.independentRows);
    if (plan.rows) batch += ", any_rows=True";  // the program takes the rows of each call (RuntimeRows.h)
    if (speedupEager) {
      char s[32];
      std::snprintf(s, sizeof s, "%.3g", *speedupEager);
      batch += std::string(", speedup=") + s;
    }
  }
  std::string params;
  for (const std::string& id : graph.inputs) params += (params.empty() ? "" : ", ") + l.value().names.at(id);
  std::ostringstream py;
  py << forward.header << in << "# StitchCUDA: " << plan.kernels.size() << " step(s) compiled into " << program.folder << "/" << program.cuda
     << ", built with nvcc on first use" << (plan.rows ? ", for any batch size" : "") << "\n"
     << in << "program = getattr(self, \"_stitch_program\", None)\n"
     << in << "if program is None:\n"
     << program::importLoader(program, in + "    ")
     << in << "    program = self._stitch_program = load_program(\"" << program.cuda << "\", {" << inputs << "}" << batch << ")\n"
     << in << "def compiled(" << params << "):\n"
     << forwardBody(graph, l.value(), forward, "program", in + "    ");
  // A baked-in argument with another value runs the original forward, as another shape does.
  std::string differs;
  for (const auto& [condition, generatedFor] : l.value().guards) differs += (differs.empty() ? "" : " or ") + condition;
  const std::string route = "program.route(" + accepts + ")";
  py << in << "route = " << (differs.empty() ? route : "\"original\" if " + differs + " else " + route) << "\n"
     << in << "if route == \"program\":\n"
     << in << "    return compiled(" << accepts << ")\n";
  if (!batch.empty())
    py << in << "if route == \"chunks\":\n" << in << "    return program.in_chunks(compiled, " << accepts << ")\n";
  py << in << "# The original forward, for inputs the program was not generated for:\n" << forward.body;
  return py.str();
}

}  // namespace stitch::agents::builtin
