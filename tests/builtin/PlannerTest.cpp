// Pins the built-in Planner on the recorded graph fixtures: which operators fuse into which
// kernel shape, what stays in PyTorch and why, the bytes and gain it expects, and the REPLAN
// mode's one kernel per operator.
#include "FixtureGraphs.h"

#include "agents/builtin/kernel/NodeArgs.h"

#include <gtest/gtest.h>

namespace stitch::agents::builtin {
namespace {

using testing::loadFixture;

Plan planOf(const std::string& fixture, PlannerOptions options = {}) {
  auto g = loadFixture(fixture);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return g.ok() ? makePlan(g.value(), {}, options) : Plan{};
}

int countValues(const FusedKernel& k, ValueOp op) {
  int n = 0;
  for (const auto& v : k.values) n += v.op == op;
  return n;
}

const KernelValue* firstValue(const FusedKernel& k, ValueOp op) {
  for (const auto& v : k.values)
    if (v.op == op) return &v;
  return nullptr;
}

// Every task of our suite; the partial_* fixtures exist to leave operators in PyTorch.
TEST(Planner, EveryFixtureIsCoveredWhole) {
  for (const auto& name : testing::fixtureNames()) {
    if (name.rfind("partial_", 0) == 0) continue;
    const Plan p = planOf(name);
    EXPECT_TRUE(p.wholeForward()) << name << " leaves: " << testing::leftOf(p);
  }
}

// max.dim (its indices unread), mean and logsumexp over size-1 dims return their input's values:
// views, so the forward is the sum's kernel and the add, with nothing left in PyTorch.
TEST(Planner, ReductionsOverSizeOneDimsAreViews) {
  const Plan p = planOf("reduce_size1");
  EXPECT_TRUE(p.wholeForward());
  int reductions = 0;
  for (const auto& k : p.kernels) reductions += !k.library && k.kernel.reduces();
  EXPECT_EQ(reductions, 1);
  auto g = testing::loadFixture("reduce_size1");
  ASSERT_TRUE(g.ok());
  for (const Node& n : g.value().nodes)
    EXPECT_TRUE(n.kind == "view" || n.op == "aten::sum.dim_IntList" || n.op == "aten::relu" || n.op == "aten::add.Tensor")
        << n.where();
}

TEST(Planner, ElementwiseChainIsOneFlatKernelReadingItsInputOnce) {
  const Plan p = planOf("12_elementwise_chain");
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_FALSE(p.kernels[0].kernel.reduces());
  EXPECT_GT(p.kernels[0].operators.size(), 1u);
  EXPECT_LT(p.kernels[0].floorBytes, p.kernels[0].eagerBytes);
}

TEST(Planner, RowSumFloorIsInputPlusOutputBytes) {
  const Plan p = planOf("19_sum_lastdim");
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].floorBytes, (8192LL * 4096 + 8192) * 4);
  EXPECT_NEAR(p.kernels[0].expectedGainPct, 0.0, 1e-9);  // one operator: nothing to save but launches
}

TEST(Planner, ReplanPutsEachOperatorInItsOwnKernel) {
  auto g = loadFixture("12_elementwise_chain");
  ASSERT_TRUE(g.ok());
  int computeNodes = 0;
  for (const auto& n : g.value().nodes) computeNodes += n.kind != "view";
  const Plan p = makePlan(g.value(), {}, PlannerOptions{false});
  EXPECT_EQ(static_cast<int>(p.kernels.size()), computeNodes);
  for (const auto& k : p.kernels) EXPECT_EQ(k.operators.size(), 1u);
  EXPECT_TRUE(p.wholeForward());
}

TEST(Planner, ArgmaxIsAValueIndexRowReductionWritingInt64) {
  const Plan p = planOf("31_argmax_lastdim");
  ASSERT_EQ(p.kernels.size(), 1u);
  const FusedKernel& k = p.kernels[0].kernel;
  EXPECT_TRUE(k.reduces());
  EXPECT_EQ(k.inner(), 1);
  ASSERT_NE(firstValue(k, ValueOp::Reduce), nullptr);
  EXPECT_EQ(firstValue(k, ValueOp::Reduce)->reduce, ReduceKind::ArgMax);
  ASSERT_EQ(k.outputs.size(), 1u);
  EXPECT_EQ(k.outputs[0].dtype, "int64");
  EXPECT_TRUE(k.outputs[0].perRow);
}

