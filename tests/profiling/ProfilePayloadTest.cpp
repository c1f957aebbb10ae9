// The editor's per-line profile for the reference (recorded profileReference + trace + ncu of the
// small model) and for a candidate (the recorded fast-path candidate trace + its ncu CSV).
#include "Fixtures.h"

#include "profiling/ProfilePayload.h"

#include <gtest/gtest.h>

using namespace stitch::profiling;
using namespace stitch::profiling::testing;

namespace {

ReferenceProfile recordedReference() {
  auto r = parseReferenceProfile(jsonFixture("profile_reference_small_convnet.json"));
  EXPECT_TRUE(r.ok()) << (r ? "" : r.error().message);
  return r ? r.value() : ReferenceProfile{};
}

const stitch::protocol::ProfileLine* lineAt(const stitch::protocol::ProfileParams& p, int zeroBased) {
  for (const auto& l : p.lines)
    if (l.line == zeroBased) return &l;
  return nullptr;
}

}  // namespace

TEST(ProfilePayload, ReferenceLinesCarryBoundStallAndKernels) {
  auto kernels = mapKernelsToSource(traceFixture("torch_trace_small_convnet.json"), ncuFixture("ncu_small_convnet.csv"));
  auto p = referenceProfileParams("job-1", "file:///m.py", recordedReference(), kernels, recordedCeilings());
  EXPECT_EQ(p.subject, "reference");
  EXPECT_EQ(p.timeKind, "gpu");
  ASSERT_EQ(p.lines.size(), 4u);
  const auto* conv = lineAt(p, 14);  // line 15 of the file
  ASSERT_TRUE(conv);
  EXPECT_EQ(conv->bound, "latency");
  ASSERT_TRUE(conv->achievedPct);
  EXPECT_LT(*conv->achievedPct, 100 * kLatencyBoundBelow);
  ASSERT_TRUE(conv->topStall);
  EXPECT_NE(std::find(conv->kernels.begin(), conv->kernels.end(), "implicit_convolve_sgemm"), conv->kernels.end());
  EXPECT_EQ(conv->kernels.size(), 3u);  // convolution, bias add, ReLU
  // Hottest first; the linear layer (59% of the forward) gets inline text with its bound.
  EXPECT_EQ(p.lines.front().line, 16);
  EXPECT_NE(p.lines.front().inlineText.find("60%"), std::string::npos);
  EXPECT_NE(p.lines.front().inlineText.find("latency-bound"), std::string::npos);
  // The softmax line is 3.5% of the forward: no inline text.
  EXPECT_TRUE(lineAt(p, 17)->inlineText.empty());
}

TEST(ProfilePayload, WithoutKernelMapLinesNameTheirOperators) {
  auto p = referenceProfileParams("job-1", "file:///m.py", recordedReference(), {}, std::nullopt);
  const auto* fc = lineAt(p, 16);
  ASSERT_TRUE(fc);
  EXPECT_EQ(fc->kernels, std::vector<std::string>{"aten::addmm"});
  EXPECT_TRUE(fc->bound.empty());
  EXPECT_FALSE(fc->achievedPct);
  EXPECT_EQ(fc->inlineText.find("bound"), std::string::npos);
  EXPECT_DOUBLE_EQ(p.totalGpuTimeUs, recordedReference().totalUs);
}

TEST(ProfilePayload, CandidateKernelsLandOnTheLinesTheyReplace) {
  auto kernels = mapKernelsToSource(traceFixture("torch_trace_chain_candidate.json"), ncuFixture("ncu_memory_bound.csv"));
  CandidatePlacement placement;
  placement.anchorLine = 11;  // `return torch.relu(x * y + 0.5) * torch.sigmoid(x)` in the reference
  auto p = candidateProfileParams("job-1", "file:///m.py", "cand-3", kernels, placement, recordedCeilings());
  EXPECT_EQ(p.subject, "cand-3");
  ASSERT_EQ(p.lines.size(), 1u);
  const auto& l = p.lines[0];
  EXPECT_EQ(l.line, 11);
  EXPECT_DOUBLE_EQ(l.share, 1.0);
  EXPECT_EQ(l.bound, "memory");
  EXPECT_GT(*l.achievedPct, 80);
  EXPECT_NE(l.topStall->find("long_scoreboard"), std::string::npos);
  EXPECT_EQ(l.kernels, std::vector<std::string>{"chain_vec4"});
  EXPECT_NE(l.inlineText.find("memory-bound"), std::string::npos);
  EXPECT_NEAR(p.totalGpuTimeUs, (24.895 + 25.76 + 25.504) / 3, 1e-6);
}

TEST(ProfilePayload, CandidatePlacementPerKernelSplitsTheTime) {
  auto kernels = mapKernelsToSource(traceFixture("torch_trace_small_convnet.json"), {});
  CandidatePlacement placement;
  placement.anchorLine = 14;
  placement.kernelLines["softmax_warp_forward"] = 17;
  auto p = candidateProfileParams("job-1", "file:///m.py", "cand-1", kernels, placement, std::nullopt);
  ASSERT_EQ(p.lines.size(), 2u);
  double shares = 0;
  for (const auto& l : p.lines) shares += l.share;
  EXPECT_NEAR(shares, 1.0, 1e-9);
  EXPECT_EQ(lineAt(p, 17)->kernels, std::vector<std::string>{"softmax_warp_forward"});
}

TEST(ProfilePayload, ReferenceProfileJsonIsValidated) {
  EXPECT_FALSE(parseReferenceProfile(nlohmann::json{{"lines", nlohmann::json::array()}}).ok());
  EXPECT_FALSE(parseReferenceProfile(nlohmann::json{{"totalUs", 1}, {"lines", nlohmann::json::array()}, {"timeKind", "tpu"}}).ok());
  auto r = recordedReference();
  EXPECT_EQ(r.iterations, 5);
  EXPECT_EQ(r.lines.size(), 4u);
  EXPECT_EQ(r.lines[0].ops[0].name, "aten::addmm");
}
