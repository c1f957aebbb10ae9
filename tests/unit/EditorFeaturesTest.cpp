// Pins what the editor shows from a job: hover tables, lens titles, actions, edits.
#include "server/EditorFeatures.h"

#include "SampleJob.h"

#include <gtest/gtest.h>

using namespace stitch;

namespace {

agents::JobState sample() {
  agents::JobState s;
  for (const auto& e : test::sampleEvents()) s.apply(e);
  return s;
}

}  // namespace

TEST(Hover, ShowsTimeShareBoundAndKernelsForProfiledLine) {
  auto md = server::hoverMarkdown(sample(), 10);
  ASSERT_TRUE(md);
  EXPECT_NE(md->find("line 11"), std::string::npos);  // one-based for people
  EXPECT_NE(md->find("1.500 ms"), std::string::npos);
  EXPECT_NE(md->find("75.0%"), std::string::npos);
  EXPECT_NE(md->find("memory"), std::string::npos);
  EXPECT_NE(md->find("71% of peak"), std::string::npos);
  EXPECT_NE(md->find("long scoreboard"), std::string::npos);
  EXPECT_NE(md->find("`vectorized_elementwise_kernel`"), std::string::npos);
}

TEST(Hover, SaysWhenTimesAreCpuTimes) {
  auto s = sample();
  s.profiles["reference"].timeKind = "cpu";
  EXPECT_NE(server::hoverMarkdown(s, 10)->find("CPU time (no GPU)"), std::string::npos);
  EXPECT_EQ(server::hoverMarkdown(sample(), 10)->find("CPU time"), std::string::npos);
}

TEST(Hover, NothingForLinesWithoutProfile) { EXPECT_FALSE(server::hoverMarkdown(sample(), 3)); }

TEST(CodeLens, ThreeLensesPerShownCandidateSayingTheirStatus) {
  auto s = sample();
  auto lenses = server::codeLenses(s);
  ASSERT_EQ(lenses.size(), 3u);  // c2 (failed) replaces the same lines as c1: one row for both
  EXPECT_EQ(lenses[0]["command"]["title"], "Accept (1.80×, verified; best of 2)");
  EXPECT_EQ(lenses[0]["command"]["command"], server::kAcceptCommand);
  EXPECT_EQ(lenses[0]["command"]["arguments"][0]["candidateId"], "c1");
  EXPECT_EQ(lenses[1]["command"]["title"], "Reject");
  EXPECT_EQ(lenses[2]["command"]["command"], server::kDiffCommand);
  EXPECT_EQ(lenses[2]["command"]["arguments"][0]["newText"], "        return stitch_ops.gelu_scale(x)\n");
  EXPECT_EQ(lenses[0]["range"]["start"]["line"], 10);
  EXPECT_EQ(server::candidateBadge(s.candidates[1]), "failed: numerics, nan_inf");
}

TEST(CodeLens, UnverifiedCandidateSaysSo) {
  protocol::Candidate c;
  c.status = "unverified";
  EXPECT_EQ(server::candidateBadge(c), "unverified");
  c.status = "verified";
  EXPECT_EQ(server::candidateBadge(c), "verified");  // no speedup measured yet
}

TEST(CodeLens, ClosedCandidatesHaveNoLenses) {
  auto s = sample();
  for (auto& c : s.candidates) c.status = "rejected";
  EXPECT_TRUE(server::codeLenses(s).empty());
}

TEST(CodeAction, OffersCandidatesOverlappingTheRange) {
  auto s = sample();
  EXPECT_EQ(server::codeActions(s, {{11, 0}, {11, 4}}).size(), 2u);
  EXPECT_TRUE(server::codeActions(s, {{0, 0}, {2, 0}}).empty());
  auto a = server::codeActions(s, {{11, 0}, {11, 4}})[0];
  EXPECT_EQ(a["kind"], "refactor.rewrite");
  EXPECT_EQ(a["isPreferred"], true);
}

TEST(CandidateEdit, VersionedWhenTheClientSupportsIt) {
  auto s = sample();
  auto e = server::candidateEdit(s.uri, *s.candidate("c1"), {}, true);
  EXPECT_EQ(e["documentChanges"][0]["textDocument"]["version"], 3);
  EXPECT_EQ(e["documentChanges"][0]["edits"][0]["range"]["start"]["line"], 10);
  auto plain = server::candidateEdit(s.uri, *s.candidate("c1"), {}, false);
  EXPECT_TRUE(plain["changes"].contains("file:///m.py"));
}