TEST(Planner, ArgminOverAMiddleDimIsAColumnReduction) {
  const Plan p = planOf("32_argmin_dim1");
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].kernel.inner(), 256);
  EXPECT_EQ(firstValue(p.kernels[0].kernel, ValueOp::Reduce)->reduce, ReduceKind::ArgMin);
}

TEST(Planner, MaxWithIndicesWritesValuesAndIndicesFromOnePass) {
  const Plan p = planOf("33_max_with_indices");
  ASSERT_EQ(p.kernels.size(), 1u);
  const FusedKernel& k = p.kernels[0].kernel;
  EXPECT_EQ(countValues(k, ValueOp::Reduce), 1);
  ASSERT_EQ(k.outputs.size(), 2u);
  EXPECT_EQ(k.outputs[0].dtype, "float32");
  EXPECT_EQ(k.outputs[1].dtype, "int64");
}

TEST(Planner, AnyAndAllOfComparisonsFuseIntoOneKernelWritingBool) {
  const Plan p = planOf("34_any_all");
  ASSERT_EQ(p.kernels.size(), 1u);
  const FusedKernel& k = p.kernels[0].kernel;
  EXPECT_EQ(countValues(k, ValueOp::Reduce), 2);
  ASSERT_EQ(k.outputs.size(), 2u);
  for (const auto& o : k.outputs) EXPECT_EQ(o.dtype, "bool");
  EXPECT_EQ(k.inputs.size(), 1u);  // x is read once for both
}

// The technique counts the passes the kernel makes: softmax's statistics and a norm's moments each
// fold into one (lower/ReductionPasses.h), whatever reductions the graph spelled them as.
TEST(Planner, TheTechniqueCountsFoldedPasses) {
  const Plan softmax = planOf("24_softmax");
  ASSERT_EQ(softmax.kernels.size(), 1u);
  EXPECT_NE(softmax.kernels[0].technique.find("1 pass(es) over the row (softmax's max and sum of exponentials in one"),
            std::string::npos)
      << softmax.kernels[0].technique;
  const Plan norm = planOf("44_instance_norm");
  ASSERT_FALSE(norm.kernels.empty());
  EXPECT_NE(norm.kernels[0].technique.find("(the norm's mean and squared deviations in one, Welford's)"),
            std::string::npos)
      << norm.kernels[0].technique;
}

TEST(Planner, CumsumAlongTheLastDimIsARowScan) {
  const Plan p = planOf("35_cumsum_lastdim");
  ASSERT_EQ(p.kernels.size(), 1u);
  const FusedKernel& k = p.kernels[0].kernel;
  EXPECT_TRUE(k.scans());
  EXPECT_FALSE(k.reduces());
  EXPECT_EQ(k.inner(), 1);
  EXPECT_EQ(k.reduced(), 1024);
  EXPECT_NE(p.kernels[0].technique.find("row scan"), std::string::npos);
}

TEST(Planner, CumprodAlongAMiddleDimIsAColumnScan) {
  const Plan p = planOf("36_cumprod_dim1");
  ASSERT_EQ(p.kernels.size(), 1u);
  const FusedKernel& k = p.kernels[0].kernel;
  EXPECT_TRUE(k.scans());
  EXPECT_EQ(k.inner(), 512);
  EXPECT_EQ(firstValue(k, ValueOp::Scan)->reduce, ReduceKind::Prod);
  EXPECT_NE(p.kernels[0].technique.find("column scan"), std::string::npos);
}

