// Operator coverage for `stitchcuda score` when no plan is given: the built-in planner's own
// accounting (planCoverage) over the reference's captured graph, with the operators the candidate
// left in PyTorch as the uncovered ones — those it declares (STITCH_PYTORCH_OPS, reported by the
// verdict as pytorch_ops) and those the verifier saw it run — so a candidate's coverage is counted
// exactly as a plan's is. The harness then scores it 0 where none of the candidate's own code ran.
#pragma once

#include "agents/ir/GraphIR.h"
#include "protocol/StitchTypes.h"

#include <map>
#include <string>

namespace stitch::server {

// `declared`: schema name without overload ("aten::add_") → calls per forward. Each call marks the
// next computing node of that operator, in graph order, as left in PyTorch: where the graph holds
// more nodes of it than declared, which ones stayed is not in the declaration, so the operator count
// is exact and the time share an estimate (a plan's own coverage, `--plan`, is exact).
protocol::PlanCoverage declaredCoverage(const agents::builtin::Graph& graph, const std::map<std::string, int>& declared);

}  // namespace stitch::server
