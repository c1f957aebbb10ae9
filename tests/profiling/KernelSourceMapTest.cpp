// Kernel -> operators -> line, and ncu's metrics joined to the trace's kernels (both recorded
// on an H200 from the same small model, in separate processes).
#include "Fixtures.h"

#include "profiling/KernelSourceMap.h"

#include <gtest/gtest.h>

using namespace stitch::profiling;
using namespace stitch::profiling::testing;

TEST(KernelSourceMap, KernelKeyAgreesBetweenCuptiAndNcuSpellings) {
  EXPECT_EQ(kernelKey("chain_vec4(float4 const*, float4 const*, float4*, long)"), "chain_vec4");
  EXPECT_EQ(kernelKey("chain_vec4(const float4 *, const float4 *, float4 *, long)"), "chain_vec4");
  EXPECT_EQ(kernelKey("void at::native::(anonymous namespace)::max_pool_forward_nchw<float, int>(int, float const*)"),
            "max_pool_forward_nchw");
  EXPECT_EQ(kernelKey("void at::<unnamed>::max_pool_forward_nchw<float, int>(T2, const T1 *)"), "max_pool_forward_nchw");
  EXPECT_EQ(kernelKey("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize32x32x8"), "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize32x32x8");
}

TEST(KernelSourceMap, EveryNcuKernelOfTheSmallModelFindsItsLine) {
  auto kernels = mapKernelsToSource(traceFixture("torch_trace_small_convnet.json"), ncuFixture("ncu_small_convnet.csv"));
  ASSERT_EQ(kernels.size(), 6u);
  for (const auto& k : kernels) {
    EXPECT_TRUE(k.metrics) << k.name;
    EXPECT_TRUE(k.line) << k.name;
    EXPECT_GT(k.gpuUs, 0);
    if (k.metrics) {
      EXPECT_EQ(kernelKey(k.metrics->name), kernelKey(k.name));
    }
  }
  EXPECT_EQ(kernels.front().line, 15);
  EXPECT_EQ(kernels.back().line, 18);
}

TEST(KernelSourceMap, UnmatchedNcuKernelsAreLeftOut) {
  KernelMetrics stranger;
  stranger.name = "some_other_kernel(int)";
  auto kernels = mapKernelsToSource(traceFixture("torch_trace_chain_candidate.json"), {stranger});
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_FALSE(kernels[0].metrics);
  EXPECT_NEAR(kernels[0].gpuUs, (24.895 + 25.76 + 25.504) / 3, 1e-6);
}

TEST(KernelSourceMap, RulesReadNcuMetricsWhereMatchedAndTraceTimesElsewhere) {
  auto trace = traceFixture("torch_trace_small_convnet.json");
  auto ncu = ncuFixture("ncu_small_convnet.csv");
  auto joined = kernelMetricsOf(mapKernelsToSource(trace, {ncu.front()}));
  ASSERT_EQ(joined.size(), 6u);
  EXPECT_TRUE(joined[0].dramThroughputPct);  // ncu's row, counters and all
  EXPECT_EQ(joined[0].durationUs, ncu.front().durationUs);
  EXPECT_FALSE(joined[1].dramThroughputPct);  // trace only: a name and a time
  EXPECT_EQ(kernelKey(joined[1].name), kernelKey(ncu[1].name));
  EXPECT_GT(joined[1].durationUs.value_or(0), 0);
}
