// Loading of the graph fixtures; see FixtureGraphs.h.
#include "FixtureGraphs.h"

#include "agents/builtin/plan/MemoryFormat.h"
#include "agents/builtin/plan/RuntimeRows.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace stitch::agents::builtin::testing {
namespace {

std::string readFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

std::filesystem::path sourceDir() { return STITCH_SOURCE_DIR; }

std::vector<std::string> fixtureNames() {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(sourceDir() / "tests/fixtures/graphs"))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

Outcome<nlohmann::json> fixtureJson(const std::string& name) {
  const auto path = sourceDir() / "tests/fixtures/graphs" / (name + ".json");
  const std::string text = readFile(path);
  if (text.empty()) return Failure{path.string() + ": missing or empty"};
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return Failure{path.string() + ": not JSON"};
  return j;
}

Outcome<Graph> loadFixture(const std::string& name) {
  auto j = fixtureJson(name);
  if (!j) return j.error();
  return parseNormalized(j.value());
}

Outcome<Plan> fixturePlan(const std::string& name, const Graph& graph, PlannerOptions options) {
  auto j = fixtureJson(name);
  if (!j) return j.error();
  Plan plan = makePlan(graph, {}, options);
  planRows(plan, graph, j.value(), {}, options);
  return plan;
}

Outcome<LaidOutPlan> fixtureLaidOut(const std::string& name, PlannerOptions options) {
  auto j = fixtureJson(name);
  if (!j) return j.error();
  auto g = parseNormalized(j.value());
  if (!g) return g.error();
  return planLaidOut(g.value(), j.value(), {}, options);
}

Outcome<ForwardSource> fixtureForward(const Graph& graph) {
  const std::string text = readFile(sourceDir() / graph.task);
  if (text.empty()) return Failure{graph.task + ": missing task file"};
  return findForward(text);
}

Outcome<CandidateSource> fixtureCandidate(const std::string& name, PlannerOptions options) {
  auto laid = fixtureLaidOut(name, options);
  if (!laid) return laid.error();
  auto f = fixtureForward(laid.value().graph);
  if (!f) return f.error();
  return generateCandidate(laid.value().graph, laid.value().plan, f.value(), Variant{}, name);
}

std::string leftOf(const Plan& plan) {
  std::string left;
  for (const auto& u : plan.uncovered) left += u.op + ": " + u.reason + "; ";
  return left;
}

}  // namespace stitch::agents::builtin::testing
