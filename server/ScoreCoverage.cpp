// Coverage from declared operators; see ScoreCoverage.h.
#include "server/ScoreCoverage.h"

#include "agents/builtin/plan/Planner.h"

namespace stitch::server {

protocol::PlanCoverage declaredCoverage(const agents::builtin::Graph& graph, const std::map<std::string, int>& declared) {
  std::map<std::string, int> left = declared;
  agents::builtin::Plan plan;
  for (const auto& n : graph.nodes) {
    if (n.kind == "view") continue;
    const std::string base = n.op.substr(0, n.op.find('.', n.op.find("::") == std::string::npos ? 0 : n.op.find("::")));
    auto it = left.find(base);
    if (it == left.end() || it->second <= 0) continue;
    --it->second;
    agents::builtin::UncoveredOp u;
    u.op = n.op;
    u.reason = "declared in STITCH_PYTORCH_OPS";
    u.node = n.id;
    u.source = n.source;
    plan.uncovered.push_back(std::move(u));
  }
  return agents::builtin::planCoverage(graph, plan, {});
}

}  // namespace stitch::server