TEST(Planner, MaxPool2dReadsAWindowWithItsArguments) {
  const Plan p = planOf("37_max_pool2d");
  ASSERT_EQ(p.kernels.size(), 1u);
  const KernelValue* pool = firstValue(p.kernels[0].kernel, ValueOp::Pool);
  ASSERT_NE(pool, nullptr);
  EXPECT_TRUE(pool->pool.max);
  EXPECT_EQ(pool->pool.kernel, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(pool->pool.stride, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(pool->pool.padding, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(p.kernels[0].kernel.shape, (std::vector<int64_t>{16, 64, 64, 64}));
  EXPECT_TRUE(p.kernels[0].kernel.inputs[0].window);
}

TEST(Planner, AvgPoolKeepsCountIncludePadAndCeilModeShape) {
  const Plan p = planOf("38_avg_pool2d");
  ASSERT_EQ(p.kernels.size(), 1u);
  const KernelValue* pool = firstValue(p.kernels[0].kernel, ValueOp::Pool);
  ASSERT_NE(pool, nullptr);
  EXPECT_FALSE(pool->pool.max);
  EXPECT_FALSE(pool->pool.countIncludePad);
  EXPECT_EQ(p.kernels[0].kernel.shape, (std::vector<int64_t>{16, 64, 64, 64}));  // ceil((127+2-3)/2)+1
}

TEST(Planner, MaxPool1dPoolsTheUnsqueezedInput) {
  const Plan p = planOf("39_max_pool1d");
  ASSERT_EQ(p.kernels.size(), 1u);
  const KernelValue* pool = firstValue(p.kernels[0].kernel, ValueOp::Pool);
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pool->pool.kernel, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(pool->pool.inSize, (std::vector<int64_t>{1, 4096}));
}

TEST(Planner, ReluAfterMaxPool3dFusesIntoThePoolingKernel) {
  const Plan p = planOf("41_max_pool3d_relu");
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].operators.size(), 2u);
  EXPECT_EQ(firstValue(p.kernels[0].kernel, ValueOp::Pool)->pool.kernel.size(), 3u);
}

// The convolution's split-off bias and the ReLU are computed inside the max pool's window: the
// generated kernel reads the convolution's output once and writes only the pooled tensor.
TEST(Planner, BiasAndReluBeforeAMaxPoolMoveIntoItsWindow) {
  auto g = loadFixture("81_conv2d_relu_maxpool");
  ASSERT_TRUE(g.ok());
  const Plan p = makePlan(g.value(), {}, {});
  ASSERT_EQ(p.kernels.size(), 2u);
  ASSERT_TRUE(p.kernels[0].library.has_value());
  const FusedKernel& k = p.kernels[1].kernel;
  const KernelValue* pool = firstValue(k, ValueOp::Pool);
  ASSERT_NE(pool, nullptr);
  EXPECT_TRUE(pool->pool.max);
  EXPECT_EQ(pool->input, -1);
  ASSERT_FALSE(pool->pool.prologue.empty());
  EXPECT_EQ(pool->pool.prologue.back().fn, "relu");
  ASSERT_EQ(k.outputs.size(), 1u);
  const TensorInfo* pooled = g.value().tensor(k.outputs[0].tensorId);
  EXPECT_EQ(k.shape, pooled->shape);
  ASSERT_EQ(k.inputs.size(), 2u);  // the convolution's output and the bias, both read at window elements
  const TensorInfo* conv = g.value().tensor(p.kernels[0].library->output());
  EXPECT_EQ(k.inputs[0].tensorId, conv->id);
  EXPECT_TRUE(k.inputs[0].window && k.inputs[1].window);
  for (std::size_t d = 2; d < k.shape.size(); ++d) EXPECT_EQ(k.inputs[1].strides[d], 0);  // [C] bias
  const TensorInfo* bias = g.value().tensor(k.inputs[1].tensorId);
  EXPECT_EQ(p.kernels[1].floorBytes, (conv->numel() + bias->numel() + pooled->numel()) * 4);
  EXPECT_EQ(p.kernels[1].operators.size(), 3u);
  EXPECT_NE(p.kernels[1].technique.find("computing each element from the producer's inputs"), std::string::npos);
}

// An average pool's window sums the computed elements in its own order: the subtract, tanh,
// subtract chain of 96 joins it as a max pool's producer does.
TEST(Planner, AnElementwiseChainBeforeAnAvgPoolMovesIntoItsWindow) {
  const Plan p = planOf("96_conv2d_subtract_tanh_subtract_avgpool");
  ASSERT_EQ(p.kernels.size(), 2u);
  const KernelValue* pool = firstValue(p.kernels[1].kernel, ValueOp::Pool);
  ASSERT_NE(pool, nullptr);
  EXPECT_FALSE(pool->pool.max);
  int tanhs = 0;
  for (const auto& v : pool->pool.prologue) tanhs += v.fn == "tanh";
  EXPECT_EQ(tanhs, 1);
  EXPECT_EQ(countValues(p.kernels[1].kernel, ValueOp::Unary), 0);  // nothing left at the pooled shape
}

// When the producer's result is needed elsewhere (here, also returned), it is written by its own
// kernel and the pool reads it: moving it into the window would leave it unwritten.
TEST(Planner, AProducerNeededElsewhereKeepsItsOwnKernel) {
  auto g = loadFixture("81_conv2d_relu_maxpool");
  ASSERT_TRUE(g.ok());
  Graph graph = g.value();
  const Plan before = makePlan(graph, {}, {});
  ASSERT_EQ(before.kernels.size(), 2u);
  const auto& prologue = firstValue(before.kernels[1].kernel, ValueOp::Pool)->pool.prologue;
  ASSERT_FALSE(prologue.empty());
  std::string relu;
  for (const Node& n : graph.nodes)
    if (baseName(n.op) == "relu" || baseName(n.op) == "relu_") relu = n.outputs[0];
  ASSERT_FALSE(relu.empty());
  graph.outputs.push_back(relu);
  const Plan p = makePlan(graph, {}, {});
  ASSERT_EQ(p.kernels.size(), 3u);
  EXPECT_EQ(p.kernels[1].writes(), std::vector<std::string>{relu});
  const KernelValue* pool = firstValue(p.kernels[2].kernel, ValueOp::Pool);
  ASSERT_NE(pool, nullptr);
  EXPECT_TRUE(pool->pool.prologue.empty());
  EXPECT_EQ(p.kernels[2].kernel.inputs[0].tensorId, relu);
}

// Training BatchNorm after a convolution's bias and ReLU: the kernels of the mean, of the squared
// deviations and of the normalization all read the ReLU's result. Each computes it from the
// convolution's output (no larger) instead of one kernel writing it and three reading it back
// (Recompute.h), and the max pool after the norm still takes the normalization into its window;
// where the forward returns the ReLU's result, or where it calls a math function (a sigmoid in
// its place), it is written.
TEST(Planner, AnElementwiseProducerOtherKernelsReadIsComputedInEach) {
  auto g = loadFixture("training_batch_norm");
  ASSERT_TRUE(g.ok());
  Graph graph = g.value();
  int reluNode = -1;
  std::string relu;
  for (const Node& n : graph.nodes)
    if (baseName(n.op) == "relu" || baseName(n.op) == "relu_") reluNode = n.id, relu = n.outputs[0];
  ASSERT_FALSE(relu.empty());
  auto computing = [&](const Plan& p) {
    int kernels = 0;
    for (const auto& k : p.kernels) {
      const auto& ids = k.kernel.nodeIds;
      kernels += !k.library && std::find(ids.begin(), ids.end(), reluNode) != ids.end();
    }
    return kernels;
  };
  auto written = [&](const Plan& p) {
    for (const auto& k : p.kernels)
      for (const auto& w : k.writes())
        if (w == relu) return true;
    return false;
  };
  const Plan p = makePlan(graph, {}, {});
  EXPECT_EQ(computing(p), 3);
  EXPECT_FALSE(written(p));
  for (const auto& k : p.kernels)
    for (const auto& r : k.reads()) EXPECT_NE(r, relu) << k.id;
  bool said = false;
  for (const auto& k : p.kernels) said = said || k.technique.find("computes its producer (") != std::string::npos;
  EXPECT_TRUE(said);
  bool windowComputes = false;
  for (const auto& k : p.kernels)
    if (const KernelValue* pool = firstValue(k.kernel, ValueOp::Pool)) windowComputes = !pool->pool.prologue.empty();
  EXPECT_TRUE(windowComputes);
  // The ReLU's eager traffic counts in one step's expected gain, not in each of the three.
  int64_t eager = 0, stepsEager = 0;
  for (const Node& n : graph.nodes) {
    if (n.kind == "view") continue;
    for (const Argument& a : n.inputs)
      for (const auto& t : a.tensorIds())
        if (!t.empty()) eager += graph.tensor(t)->bytes();
    for (const auto& o : n.outputs) eager += graph.tensor(o)->bytes();
  }
  for (const auto& k : p.kernels) stepsEager += k.eagerBytes;
  EXPECT_EQ(stepsEager, eager);

  Graph sigmoid = graph;
  for (Node& n : sigmoid.nodes)
    if (n.id == reluNode) n.op = "aten::sigmoid";
  const Plan math = makePlan(sigmoid, {}, {});
  EXPECT_EQ(computing(math), 1);
  EXPECT_TRUE(written(math));

  graph.outputs.push_back(relu);
  const Plan returned = makePlan(graph, {}, {});
  EXPECT_EQ(computing(returned), 1);
  EXPECT_TRUE(written(returned));
}

TEST(Planner, InferenceBatchNormIsElementwiseOverPerChannelParameters) {
  const Plan p = planOf("42_batch_norm_eval");
  ASSERT_EQ(p.kernels.size(), 1u);
  const FusedKernel& k = p.kernels[0].kernel;
  EXPECT_FALSE(k.reduces());
  EXPECT_EQ(k.inputs.size(), 5u);  // x, running mean and var, weight, bias
  for (std::size_t i = 1; i < k.inputs.size(); ++i)
    EXPECT_EQ(k.inputs[i].strides, (std::vector<int64_t>{0, 1, 0, 0})) << i;
}

TEST(Planner, GroupNormRegroupsChannelsIntoOneReducedRangePerGroup) {
  const Plan p = planOf("43_group_norm");
  ASSERT_EQ(p.kernels.size(), 1u);
  const FusedKernel& k = p.kernels[0].kernel;
  EXPECT_EQ(k.shape, (std::vector<int64_t>{16, 8, 8, 128, 128}));
  EXPECT_EQ(k.reduceBegin, 2);
  EXPECT_EQ(k.reduceEnd, 5);
  EXPECT_EQ(countValues(k, ValueOp::Reduce), 2);  // mean, then squared deviations
}

TEST(Planner, InstanceNormIsOneRowKernelOverEachChannel) {
  const Plan p = planOf("44_instance_norm");
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_TRUE(p.kernels[0].kernel.reduces());
  EXPECT_EQ(p.kernels[0].kernel.outer(), 16 * 64);
  EXPECT_EQ(p.kernels[0].kernel.reduced(), 128 * 128);
}

TEST(Planner, L2NormalizeFusesTheNormAndTheDivision) {
  const Plan p = planOf("45_l2_normalize");
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].operators.size(), 2u);
}

