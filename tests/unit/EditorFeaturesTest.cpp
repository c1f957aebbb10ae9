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
  auto e = server::candidateEdit(s.uri, *s.candidate("c1"), true);
  ASSERT_EQ(e["documentChanges"].size(), 1u);  // the model only: the host writes the program
  EXPECT_EQ(e["documentChanges"][0]["textDocument"]["version"], 3);
  EXPECT_EQ(e["documentChanges"][0]["edits"][0]["range"]["start"]["line"], 10);
  auto plain = server::candidateEdit(s.uri, *s.candidate("c1"), false);
  EXPECT_TRUE(plain["changes"].contains("file:///m.py"));
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

namespace {

// The model of the hover tests: a helper module, then the model class, whose forward's lines 10-11
// (zero-based) are the sample job's profiled lines.
const std::string kModelText =
    "import torch\n"
    "class Helper(torch.nn.Module):\n"
    "    def forward(self, x):\n"
    "        return x\n"
    "\n"
    "class Model(torch.nn.Module):\n"
    "    # one forward\n"
    "    @torch.no_grad()\n"
    "    def forward(self, x):\n"
    "        y = x\n"
    "        x = gelu(x)\n"
    "        return x * 2\n";

}  // namespace

TEST(Hover, TheModelsForwardAndClassLinesSummarizeTheForwardAndItsCandidates) {
  auto s = sample();
  auto md = server::hoverMarkdown(s, 8, kModelText);
  ASSERT_TRUE(md);
  EXPECT_NE(md->find("`Model.forward` · job j1: improved"), std::string::npos) << *md;
  EXPECT_NE(md->find("Whole forward: **2.000 ms** of GPU time"), std::string::npos) << *md;
  EXPECT_NE(md->find("line 11 (75%), line 12 (25%)"), std::string::npos) << *md;
  EXPECT_NE(md->find("candidate c1 *fused gelu·scale*: verified, 1.80× over eager, 1.20× over torch.compile"), std::string::npos) << *md;
  EXPECT_NE(md->find("candidate c2 *vectorized variant*: failed: numerics, nan_inf"), std::string::npos) << *md;
  auto cls = server::hoverMarkdown(s, 5, kModelText);
  ASSERT_TRUE(cls);
  EXPECT_NE(cls->find("`Model` · job j1"), std::string::npos) << *cls;
  // Another module of the file, and lines that are neither profiled nor the model's, say nothing.
  EXPECT_FALSE(server::hoverMarkdown(s, 1, kModelText));
  EXPECT_FALSE(server::hoverMarkdown(s, 2, kModelText));
  EXPECT_FALSE(server::hoverMarkdown(s, 9, kModelText));
}

TEST(Hover, TheForwardSaysWhenNothingWasMeasuredAndPutsTheAcceptedCandidateFirst) {
  auto s = sample();
  s.finished = protocol::JobFinishedParams{"j1", "noImprovement", std::nullopt, std::nullopt, "no GPU", true};
  s.profiles["reference"].timeKind = "cpu";
  s.candidates[0].status = "unverified";
  s.candidates[0].speedupEager = s.candidates[0].speedupCompile = std::nullopt;
  s.candidates[1].status = "accepted";
  auto md = *server::hoverMarkdown(s, 8, kModelText);
  EXPECT_NE(md.find("job j1: not measured (no GPU)"), std::string::npos) << md;
  EXPECT_NE(md.find("of CPU time (no GPU)"), std::string::npos) << md;
  EXPECT_LT(md.find("candidate c2"), md.find("candidate c1")) << md;
  EXPECT_NE(md.find("candidate c2 *vectorized variant*: accepted (never timed)"), std::string::npos) << md;
  EXPECT_NE(md.find("candidate c1 *fused gelu·scale*: unverified: no GPU ran it"), std::string::npos) << md;
  for (auto& c : s.candidates) c.status = "rejected";
  md = *server::hoverMarkdown(s, 8, kModelText);
  EXPECT_NE(md.find("No candidate left: 2 rejected."), std::string::npos) << md;
}

TEST(Hover, TheModelClassIsTheOneTheHarnessLoads) {
  EXPECT_EQ(server::modelClassName(kModelText), "Model");
  const std::string named = "# stitchcuda: model=Helper inputs=make_inputs\n" + kModelText;
  EXPECT_EQ(server::modelClassName(named), "Helper");
  auto s = sample();
  EXPECT_TRUE(server::hoverMarkdown(s, 2, named));   // class Helper
  EXPECT_TRUE(server::hoverMarkdown(s, 3, named));   // its forward
  EXPECT_FALSE(server::hoverMarkdown(s, 6, named));  // class Model is not the model now
}

// The reference profile names the operators the model's lines call; kernels are a candidate's.
TEST(Hover, ListsTheModelsOperatorsAsOperators) {
  auto s = sample();
  s.profiles["reference"].lines[1].kernels = {"aten::mul", "aten::add"};
  auto md = *server::hoverMarkdown(s, 11);
  EXPECT_NE(md.find("reference (eager) operators: `aten::mul` `aten::add`"), std::string::npos) << md;
  EXPECT_NE(server::hoverMarkdown(s, 10)->find("kernels: `vectorized_elementwise_kernel`"), std::string::npos);
}

// The editor's Undo of an Accept puts the document back as it was: the candidate is open again (its
// lens back, Accept valid for the document's new version); Redo makes it accepted again.
TEST(AcceptUndo, UndoReopensTheCandidateAndRedoAcceptsItAgain) {
  auto s = sample();
  const server::AcceptedEdit edit{"j1", "c1", "verified", "before\n", "after\n"};
  s.candidates[0].status = "accepted";
  EXPECT_FALSE(server::undoOrRedoOfAccept(edit, s, "after\n", 4));    // the edit itself
  EXPECT_FALSE(server::undoOrRedoOfAccept(edit, s, "typed\n", 5));    // any other change
  auto undo = server::undoOrRedoOfAccept(edit, s, "before\n", 6);
  ASSERT_TRUE(undo);
  EXPECT_EQ(undo->candidate.id, "c1");
  EXPECT_EQ(undo->candidate.status, "verified");
  EXPECT_EQ(undo->candidate.documentVersion, 6);
  s.apply(*undo);
  EXPECT_EQ(server::codeLenses(s)[0]["command"]["arguments"][0]["candidateId"], "c1");
  EXPECT_FALSE(server::undoOrRedoOfAccept(edit, s, "before\n", 7));  // already open
  auto redo = server::undoOrRedoOfAccept(edit, s, "after\n", 8);
  ASSERT_TRUE(redo);
  EXPECT_EQ(redo->candidate.status, "accepted");
  s.candidates[0].status = "rejected";
  EXPECT_FALSE(server::undoOrRedoOfAccept(edit, s, "before\n", 9));
}
