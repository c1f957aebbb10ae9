// The Verifier's one diagnosis + one suggestion: on the recorded kernels, and on synthetic
// metrics that isolate each rule (one fires per round, the first that applies).
#include "Fixtures.h"

#include "profiling/VerifierFeedback.h"

#include <gtest/gtest.h>

using namespace stitch::profiling;
using namespace stitch::profiling::testing;

namespace {

const Evidence* find(const VerifierFeedback& f, const std::string& metric) {
  for (const auto& e : f.evidence)
    if (e.metric == metric) return &e;
  return nullptr;
}

KernelMetrics midKernel() {  // well below both ceilings, long enough not to be launch-bound
  KernelMetrics k;
  k.name = "void fused_kernel<float>(float const*, float*, long)";
  k.gridSize = "(4096, 1, 1)";
  k.durationUs = 100;
  k.dramBytes = 100e-6 * 4242.59e9 * 0.5;  // half the copy ceiling
  k.fp32Flops = 1e6;
  k.achievedOccupancyPct = 80;
  k.theoreticalOccupancyPct = 100;
  k.occupancyLimiter = "none";
  return k;
}

}  // namespace

TEST(VerifierFeedback, MemoryBoundAtCeilingAsksForFewerBytes) {
  auto f = verifierFeedback(ncuFixture("ncu_memory_bound.csv"), recordedCeilings());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->mode, "optimize");
  EXPECT_EQ(f->category, "memory_bound_at_ceiling");
  EXPECT_NE(f->diagnosis.find("chain_vec4"), std::string::npos);
  EXPECT_NE(f->suggestion.find("fuse"), std::string::npos);
  const Evidence* mem = find(*f, "memory_roofline_pct");
  ASSERT_TRUE(mem);
  EXPECT_GT(mem->value, 80);
  EXPECT_TRUE(find(*f, "dram_bytes"));
}

TEST(VerifierFeedback, Fp32SgemmAtCeilingPointsAtTensorCores) {
  auto f = verifierFeedback(ncuFixture("ncu_compute_bound.csv"), recordedCeilings());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->category, "compute_bound_at_ceiling");
  EXPECT_NE(f->suggestion.find("tensor cores"), std::string::npos);
  EXPECT_TRUE(find(*f, "fp32_pipe_pct"));
}

TEST(VerifierFeedback, ManyShortKernelsAreOneLaunchOverheadIssue) {
  auto f = verifierFeedback(ncuFixture("ncu_small_convnet.csv"), recordedCeilings());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->category, "launch_overhead");
  EXPECT_EQ(find(*f, "kernels")->value, 6);
  EXPECT_NE(f->suggestion.find("CUDA graph"), std::string::npos);
}

TEST(VerifierFeedback, RegisterLimitedOccupancyIsNamedWithItsNumbers) {
  KernelMetrics k = midKernel();
  k.dramBytes = 100e-6 * 4242.59e9 * 0.2;  // latency territory
  k.achievedOccupancyPct = 20;
  k.theoreticalOccupancyPct = 25;
  k.occupancyLimiter = "registers";
  k.registersPerThread = 128;
  auto f = verifierFeedback({k}, recordedCeilings());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->category, "occupancy_limited");
  EXPECT_NE(f->diagnosis.find("limited by registers"), std::string::npos);
  EXPECT_NE(f->suggestion.find("__launch_bounds__"), std::string::npos);
  EXPECT_EQ(find(*f, "registers_per_thread")->value, 128);
}

TEST(VerifierFeedback, SmallGridLeavesSmsIdle) {
  KernelMetrics k = midKernel();
  k.dramBytes = 100e-6 * 4242.59e9 * 0.1;
  k.gridSize = "(16, 2, 1)";
  auto f = verifierFeedback({k}, recordedCeilings());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->category, "grid_too_small");
  EXPECT_EQ(find(*f, "grid_blocks")->value, 32);
  EXPECT_EQ(find(*f, "multiprocessors")->value, 132);
}

TEST(VerifierFeedback, OtherwiseTheTopStallSpeaks) {
  KernelMetrics k = midKernel();
  k.stalls = {{"long_scoreboard", 12.5}, {"wait", 2}};
  auto f = verifierFeedback({k}, recordedCeilings());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->category, "stall_long_scoreboard");
  EXPECT_NE(f->diagnosis.find("memory-bound at 50%"), std::string::npos);
  EXPECT_NE(f->diagnosis.find("12.5 cycles"), std::string::npos);
  EXPECT_NE(f->suggestion.find("float4"), std::string::npos);
  EXPECT_EQ(find(*f, "stall_long_scoreboard")->value, 12.5);
}

TEST(VerifierFeedback, TheHottestKernelIsTheSubject) {
  KernelMetrics cold = midKernel(), hot = midKernel();
  cold.name = "cold(int)";
  cold.durationUs = 20;
  hot.name = "hot(int)";
  hot.durationUs = 300;
  hot.stalls = {{"barrier", 3}};
  auto f = verifierFeedback({cold, hot}, recordedCeilings());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->kernel, "hot(int)");
  EXPECT_NEAR(find(*f, "share_of_candidate_gpu_time")->value, 100.0 * 300 / 320, 1e-9);
  EXPECT_FALSE(verifierFeedback({}, recordedCeilings()));
}