TEST(Planner, AWholeTensorNormSplitsFromItsWholeTensorConsumer) {
  const Plan p = planOf("47_frobenius_norm");
  ASSERT_EQ(p.kernels.size(), 2u);
  EXPECT_EQ(p.kernels[0].kernel.outer(), 1);
  EXPECT_FALSE(p.kernels[1].kernel.reduces());
}

TEST(Planner, MseLossIsOneFullReductionOverBothInputs) {
  const Plan p = planOf("48_mse_loss");
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].kernel.outer(), 1);
  EXPECT_EQ(p.kernels[0].floorBytes, 2LL * 4096 * 4096 * 4 + 4);
}

TEST(Planner, KlDivFusesTheRowSoftmaxesAndSumsInASecondKernel) {
  const Plan p = planOf("52_kl_div");
  ASSERT_EQ(p.kernels.size(), 2u);
  EXPECT_EQ(p.kernels[0].kernel.outer(), 8192);
  EXPECT_EQ(p.kernels[1].kernel.outer(), 1);
  EXPECT_GT(p.kernels[0].expectedGainPct, 50.0);
}

// An operator without a generated kernel stays in PyTorch, named with its source line and why.
TEST(Planner, UnknownOperatorIsListedUncoveredWithItsReason) {
  auto g = loadFixture("35_cumsum_lastdim");
  ASSERT_TRUE(g.ok());
  Graph graph = g.value();
  graph.nodes[0].op = "aten::topk";
  const Plan p = makePlan(graph);
  ASSERT_EQ(p.uncovered.size(), 1u);
  EXPECT_EQ(p.uncovered[0].op, "aten::topk");
  EXPECT_NE(p.uncovered[0].reason.find("stays in PyTorch"), std::string::npos);
  ASSERT_TRUE(p.uncovered[0].source.has_value());
  EXPECT_GT(p.uncovered[0].source->line, 0);
  EXPECT_FALSE(p.wholeForward());
}

