// Nsight Compute CSV parsing, on the raw-page CSVs recorded on an H200 (fixtures/recorded) and on
// the long form and malformed inputs the parser must refuse clearly.
#include "Fixtures.h"

#include "profiling/NcuCsvParser.h"

#include <gtest/gtest.h>

using namespace stitch::profiling;
using namespace stitch::profiling::testing;

TEST(NcuCsvParser, MemoryBoundCandidateKernelHasEveryCounterTheVerifierReads) {
  auto ks = ncuFixture("ncu_memory_bound.csv");
  ASSERT_EQ(ks.size(), 1u);  // NVTX range: the candidate's one kernel, not warm-up or input set-up
  const KernelMetrics& k = ks[0];
  EXPECT_EQ(k.name.rfind("chain_vec4(", 0), 0u);
  EXPECT_NEAR(*k.durationUs, 23.776, 1e-9);  // "23,776" ns: separators removed, scaled to µs
  EXPECT_NEAR(*k.dramThroughputPct, 74.51, 1e-9);
  EXPECT_TRUE(k.smThroughputPct && k.memoryThroughputPct);
  EXPECT_TRUE(k.achievedOccupancyPct && *k.achievedOccupancyPct > 50);
  EXPECT_EQ(*k.theoreticalOccupancyPct, 100);
  EXPECT_EQ(k.occupancyLimiter, "none");
  EXPECT_EQ(*k.registersPerThread, 31);
  EXPECT_EQ(*k.sharedMemPerBlockBytes, 0);
  EXPECT_EQ(*k.l1HitPct, 0);
  EXPECT_NEAR(*k.l2HitPct, 34.48, 1e-9);
  EXPECT_NEAR(*k.fp32PipePct, 17.07, 1e-9);
  ASSERT_TRUE(k.tensorPipePct);
  EXPECT_NEAR(*k.tensorPipePct, 1.2, 1e-9);  // ncu counts HFMA2.MMA in the tensor pipe; it is what it reported
  EXPECT_EQ(*k.instructionsExecuted, 9109504);
  EXPECT_EQ(*k.dramBytes, 67117056.0 + 17974528.0);
  ASSERT_TRUE(k.fp32Flops);
  ASSERT_GE(k.stalls.size(), 3u);
  EXPECT_EQ(k.stalls[0].reason, "long_scoreboard");
  EXPECT_NEAR(k.stalls[0].cyclesPerIssue, 24.19, 1e-9);
  EXPECT_GE(k.stalls[0].cyclesPerIssue, k.stalls[1].cyclesPerIssue);
  for (const auto& s : k.stalls) EXPECT_NE(s.reason, "selected");
}

TEST(NcuCsvParser, ComputeBoundSgemmShowsRegisterLimitedOccupancyAndBusyFmaPipe) {
  auto ks = ncuFixture("ncu_compute_bound.csv");
  ASSERT_EQ(ks.size(), 1u);
  const KernelMetrics& k = ks[0];
  EXPECT_NE(k.name.find("gemm"), std::string::npos);
  EXPECT_NEAR(*k.durationUs, 2680.704, 1e-6);
  EXPECT_NEAR(*k.dramThroughputPct, 3.07, 1e-9);
  EXPECT_NEAR(*k.theoreticalOccupancyPct, 12.5, 1e-9);
  EXPECT_EQ(k.occupancyLimiter, "registers");  // 1 block per SM by registers, 3 by shared memory
  EXPECT_EQ(*k.registersPerThread, 254);
  EXPECT_EQ(*k.sharedMemPerBlockBytes, 67584);
  EXPECT_NEAR(*k.fp32PipePct, 79.35, 1e-9);
  EXPECT_EQ(*k.tensorPipePct, 0);  // FP32 SGEMM: TF32 is off for matmul by default
  EXPECT_NEAR(*k.l2HitPct, 89.47, 1e-9);
  EXPECT_EQ(*k.instructionsExecuted, 2428305408.0);
  // 4096^3 multiply-adds: 2 * 4096^3 FLOPs, counted from FFMA thread instructions.
  EXPECT_NEAR(*k.fp32Flops / (2.0 * 4096 * 4096 * 4096), 1.0, 0.01);
}

TEST(NcuCsvParser, SmallModelKernelsComeInLaunchOrder) {
  auto ks = ncuFixture("ncu_small_convnet.csv");
  ASSERT_EQ(ks.size(), 6u);
  EXPECT_NE(ks[0].name.find("implicit_convolve_sgemm"), std::string::npos);
  EXPECT_NE(ks[3].name.find("max_pool_forward_nchw"), std::string::npos);
  EXPECT_NE(ks[5].name.find("softmax_warp_forward"), std::string::npos);
  for (std::size_t i = 1; i < ks.size(); ++i) EXPECT_GT(ks[i].id, ks[i - 1].id);
}

TEST(NcuCsvParser, LongFormDetailsPageReadsToo) {
  const char* text =
      "==PROF== Connected to process 1\n"
      "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\","
      "\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
      "\"0\",\"1\",\"python3\",\"h\",\"k1\",\"1\",\"7\",\"(256, 1, 1)\",\"(64, 1, 1)\",\"0\",\"9.0\",\"\","
      "\"gpu__time_duration.sum\",\"usecond\",\"1.50\"\n"
      "\"0\",\"1\",\"python3\",\"h\",\"k1\",\"1\",\"7\",\"(256, 1, 1)\",\"(64, 1, 1)\",\"0\",\"9.0\",\"\","
      "\"launch__registers_per_thread\",\"register/thread\",\"1,024\"\n"
      "\"1\",\"1\",\"python3\",\"h\",\"k2\",\"1\",\"7\",\"(128, 1, 1)\",\"(8, 1, 1)\",\"0\",\"9.0\",\"\","
      "\"gpu__time_duration.sum\",\"msecond\",\"2\"\n";
  auto r = parseNcuCsv(text);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r.value().size(), 2u);
  EXPECT_EQ(r.value()[0].name, "k1");
  EXPECT_EQ(*r.value()[0].durationUs, 1.5);
  EXPECT_EQ(*r.value()[0].registersPerThread, 1024);
  EXPECT_EQ(r.value()[0].gridSize, "(64, 1, 1)");
  EXPECT_EQ(*r.value()[1].durationUs, 2000);
  EXPECT_FALSE(r.value()[1].dramThroughputPct);
}

TEST(NcuCsvParser, TextWithoutATableIsAParseError) {
  auto r = parseNcuCsv("==PROF== Connected\n==WARNING== No kernels were profiled.\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "parse_error");
}

TEST(NcuCsvParser, HeaderWithoutKernelRowsSaysNothingWasProfiled) {
  auto r = parseNcuCsv("\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"nsecond\"\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "no_kernels");
}
