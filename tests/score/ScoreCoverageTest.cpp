// Operator coverage as `stitchcuda score` counts it without a plan (the reference's graph and the
// operators the candidate declares it leaves in PyTorch) is the plan's own accounting: over every
// recorded graph fixture, the built-in coder's candidate, read back through its STITCH_PYTORCH_OPS,
// gets the operator counts planCoverage gives its plan, and its time share too wherever the
// declaration names its nodes (a declared operator the graph holds no more of than declared). Where
// it holds more, which of them stayed in PyTorch is not in the declaration.
#include "agents/builtin/plan/Planner.h"
#include "server/ScoreCoverage.h"
#include "tests/builtin/FixtureGraphs.h"

#include <gtest/gtest.h>

#include <regex>

namespace stitch::server {
namespace {

using namespace agents::builtin;

// The generated literal: STITCH_PYTORCH_OPS = {"aten::add_": 1, ...}
std::map<std::string, int> declaredIn(const std::string& python) {
  std::map<std::string, int> out;
  std::smatch m;
  if (!std::regex_search(python, m, std::regex(R"(STITCH_PYTORCH_OPS = \{([^}]*)\})"))) return out;
  const std::string body = m[1];
  const std::regex entry(R"xx("([^"]+)": (\d+))xx");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), entry); it != std::sregex_iterator(); ++it)
    out[(*it)[1]] = std::stoi((*it)[2]);
  return out;
}

TEST(ScoreCoverage, DeclaredOperatorsGiveThePlansCoverageOnEveryFixture) {
  int partial = 0, compared = 0;
  for (const auto& name : testing::fixtureNames()) {
    SCOPED_TRACE(name);
    auto g = testing::loadFixture(name);
    ASSERT_TRUE(g.ok()) << g.error().message;
    auto candidate = testing::fixtureCandidate(name);
    if (!candidate.ok()) continue;  // no candidate for this fixture: nothing was declared
    const auto declared = declaredIn(candidate.value().python);
    const auto plan = planCoverage(g.value(), makePlan(g.value()), {});
    const auto counted = declaredCoverage(g.value(), declared);
    EXPECT_EQ(counted.operators, plan.operators);
    EXPECT_EQ(counted.coveredOperators, plan.coveredOperators);
    EXPECT_EQ(counted.timeBasis, plan.timeBasis);
    std::map<std::string, int> inGraph;
    for (const auto& n : g.value().nodes) ++inGraph[n.op.substr(0, n.op.find('.'))];
    bool named = true;
    for (const auto& [op, count] : declared) named = named && inGraph[op] == count;
    if (named) {
      EXPECT_NEAR(counted.timeShare, plan.timeShare, 1e-12);
    }
    partial += !declared.empty();
    ++compared;
  }
  EXPECT_GE(compared, 50);
  EXPECT_GE(partial, 1);  // the comparison is not only of full coverage
}

TEST(ScoreCoverage, NothingDeclaredIsEverythingCoveredAndUnknownOperatorsCountNothing) {
  // The first fixture with several computing operators; one of them declared left in PyTorch.
  for (const auto& name : testing::fixtureNames()) {
    auto g = testing::loadFixture(name);
    ASSERT_TRUE(g.ok()) << g.error().message;
    const auto all = declaredCoverage(g.value(), {});
    if (all.operators < 3) continue;
    SCOPED_TRACE(name);
    EXPECT_EQ(all.coveredOperators, all.operators);
    EXPECT_DOUBLE_EQ(all.timeShare, 1.0);
    EXPECT_EQ(declaredCoverage(g.value(), {{"aten::not_in_this_graph", 3}}).coveredOperators, all.operators);
    std::string first;
    for (const auto& n : g.value().nodes)
      if (n.kind == "compute" && n.op.find("empty") == std::string::npos) {
        first = n.op.substr(0, n.op.find('.'));
        break;
      }
    const auto one = declaredCoverage(g.value(), {{first, 1}});
    EXPECT_EQ(one.coveredOperators, all.operators - 1) << first;
    EXPECT_LT(one.timeShare, 1.0);
    return;
  }
  FAIL() << "no fixture with three computing operators";
}

}  // namespace
}  // namespace stitch::server