// Max pooling's indices are not generated: a consumer of them is uncovered, saying so.
TEST(Planner, ConsumedPoolingIndicesAreUncoveredWithTheReason) {
  auto g = loadFixture("39_max_pool1d");
  ASSERT_TRUE(g.ok());
  Graph graph = g.value();
  const Node& pool = graph.nodes[1];
  ASSERT_EQ(pool.outputs.size(), 2u);
  graph.outputs = {pool.outputs[1]};
  const Plan p = makePlan(graph);
  ASSERT_FALSE(p.uncovered.empty());
  EXPECT_NE(p.uncovered[0].reason.find("indices of max pooling"), std::string::npos);
}

// CrossEntropyLoss: the log_softmax's row kernel writes the log-probabilities, and nll_loss is a
// kernel over the samples that picks each one's target class and sums the terms and the count.
// The log_softmax only its nll_loss reads is never written (GraphNormalize's crossEntropy): the
// logits' rows reduce to their log-sum-exps, and the loss picks each sample's logit.
TEST(Planner, CrossEntropysNllLossPicksEachSamplesTargetClass) {
  const Plan p = planOf("cross_entropy");
  EXPECT_TRUE(p.wholeForward()) << testing::leftOf(p);
  int losses = 0, classRowsWritten = 0;
  for (const auto& k : p.kernels) {
    for (const auto& o : k.kernel.outputs) classRowsWritten += o.shape == std::vector<int64_t>{6, 5};
    if (k.library || !firstValue(k.kernel, ValueOp::Gather)) continue;
    ++losses;
    // The terms, the samples counted, and the counted samples' log-sum-exps.
    EXPECT_EQ(countValues(k.kernel, ValueOp::Reduce), 3);
    EXPECT_EQ(k.kernel.shape, (std::vector<int64_t>{6}));
  }
  EXPECT_EQ(losses, 2);
  EXPECT_EQ(classRowsWritten, 1);  // the doubled logits the second loss picks from, not log-probabilities
  auto c = testing::fixtureCandidate("cross_entropy");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_NE(c.value().cuda.find("(int64_t)0), (int64_t)4LL) * (int64_t)1LL]"), std::string::npos) << c.value().cuda;
}

