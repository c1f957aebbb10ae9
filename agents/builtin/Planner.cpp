// Greedy fusion over the graph's topological order; see Planner.h. A node joins the open
// kernel when KernelBuilder accepts it; otherwise the kernel closes (writing what later nodes
// or the forward's result need) and the node opens the next one, or stays in PyTorch.
#include "agents/builtin/Planner.h"

#include "agents/builtin/KernelBuilder.h"

#include <algorithm>
#include <set>

namespace stitch::agents::builtin {
namespace {

int64_t bytesOf(const TensorInfo& t) { return t.numel() * t.elementBytes(); }

std::string techniqueOf(const FusedKernel& k, std::size_t ops) {
  bool pools = false;
  for (const auto& v : k.values) pools = pools || v.op == ValueOp::Pool;
  if (k.scans())
    return k.inner() == 1 ? "row scan: one block per row, block-wide scan of thread totals, fp64 carry across tiles"
                          : "column scan: one thread per column walks the scanned dim, loads coalesced across it";
  if (pools && !k.reduces())
    return "pooling: one thread per output element reads its window, " + std::to_string(ops) +
           " operator(s) fused after it";
  if (!k.reduces())
    return "fused elementwise kernel: " + std::to_string(ops) + " operator(s) in one pass, 16-byte vector accesses";
  int passes = 0;
  for (const auto& v : k.values) passes += v.op == ValueOp::Reduce;
  if (k.inner() == 1)
    return "row reduction: one block per row, warp-shuffle reductions, " + std::to_string(passes) +
           " reduction pass(es) re-reading the row from L1/L2, then one write pass";
  return "column reduction: one thread per output, loads coalesced across the kept inner dims";
}

class Partitioner {
public:
  Partitioner(const Graph& g, const std::map<int, double>& times, PlannerOptions o)
      : graph_(g), times_(times), options_(o), open_(g) {}

  Plan run() {
    for (const auto& u : graph_.uncovered) plan_.uncovered.push_back({u.op, u.reason, u.source});
    for (const Node& n : graph_.nodes) {
      // An allocation alone moves no data; a node that reads it finds no writer and says so.
      if (classifyOp(n.op) == OpClass::Allocation) continue;
      if (classifyOp(n.op) == OpClass::Unsupported) {
        close();
        plan_.uncovered.push_back({n.op, "no generated kernel for this operator; it stays in PyTorch", n.source});
        continue;
      }
      if (open_.add(n)) {
        if (!options_.fuse && n.kind != "view") close();
        continue;
      }
      close();
      if (auto r = open_.add(n); !r) plan_.uncovered.push_back({n.op, r.error().message, n.source});
      else if (!options_.fuse && n.kind != "view") close();
    }
    close();
    order();
    return std::move(plan_);
  }

private:
  void close() {
    if (open_.empty()) return;
    const auto ids = open_.kernel().nodeIds;
    std::set<int> inKernel(ids.begin(), ids.end());
    std::vector<std::string> outputs;
    for (int id : ids)
      for (const auto& t : graph_.node(id)->outputs)
        if (consumedOutside(t, inKernel)) outputs.push_back(t);
    auto k = open_.finish(outputs);
    open_ = KernelBuilder(graph_);
    bool computes = false;
    for (int id : ids) computes = computes || graph_.node(id)->kind != "view";
    if (!computes) return;  // views alone move no data
    if (!k) {
      for (int id : ids)
        plan_.uncovered.push_back({graph_.node(id)->op, k.error().message, graph_.node(id)->source});
      return;
    }
    plan_.kernels.push_back(describe(std::move(k).value()));
  }

  // Returned by the forward or read by a computing node outside the kernel, directly or through
  // views of it (a view nothing reads, such as unused pooling indices, does not count).
  bool consumedOutside(const std::string& tensor, const std::set<int>& inKernel) const {
    auto reaches = [&](const std::string& id) {
      for (const TensorInfo* t = graph_.tensor(id); t; t = t->viewOf ? graph_.tensor(*t->viewOf) : nullptr)
        if (t->id == tensor) return true;
      return false;
    };
    for (const auto& o : graph_.outputs)
      if (reaches(o)) return true;
    for (const Node& n : graph_.nodes) {
      if (inKernel.count(n.id) || n.kind == "view") continue;
      for (const Argument& a : n.inputs) {
        std::vector<std::string> ids = a.tensors;
        if (a.tensor) ids.push_back(*a.tensor);
        for (const auto& id : ids)
          if (reaches(id)) return true;
      }
    }
    return false;
  }

  PlannedKernel describe(FusedKernel k) {
    PlannedKernel p;
    p.id = "k" + std::to_string(plan_.kernels.size());
    std::set<int> lines;
    std::size_t ops = 0;
    for (int id : k.nodeIds) {
      const Node* n = graph_.node(id);
      if (n->source && !n->source->file.empty()) lines.insert(n->source->line);
      if (n->kind == "view") continue;
      ++ops;
      p.operators.push_back(n->op);
      for (const Argument& a : n->inputs)
        if (a.tensor) p.eagerBytes += bytesOf(*graph_.tensor(*a.tensor));
      for (const auto& o : n->outputs) p.eagerBytes += bytesOf(*graph_.tensor(o));
    }
    std::set<std::string> roots;
    for (const auto& in : k.inputs)
      if (roots.insert(in.tensorId).second) p.floorBytes += bytesOf(*graph_.tensor(in.tensorId));
    for (const auto& out : k.outputs) p.floorBytes += bytesOf(*graph_.tensor(out.tensorId));
    if (!lines.empty()) {
      p.firstLine = *lines.begin();
      p.lastLine = *lines.rbegin();
      double us = 0;
      bool any = false;
      for (int l : lines)
        if (auto it = times_.find(l); it != times_.end()) us += it->second, any = true;
      if (any) p.measuredUs = us;
    }
    if (p.eagerBytes > 0)
      p.expectedGainPct = std::max(0.0, 100.0 * (1.0 - static_cast<double>(p.floorBytes) / p.eagerBytes));
    p.technique = techniqueOf(k, ops);
    p.kernel = std::move(k);
    return p;
  }

  // Measured time first (where the time goes); bytes that must move when nothing was measured.
  void order() {
    for (std::size_t i = 0; i < plan_.kernels.size(); ++i) plan_.priority.push_back(i);
    std::stable_sort(plan_.priority.begin(), plan_.priority.end(), [&](std::size_t a, std::size_t b) {
      const auto& ka = plan_.kernels[a];
      const auto& kb = plan_.kernels[b];
      if (ka.measuredUs && kb.measuredUs) return *ka.measuredUs > *kb.measuredUs;
      if (ka.measuredUs.has_value() != kb.measuredUs.has_value()) return ka.measuredUs.has_value();
      return ka.eagerBytes > kb.eagerBytes;
    });
  }

  const Graph& graph_;
  const std::map<int, double>& times_;
  PlannerOptions options_;
  KernelBuilder open_;
  Plan plan_;
};

}  // namespace

int64_t Plan::floorBytes() const {
  int64_t b = 0;
  for (const auto& k : kernels) b += k.floorBytes;
  return b;
}

Plan makePlan(const Graph& graph, const std::map<int, double>& lineTimesUs, PlannerOptions options) {
  return Partitioner(graph, lineTimesUs, options).run();
}

}  // namespace stitch::agents::builtin
