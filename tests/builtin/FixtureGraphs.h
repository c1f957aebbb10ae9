// The recorded graph fixtures (tests/fixtures/graphs/*.json) and their tasks, loaded for the
// built-in brain's tests and for the candidate generator.
#pragma once

#include "agents/builtin/emit/Coder.h"
#include "agents/builtin/normalize/GraphNormalize.h"
#include "agents/builtin/plan/MemoryFormat.h"

#include <filesystem>
#include <string>
#include <vector>

namespace stitch::agents::builtin::testing {

std::filesystem::path sourceDir();
// Every fixture's name ("19_sum_lastdim"), sorted.
std::vector<std::string> fixtureNames();
// A fixture's graph JSON as the harness wrote it (before normalization).
Outcome<nlohmann::json> fixtureJson(const std::string& name);
// The graph of a fixture as the built-in brain reads it (normalized, then parsed); fails with
// the parser's message.
Outcome<Graph> loadFixture(const std::string& name);
// The fixture's plan as the built-in brain makes it: with the rows a run-time parameter where the
// fixture records the forward at half its rows and the plans agree (RuntimeRows.h).
Outcome<Plan> fixturePlan(const std::string& name, const Graph& graph, PlannerOptions options = {});
// The fixture planned as the built-in brain plans it: laid out (MemoryFormat.h), partitioned, rows.
Outcome<LaidOutPlan> fixtureLaidOut(const std::string& name, PlannerOptions options = {});
// The fixture's task forward (the graph names its task file relative to the repository).
Outcome<ForwardSource> fixtureForward(const Graph& graph);
// The whole candidate of a fixture with the default variant, or why there is none.
Outcome<CandidateSource> fixtureCandidate(const std::string& name, PlannerOptions options = {});
// What the plan leaves in PyTorch and why ("op: reason; ..."), for a failing test's message.
std::string leftOf(const Plan& plan);

}  // namespace stitch::agents::builtin::testing