// An as_strided_ that moves no element (a pooled mean's size-1 dims restrided) is a view.
TEST(Planner, ARestrideThatMovesNoElementIsAView) {
  const Plan p = planOf("restrided_pool");
  EXPECT_TRUE(p.wholeForward()) << testing::leftOf(p);
  auto g = loadFixture("restrided_pool");
  ASSERT_TRUE(g.ok());
  for (const Node& n : g.value().nodes) EXPECT_NE(n.op, "aten::as_strided_") << n.where();
}

// F.scaled_dot_product_attention (a GPU's memory-efficient kernel) is attention as PyTorch's math
// path computes it: per call two batched cuBLASLt GEMMs around one row kernel that scales, adds the
// mask and takes the softmax; the causal mask is a triangle of -inf written once.
TEST(Planner, ScaledDotProductAttentionIsTwoBatchedGemmsAroundARowSoftmax) {
  auto g = loadFixture("sdpa_attention");
  ASSERT_TRUE(g.ok()) << g.error().message;
  for (const Node& n : g.value().nodes) EXPECT_EQ(n.op.find("scaled_dot_product"), std::string::npos) << n.where();
  const Plan p = makePlan(g.value());
  EXPECT_TRUE(p.wholeForward()) << testing::leftOf(p);
  int gemms = 0, softmaxes = 0, triangles = 0;
  for (const auto& k : p.kernels) {
    if (k.library) {
      gemms += k.library->kind == LibraryCall::Kind::Gemm;
      continue;
    }
    softmaxes += countValues(k.kernel, ValueOp::Reduce) == 2;  // the row's max, then its sum of exponentials
    triangles += countValues(k.kernel, ValueOp::Triangle);
  }
  EXPECT_EQ(gemms, 6);
  EXPECT_EQ(softmaxes, 3);
  EXPECT_EQ(triangles, 1);
}

}  // namespace
}  // namespace stitch::agents::builtin
