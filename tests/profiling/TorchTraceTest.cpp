// The PyTorch-profiler trace parser, on traces recorded on an H200 by the harness's profileTrace:
// a small model (conv, pool, linear, softmax) and a fast-path candidate launched through ctypes.
#include "Fixtures.h"

#include "profiling/TorchTrace.h"

#include <gtest/gtest.h>

using namespace stitch::profiling;
using namespace stitch::profiling::testing;

namespace {

const TraceActivity* firstKernel(const TraceSummary& s, const std::string& part) {
  for (const auto& a : s.activities)
    if (a.kind == "kernel" && a.name.find(part) != std::string::npos) return &a;
  return nullptr;
}

}  // namespace

TEST(TorchTrace, SmallModelKernelsMapToOperatorsAndLines) {
  TraceSummary s = traceFixture("torch_trace_small_convnet.json");
  EXPECT_EQ(s.iterations, 3);
  EXPECT_DOUBLE_EQ(s.kernelsPerForward, 6);  // warm-up launches (outside the iteration ranges) excluded
  const TraceActivity* conv = firstKernel(s, "implicit_convolve_sgemm");
  ASSERT_TRUE(conv);
  EXPECT_EQ(conv->line, 15);
  ASSERT_FALSE(conv->ops.empty());
  EXPECT_EQ(conv->ops.front(), "aten::conv2d");  // the operator the user wrote, outermost
  EXPECT_EQ(conv->op(), "aten::cudnn_convolution");  // the one that launched it
  const TraceActivity* pool = firstKernel(s, "max_pool_forward_nchw");
  ASSERT_TRUE(pool);
  EXPECT_EQ(pool->line, 16);
  const TraceActivity* gemm = firstKernel(s, "xmma_gemm");
  ASSERT_TRUE(gemm);
  EXPECT_EQ(gemm->line, 17);
  EXPECT_EQ(gemm->op(), "aten::addmm");
  const TraceActivity* softmax = firstKernel(s, "softmax");
  ASSERT_TRUE(softmax);
  EXPECT_EQ(softmax->line, 18);
  EXPECT_GT(conv->registersPerThread.value_or(0), 0);
  EXPECT_EQ(conv->stream, 7);
}

TEST(TorchTrace, PerOperatorAndPerLineTimesAddUpToTheKernels) {
  TraceSummary s = traceFixture("torch_trace_small_convnet.json");
  double kernels = 0, ops = 0, lines = 0;
  for (const auto& k : s.perKernel) kernels += k.gpuUs;
  for (const auto& o : s.perOperator) ops += o.gpuUs;
  for (const auto& l : s.perLine) lines += l.gpuUs;
  EXPECT_GT(kernels, 0);
  // Memsets belong to operators and lines too, so those sums can only be larger.
  EXPECT_GE(ops + 1e-9, kernels);
  EXPECT_NEAR(ops, lines, 1e-6);
  ASSERT_FALSE(s.perOperator.empty());
  EXPECT_EQ(s.perOperator.front().name, "aten::addmm");  // the largest: the linear layer's GEMM
  for (std::size_t i = 1; i < s.perOperator.size(); ++i) EXPECT_GE(s.perOperator[i - 1].gpuUs, s.perOperator[i].gpuUs);
}

TEST(TorchTrace, TimelineFactsAreConsistent) {
  TraceSummary s = traceFixture("torch_trace_small_convnet.json");
  EXPECT_GT(s.wallUs, s.gpuBusyUs);
  EXPECT_GT(s.gpuBusyUs, 0);
  EXPECT_GT(s.idleShare, 0.5);  // a tiny model: the GPU waits on Python and launches most of the time
  EXPECT_LE(s.idleShare, 1.0);
  EXPECT_GT(s.launchApiUs, 0);
  EXPECT_GT(s.launchGapMeanUs, 0);
  EXPECT_GE(s.launchGapMaxUs, s.launchGapMeanUs);
  EXPECT_GT(s.cpuBeforeFirstKernelUs, 0);
  for (std::size_t i = 1; i < s.activities.size(); ++i) EXPECT_LE(s.activities[i - 1].startUs, s.activities[i].startUs);
}

TEST(TorchTrace, CandidateKernelHasNoOperatorButItsLine) {
  TraceSummary s = traceFixture("torch_trace_chain_candidate.json");
  EXPECT_EQ(s.iterations, 3);
  EXPECT_DOUBLE_EQ(s.kernelsPerForward, 1);
  ASSERT_EQ(s.activities.size(), 3u);
  EXPECT_EQ(s.activities[0].name.rfind("chain_vec4", 0), 0u);
  EXPECT_TRUE(s.activities[0].ops.empty());  // launched from the candidate's library through ctypes
  EXPECT_EQ(s.activities[0].line, 14);       // self.lib.forward(...) in model_new.py
  ASSERT_EQ(s.perOperator.size(), 1u);
  EXPECT_EQ(s.perOperator[0].name, "(no operator)");
  EXPECT_NEAR(s.perKernel[0].gpuUs, (24.895 + 25.76 + 25.504) / 3, 1e-6);
}

TEST(TorchTrace, TraceWithoutIterationRangesIsRefused) {
  nlohmann::json t = {{"traceEvents", nlohmann::json::array({{{"ph", "X"}, {"cat", "cpu_op"}, {"name", "aten::add"},
                                                                {"ts", 1}, {"dur", 2}, {"tid", 1}}})}};
  auto r = parseTorchTrace(t);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("stitchcuda.iteration:"), std::string::npos);
}

TEST(TorchTrace, LegacyListTraceIsRefusedWithAReason) {
  auto r = parseTorchTrace(nlohmann::json::array());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "parse_error");
}