TEST(CandidateEdit, CreatesTheProgramFilesBeforeEditingTheModel) {
  auto s = sample();
  auto e = server::candidateEdit(s.uri, *s.candidate("c1"),
                                 {{"file:///stitchcuda_kernels/__init__.py", "loader"}, {"file:///stitchcuda_kernels/m.cu", "cuda"}}, true);
  const auto& changes = e["documentChanges"];
  ASSERT_EQ(changes.size(), 5u);
  EXPECT_EQ(changes[0]["kind"], "create");
  EXPECT_EQ(changes[0]["uri"], "file:///stitchcuda_kernels/__init__.py");
  EXPECT_EQ(changes[0]["options"]["overwrite"], true);
  EXPECT_TRUE(changes[1]["textDocument"]["version"].is_null());
  EXPECT_EQ(changes[1]["edits"][0]["newText"], "loader");
  EXPECT_EQ(changes[1]["edits"][0]["range"]["end"]["line"], 0);
  EXPECT_EQ(changes[3]["edits"][0]["newText"], "cuda");
  EXPECT_EQ(changes[4]["textDocument"]["uri"], "file:///m.py");
}

TEST(CodeLens, VariantsOfOneRangeShareOneRowForTheFastestVerified) {
  agents::JobState s;
  s.jobId = "j";
  s.uri = "file:///m.py";
  auto variant = [](std::string id, std::string status, std::optional<double> speedup) {
    protocol::Candidate c;
    c.id = std::move(id);
    c.status = std::move(status);
    c.speedupEager = speedup;
    c.range = {{4, 0}, {7, 0}};
    return c;
  };
  s.candidates = {variant("c1", "verified", 2.15), variant("c2", "verified", 3.04), variant("c3", "failed", {})};
  auto lenses = server::codeLenses(s);
  ASSERT_EQ(lenses.size(), 3u);  // Accept, Reject, Diff of one candidate
  EXPECT_EQ(lenses[0]["command"]["title"], "Accept (3.04×, verified; best of 3)");
  EXPECT_EQ(lenses[0]["command"]["arguments"][0]["candidateId"], "c2");
  // Every variant is still one code action away.
  EXPECT_EQ(server::codeActions(s, {{5, 0}, {5, 0}}).size(), 3u);

  s.candidates = {variant("c1", "unverified", {}), variant("c2", "unverified", {})};
  EXPECT_EQ(server::codeLenses(s)[0]["command"]["title"], "Accept anyway… (unverified; newest of 2)");
  EXPECT_EQ(server::codeLenses(s)[0]["command"]["arguments"][0]["candidateId"], "c2");
}

// Accept is for verified candidates: another goes through the client's confirmation, which is
// given what it needs to say why (status and failed checks), from the lens and the code action alike.
TEST(CodeLens, AnUnverifiedOrFailedCandidateIsAcceptedOnlyAfterTheClientAsks) {
  auto s = sample();
  for (auto& c : s.candidates) {
    c.status = "failed";
    c.failedChecks = {"output_mismatch"};
  }
  auto lenses = server::codeLenses(s);
  ASSERT_EQ(lenses.size(), 3u);
  const auto& accept = lenses[0]["command"];
  EXPECT_EQ(accept["title"], "Accept anyway… (failed: output_mismatch; newest of 2)");
  EXPECT_EQ(accept["command"], server::kAcceptUnverifiedCommand);
  EXPECT_EQ(accept["arguments"][0]["status"], "failed");
  EXPECT_EQ(accept["arguments"][0]["failedChecks"][0], "output_mismatch");
  EXPECT_EQ(lenses[1]["command"]["command"], server::kRejectCommand);
  EXPECT_EQ(lenses[2]["command"]["command"], server::kDiffCommand);
  for (const auto& a : server::codeActions(s, {{11, 0}, {11, 4}})) {
    EXPECT_EQ(a["command"]["command"], server::kAcceptUnverifiedCommand);
    EXPECT_EQ(a["isPreferred"], false);
  }
}