// The recorded elementwise_chain verdict's timing: 24.0 µs floor, 48.7 µs measured (49%).
MemoryFloor chainFloor() { return {24.004, 48.656, 100663296, 4193.57}; }

KernelMetrics traceOnly() {  // what the trace knows of a kernel when ncu could not run
  KernelMetrics k;
  k.name = "chain_vec4(float4 const*, float4 const*, float4*, long)";
  k.durationUs = 25.4;
  return k;
}

TEST(VerifierFeedback, WithoutCountersTheMemoryFloorSpeaks) {
  auto f = verifierFeedback({traceOnly()}, recordedCeilings(), chainFloor());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->category, "below_memory_floor");
  EXPECT_NE(f->diagnosis.find("49% of its memory floor"), std::string::npos) << f->diagnosis;
  EXPECT_NE(f->suggestion.find("block size"), std::string::npos);
  ASSERT_TRUE(find(*f, "memory_floor_pct"));
  EXPECT_NEAR(find(*f, "memory_floor_pct")->value, 100 * 24.004 / 48.656, 1e-9);

  MemoryFloor near = chainFloor();
  near.medianUs = 26;
  EXPECT_EQ(verifierFeedback({traceOnly()}, recordedCeilings(), near)->category, "memory_floor_reached");
  // No floor either: nothing but a time to go on.
  EXPECT_EQ(verifierFeedback({traceOnly()}, recordedCeilings())->category, "no_throughput_metrics");
}

TEST(VerifierFeedback, NcuCountersOutrankTheTimingFloor) {
  auto f = verifierFeedback(ncuFixture("ncu_memory_bound.csv"), recordedCeilings(), chainFloor());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->category, "memory_bound_at_ceiling");
  EXPECT_FALSE(find(*f, "memory_floor_pct"));
}

TEST(VerifierFeedback, FailedCandidateGetsItsFirstCheckOnly) {
  std::vector<FailedCheck> failed = {
      {"output_mismatch", "trial 2: 1024 of 8388608 elements differ (max abs 0.5)", "/c/cand.cu", 41, {{"max_abs_err", 0.5, ""}}},
      {"nan_or_inf", "NaN in output 0", std::nullopt, std::nullopt, {}}};
  auto f = failureFeedback(failed);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->mode, "fix");
  EXPECT_EQ(f->category, "output_mismatch");
  EXPECT_NE(f->diagnosis.find("1024 of 8388608"), std::string::npos);
  EXPECT_NE(f->suggestion.find("indexing"), std::string::npos);
  EXPECT_EQ(f->file, "/c/cand.cu");
  EXPECT_EQ(find(*f, "other_failed_checks")->value, 1);
  EXPECT_FALSE(failureFeedback({}));
}

TEST(VerifierFeedback, TheVerifiersOwnFailureIsNoAdviceForTheCandidate) {
  const FailedCheck oom{"verifier_error", "the verifier failed in its correctness stage, not the candidate: out of memory",
                        std::nullopt, std::nullopt, {}};
  EXPECT_FALSE(failureFeedback({oom}));
  EXPECT_FALSE(failureFeedback({{"internal_error", "RuntimeError", std::nullopt, std::nullopt, {}}}));
  EXPECT_FALSE(failureFeedback({{"needs_gpu", "no GPU is visible", std::nullopt, std::nullopt, {}}}));
  auto f = failureFeedback({oom, {"weights_differ", "state_dict entry 0 differs", std::nullopt, std::nullopt, {}}});
  ASSERT_TRUE(f);
  EXPECT_EQ(f->category, "weights_differ");  // the candidate's own finding still speaks
  EXPECT_NE(f->suggestion.find("nothing is copied"), std::string::npos);
  EXPECT_TRUE(isVerifierFailure("cuda_out_of_memory"));
  EXPECT_TRUE(isVerifierFailure("cpu_out_of_memory"));
  EXPECT_TRUE(isVerifierFailure("task_forward_error"));
  EXPECT_FALSE(isVerifierFailure("cuda_sticky_error"));
  EXPECT_FALSE(isVerifierFailure("candidate_runtime_error"));
}

TEST(VerifierFeedback, JsonFormatIsTheDocumentedOne) {
  auto f = verifierFeedback(ncuFixture("ncu_memory_bound.csv"), recordedCeilings());
  ASSERT_TRUE(f);
  auto j = feedbackToJson(*f);
  EXPECT_EQ(j["schema"], "stitchcuda.feedback/1");
  for (const char* key : {"mode", "category", "kernel", "diagnosis", "suggestion", "evidence"}) EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_TRUE(j["evidence"][0].contains("metric") && j["evidence"][0].contains("value") && j["evidence"][0].contains("unit"));
  EXPECT_FALSE(j.contains("file"));
}
