// Pins layout as a whole-program decision (MemoryFormat.h, design §8) on the convolution fixtures:
// which tensors run channels-last, where the conversions are, the convolution calls and kernels
// made for that layout, the plan's account of it, and that every other graph keeps its layout
// byte for byte. generated_on_cpu.py runs such candidates on the CPU against their Model.
#include "FixtureGraphs.h"
#include "agents/builtin/kernel/LaunchShape.h"

#include <gtest/gtest.h>

namespace stitch::agents::builtin {
namespace {

constexpr auto npos = std::string::npos;

PlannerOptions eagerTf32() {
  PlannerOptions o;
  o.convTf32 = true;
  o.precisionWhy = PrecisionWhy::Eager;
  return o;
}

PlannerOptions withLayout(PlannerOptions o, LayoutMode mode) {
  o.layout = mode;
  return o;
}

LaidOutPlan laidOut(const std::string& name, const PlannerOptions& options) {
  auto l = testing::fixtureLaidOut(name, options);
  EXPECT_TRUE(l.ok()) << (l.ok() ? "" : l.error().message);
  return l.ok() ? std::move(l).value() : LaidOutPlan{};
}

std::vector<const LibraryCall*> convolutions(const Plan& p) {
  std::vector<const LibraryCall*> r;
  for (const auto& k : p.kernels)
    if (k.library && k.library->kind == LibraryCall::Kind::Conv) r.push_back(&*k.library);
  return r;
}

int conversions(const Graph& g) {
  int n = 0;
  for (const Node& node : g.nodes)
    n += node.op == "aten::clone" && g.layout.channelsLast.count(node.outputs[0]);
  return n;
}

std::vector<int64_t> nhwc(const std::vector<int64_t>& s) { return {s[0], s[2], s[3], s[1]}; }

// A ResNet basic block (training-mode batch norms, the residual from the forward's input) on
// eager's TF32 convolutions: both convolutions run channels-last on channels-last copies of the
// input and filters, the tensors between them are channels-last and the kernels over them iterate
// channels innermost, storing contiguously; the forward's input and result keep their layout.
TEST(MemoryFormat, AResNetBlockRunsChannelsLastBetweenItsBoundaries) {
  const LaidOutPlan l = laidOut("88_resnet_basic_block", eagerTf32());
  const Graph& g = l.graph;
  ASSERT_FALSE(g.layout.channelsLast.empty());
  for (const auto& id : g.inputs) EXPECT_TRUE(g.tensor(id)->contiguous()) << id;
  for (const auto& id : g.outputs) EXPECT_TRUE(g.tensor(id)->contiguous()) << id;
  EXPECT_EQ(conversions(g), 3);  // the input and both filters
  const auto convs = convolutions(l.plan);
  ASSERT_EQ(convs.size(), 2u) << testing::leftOf(l.plan);
  for (const LibraryCall* c : convs) {
    EXPECT_TRUE(c->conv.channelsLast);
    for (const auto& id : {c->conv.input, c->conv.weight, c->conv.output})
      EXPECT_TRUE(isChannelsLast(*g.tensor(id))) << id;
  }
  // The first convolution's batch norm and ReLU, which end at the second, are its epilogue (in
  // place, channels-last); the second's tail meets the forward's input and writes its result.
  EXPECT_FALSE(convs[0]->conv.epilogue.mean.empty());
  EXPECT_TRUE(convs[0]->conv.epilogue.relu);
  EXPECT_TRUE(convs[1]->conv.epilogue.empty());
  for (const auto& k : l.plan.kernels) {
    EXPECT_NE(k.technique.find("layout: "), npos) << k.id << ": " << k.technique;
    if (k.library) {
      EXPECT_NE(k.technique.find("layout: channels-last (NHWC) for 2 convolution(s) in 1 region(s), where cuDNN's TF32"),
                npos) << k.technique;
      continue;
    }
    for (const auto& out : k.kernel.outputs) {
      const TensorInfo* t = g.tensor(out.tensorId);
      if (out.perRow || !g.layout.channelsLast.count(t->id)) continue;
      EXPECT_FALSE(out.strided()) << k.id << " writes " << t->id << " strided";
      EXPECT_EQ(out.shape, nhwc(t->shape)) << k.id;
    }
  }
  // The program's text says so, and cuDNN is told the layout.
  auto c = testing::fixtureCandidate("88_resnet_basic_block", eagerTf32());
  ASSERT_TRUE(c.ok()) << c.error().message;
  const std::string& cu = c.value().cuda;
  EXPECT_NE(cu.find(", {CUDNN_DEFAULT_MATH, CUDNN_TENSOR_OP_MATH}, 1};"), npos);
  EXPECT_NE(cu.find("s->channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW"), npos);
  EXPECT_NE(cu.find("{200704LL, 1LL, 3584LL, 64LL}"), npos);  // a [32, 64, 56, 56] buffer's NHWC strides, checked
  EXPECT_NE(c.value().python.find("torch.empty_strided((rows, 64, 56, 56), (200704, 1, 3584, 64)"), npos);
}

// A convolution, ReLU and max pool, channels-last as the job asks: the pool iterates in the
// memory order of the convolution's channels-last output it reads and writes the forward's NCHW
// result through its strides, and the program still takes any number of rows.
TEST(MemoryFormat, APoolingTailReadsChannelsLastAndWritesTheForwardsLayout) {
  const LaidOutPlan nchw = laidOut("81_conv2d_relu_maxpool", {});
  const LaidOutPlan l = laidOut("81_conv2d_relu_maxpool", withLayout(eagerTf32(), LayoutMode::ChannelsLast));
  const auto convs = convolutions(l.plan);
  ASSERT_EQ(convs.size(), 1u) << testing::leftOf(l.plan);
  EXPECT_TRUE(convs[0]->conv.channelsLast);
  EXPECT_EQ(conversions(l.graph), 2);
  EXPECT_TRUE(l.graph.tensor(l.graph.outputs[0])->contiguous());
  EXPECT_TRUE(l.plan.rows.has_value()) << l.plan.fixedRowsWhy;
  EXPECT_EQ(l.plan.rows.has_value(), nchw.plan.rows.has_value());
  const PlannedKernel& pool = l.plan.kernels.back();
  EXPECT_NE(pool.technique.find("layout: channels-last: iterates in NHWC order"), npos) << pool.technique;
  ASSERT_EQ(pool.kernel.outputs.size(), 1u);
  EXPECT_TRUE(pool.kernel.outputs[0].strided());
}

// A small CNN's pooling windows over channels-last activations slide over the middle dims of an
// NHWC iteration order (PoolSpec::windowDims), the channel innermost, and store contiguously.
TEST(MemoryFormat, PoolingWindowsSlideOverChannelsLastIterationOrder) {
  const LaidOutPlan l = laidOut("89_small_cnn", eagerTf32());
  ASSERT_EQ(convolutions(l.plan).size(), 3u) << testing::leftOf(l.plan);
  int pools = 0;
  for (const auto& k : l.plan.kernels)
    for (const auto& v : k.kernel.values) {
      if (v.op != ValueOp::Pool || k.kernel.outputs.empty()) continue;
      const KernelOutput& out = k.kernel.outputs[0];
      if (!l.graph.layout.channelsLast.count(out.tensorId)) continue;
      ++pools;
      EXPECT_EQ(v.pool.windowDims, (std::vector<int>{1, 2})) << k.id;
      EXPECT_FALSE(out.strided()) << k.id;
      EXPECT_EQ(out.shape, nhwc(l.graph.tensor(out.tensorId)->shape)) << k.id;
    }
  EXPECT_EQ(pools, 2);
}

// The batch statistics of a channels-last activation become a column reduction over the spatial
// dims with the channels inner (coalesced), where NCHW reduces each (n, c) row; a row over channels
// and spatial dims reads the channels innermost, unless an arg reduction's index needs their order.
TEST(MemoryFormat, ReductionsOverChannelsLastTensorsReduceColumns) {
  auto g = parseGraph(nlohmann::json::parse(R"({"schema": "stitchcuda.graph/1", "nodes": [], "inputs": [], "outputs": [],
      "tensors": [{"id": "x", "shape": [2, 3, 4, 5], "strides": [60, 1, 15, 3], "dtype": "float32", "role": "intermediate"},
                  {"id": "s", "shape": [2, 3, 1, 1], "strides": [3, 1, 1, 1], "dtype": "float32", "role": "intermediate"}]})"));
  ASSERT_TRUE(g.ok()) << g.error().message;
  Graph graph = g.value();
  graph.layout.channelsLast = {"x"};
  FusedKernel k;
  k.shape = {2, 3, 4, 5};
  k.reduceBegin = 2;
  k.reduceEnd = 4;
  k.inputs.push_back({"x", {60, 1, 15, 3}, 0, false, "float32", false});
  KernelValue x;
  x.op = ValueOp::Input;
  x.input = 0;
  x.dimMap = {0, 1, 2, 3};
  KernelValue sum;
  sum.op = ValueOp::Reduce;
  sum.args = {0};
  sum.dimMap = {0, 1, -1, -1};
  k.values = {x, sum};
  KernelOutput s;
  s.tensorId = "s";
  s.value = 1;
  s.perRow = true;
  s.shape = {2, 3, 1, 1};
  k.outputs = {s};
  const FusedKernel r = inMemoryOrder(k, graph);
  EXPECT_EQ(r.shape, (std::vector<int64_t>{2, 4, 5, 3}));
  EXPECT_EQ(r.reduceBegin, 1);
  EXPECT_EQ(r.reduceEnd, 3);
  EXPECT_EQ(r.inner(), 3);
  EXPECT_EQ(r.inputs[0].strides, (std::vector<int64_t>{60, 15, 3, 1}));
  EXPECT_TRUE(r.inputs[0].linear);
  EXPECT_EQ(r.values[1].dimMap, (std::vector<int>{0, 3, -1, -1}));
  EXPECT_EQ(r.outputs[0].shape, s.shape);  // rows still (n, c) in order
  // Over C, H and W (a group norm's row): in NHWC order C comes last. A sum takes it so (read
  // first, innermost); an arg reduction's index counts row-major over (C, H, W), so it keeps the
  // kernel's order.
  FusedKernel row = k;
  row.reduceBegin = 1;
  row.reduceEnd = 4;
  row.values[1].dimMap = {0, -1, -1, -1};
  row.outputs[0].shape = {2, 1, 1, 1};
  const FusedKernel summed = inMemoryOrder(row, graph);
  EXPECT_EQ(summed.shape, (std::vector<int64_t>{2, 4, 5, 3}));
  EXPECT_EQ(summed.reduceBegin, 1);
  EXPECT_EQ(summed.reduceEnd, 4);
  EXPECT_TRUE(summed.inputs[0].linear);
  FusedKernel arg = row;
  arg.values[1].reduce = ReduceKind::ArgMax;
  EXPECT_EQ(inMemoryOrder(arg, graph), arg);
}

// A region's last kernel (NHWC in, NCHW out) keeps the NCHW order of what it writes, and reads
// its input through shared-memory tiles over (C, W); the copy to NHWC before a convolution (NCHW
// in, NHWC out) iterates channels innermost and tiles its input over (W, C). A kernel whose
// operands agree, or whose dims are too short for a tile, stays a plain flat kernel.
TEST(MemoryFormat, ElementwiseKernelsReadAcrossTheirOrderThroughTiles) {
  auto g = parseGraph(nlohmann::json::parse(R"({"schema": "stitchcuda.graph/1", "nodes": [], "inputs": [], "outputs": [],
      "tensors": [{"id": "x", "shape": [2, 16, 8, 32], "strides": [4096, 1, 512, 16], "dtype": "float32", "role": "intermediate"},
                  {"id": "y", "shape": [2, 16, 8, 32], "strides": [4096, 256, 32, 1], "dtype": "float32", "role": "intermediate"}]})"));
  ASSERT_TRUE(g.ok()) << g.error().message;
  Graph graph = g.value();
  graph.layout.channelsLast = {"x"};
  FusedKernel k;
  k.shape = {2, 16, 8, 32};
  k.inputs.push_back({"x", {4096, 1, 512, 16}, 0, false, "float32", false});
  KernelValue x;
  x.op = ValueOp::Input;
  x.input = 0;
  x.dimMap = {0, 1, 2, 3};
  k.values = {x};
  KernelOutput y;
  y.tensorId = "y";
  y.value = 0;
  y.shape = k.shape;
  k.outputs = {y};
  const FusedKernel last = inMemoryOrder(k, graph);
  EXPECT_EQ(last, k);
  const auto t = tiledTranspose(last);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->inner, 3);
  EXPECT_EQ(t->across, 1);
  EXPECT_EQ(t->staged, (std::vector<int>{0}));
  EXPECT_EQ(t->innerTile, 32);  // 32 along the 32 outputs' contiguous elements

  FusedKernel copy = k;  // NCHW in, NHWC out
  copy.inputs[0] = {"y", {4096, 256, 32, 1}, 0, true, "float32", false};
  copy.outputs[0].tensorId = "x";
  copy.outputs[0].strides = {4096, 1, 512, 16};
  graph.layout.channelsLast = {"x"};
  const FusedKernel nhwc = inMemoryOrder(copy, graph);
  EXPECT_EQ(nhwc.shape, (std::vector<int64_t>{2, 8, 32, 16}));
  EXPECT_FALSE(nhwc.outputs[0].strided());
  const auto c = tiledTranspose(nhwc);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->inner, 3);
  EXPECT_EQ(c->across, 2);
  // 16 channels: tiles of 16 along them and 64 along the row, no thread idle in either pass.
  EXPECT_EQ(c->innerTile, 16);
  EXPECT_EQ(c->acrossTile(), 64);

  EXPECT_FALSE(tiledTranspose(copy));  // the input lies in the kernel's order: linear, no tile
  FusedKernel narrow = k;
  narrow.shape = {2, 4, 8, 32};
  narrow.inputs[0].strides = {1024, 1, 128, 4};
  EXPECT_FALSE(tiledTranspose(narrow));  // four channels: too short for a tile
}

// A channels-last convolution folds the tail that stays channels-last (its bias) and leaves to a
// generated kernel the part that writes the forward's NCHW result (the ReLU).
TEST(MemoryFormat, AChannelsLastEpilogueStopsWhereTheForwardsLayoutBegins) {
  const LaidOutPlan l = laidOut("79_conv2d_relu", withLayout(eagerTf32(), LayoutMode::ChannelsLast));
  const auto convs = convolutions(l.plan);
  ASSERT_EQ(convs.size(), 1u) << testing::leftOf(l.plan);
  EXPECT_TRUE(convs[0]->conv.channelsLast);
  EXPECT_FALSE(convs[0]->conv.epilogue.bias.empty());
  EXPECT_FALSE(convs[0]->conv.epilogue.relu);
  EXPECT_TRUE(isChannelsLast(*l.graph.tensor(convs[0]->conv.output)));
  ASSERT_FALSE(l.plan.kernels.back().library);
  EXPECT_EQ(l.plan.kernels.back().kernel.outputs[0].tensorId, l.graph.outputs[0]);
}

// A group norm over a channels-last activation reads each group's channels innermost: its
// group sits between the spatial dims and its channels in NHWC, so only the reduced dims move.
TEST(MemoryFormat, AGroupNormReadsItsChannelsInnermost) {
  const LaidOutPlan l = laidOut("98_conv2d_bias_scale_sigmoid_group_norm", withLayout(eagerTf32(), LayoutMode::ChannelsLast));
  int norms = 0;
  for (const auto& k : l.plan.kernels) {
    if (k.library || !k.kernel.reduces()) continue;
    for (const auto& in : k.kernel.inputs)
      if (l.graph.layout.channelsLast.count(in.tensorId)) {
        ++norms;
        EXPECT_EQ(in.strides.back(), 1) << k.id;
        EXPECT_EQ(k.kernel.reduceEnd, static_cast<int>(k.kernel.shape.size())) << k.id;
      }
  }
  EXPECT_GE(norms, 1);
}

// A stem of 3 input channels keeps NCHW (the direct kernel competes there) and says why; the
// convolution after it runs channels-last, its input converted by the kernel that writes it (the
// batch norm and ReLU after the stem), not by a copy of its own.
TEST(MemoryFormat, AStemKeepsNchwAndTheNextKernelConverts) {
  const LaidOutPlan l = laidOut("87_conv_bn_relu_stem", eagerTf32());
  const auto convs = convolutions(l.plan);
  ASSERT_EQ(convs.size(), 2u) << testing::leftOf(l.plan);
  EXPECT_FALSE(convs[0]->conv.channelsLast);
  EXPECT_TRUE(convs[1]->conv.channelsLast);
  EXPECT_EQ(conversions(l.graph), 1);  // the second filter
  const TensorInfo* in = l.graph.tensor(convs[1]->conv.input);
  EXPECT_TRUE(isChannelsLast(*in));
  for (const Node& n : l.graph.nodes)
    if (n.outputs[0] == in->id) {
      EXPECT_NE(n.op, "aten::clone");
    }
  std::string stem;
  for (const auto& k : l.plan.kernels)
    if (k.library && !k.library->conv.channelsLast) stem = k.technique;
  EXPECT_NE(stem.find("layout: NCHW, a stem of 3 input channel(s), where the direct NCHW kernel competes"), npos) << stem;
}

// The job's layout overrides the planner's choice both ways, and the plan says which it asked.
TEST(MemoryFormat, TheJobsLayoutOverridesThePolicy) {
  const LaidOutPlan nchw = laidOut("88_resnet_basic_block", withLayout(eagerTf32(), LayoutMode::Nchw));
  EXPECT_TRUE(nchw.graph.layout.channelsLast.empty());
  for (const LibraryCall* c : convolutions(nchw.plan)) EXPECT_FALSE(c->conv.channelsLast);
  EXPECT_NE(nchw.plan.kernels[0].technique.find("layout: NCHW, the job asks for NCHW (--layout nchw)"), npos)
      << nchw.plan.kernels[0].technique;
  const LaidOutPlan fp32 = laidOut("88_resnet_basic_block", {});
  EXPECT_NE(fp32.plan.kernels[0].technique.find("layout: NCHW, exact fp32 convolutions"), npos);
  const LaidOutPlan forced = laidOut("88_resnet_basic_block", withLayout({}, LayoutMode::ChannelsLast));
  for (const LibraryCall* c : convolutions(forced.plan)) EXPECT_TRUE(c->conv.channelsLast);
  EXPECT_NE(forced.graph.layout.why.find("as the job asks (--layout channels_last)"), npos) << forced.graph.layout.why;
}

// A graph with no convolution that runs channels-last is planned and generated exactly as before,
// whatever the layout asked; with exact fp32 convolutions (the default), so is every graph.
TEST(MemoryFormat, GraphsWithoutAChannelsLastConvolutionKeepTheirLayoutByteForByte) {
  for (const auto& name : testing::fixtureNames()) {
    SCOPED_TRACE(name);
    auto nchw = testing::fixtureCandidate(name, withLayout({}, LayoutMode::Nchw));
    if (!nchw.ok()) continue;  // fixtures the coder refuses are pinned elsewhere
    auto byDefault = testing::fixtureCandidate(name);
    ASSERT_TRUE(byDefault.ok()) << byDefault.error().message;
    EXPECT_EQ(byDefault.value().cuda, nchw.value().cuda);
    EXPECT_EQ(byDefault.value().python, nchw.value().python);
    auto g = testing::loadFixture(name);
    ASSERT_TRUE(g.ok());
    const bool anyConv = std::any_of(g.value().nodes.begin(), g.value().nodes.end(),
                                     [&](const Node& n) { return n.op.find("convolution") != npos; });
    if (anyConv) continue;
    auto eager = testing::fixtureCandidate(name, withLayout(eagerTf32(), LayoutMode::Nchw));
    ASSERT_TRUE(eager.ok()) << eager.error().message;
    for (const auto& options : {eagerTf32(), withLayout(eagerTf32(), LayoutMode::ChannelsLast)}) {
      auto c = testing::fixtureCandidate(name, options);
      ASSERT_TRUE(c.ok()) << c.error().message;
      EXPECT_EQ(c.value().cuda, eager.value().cuda);
      EXPECT_EQ(c.value().python, eager.value().python);
    }
  }
}

// The refine step's layout trial (LayoutSearch.h) writes the other format's candidate of whatever
// the planner chose: every fixture the coder writes by default, it writes in both formats too, in
// eager's TF32 and in exact fp32.
TEST(MemoryFormat, EveryCandidateIsWrittenInBothLayouts) {
  int convs = 0;
  for (const auto& name : testing::fixtureNames()) {
    auto g = testing::loadFixture(name);
    if (!g.ok() || std::none_of(g.value().nodes.begin(), g.value().nodes.end(),
                                [](const Node& n) { return n.op.find("convolution") != npos; }))
      continue;
    for (const PlannerOptions& base : {eagerTf32(), PlannerOptions{}}) {
      SCOPED_TRACE(name + (base.convTf32 ? ", TF32" : ", fp32"));
      if (!testing::fixtureCandidate(name, base).ok()) continue;  // refused fixtures are pinned elsewhere
      ++convs;
      for (LayoutMode mode : {LayoutMode::Nchw, LayoutMode::ChannelsLast}) {
        auto c = testing::fixtureCandidate(name, withLayout(base, mode));
        EXPECT_TRUE(c.ok()) << c.error().message;
      }
    }
  }
  EXPECT_GT(convs, 20);
}

// By default a lone convolution keeps NCHW, whatever its tail: channels-last would copy the
// forward's input for it, which its faster kernels are not known to repay (the refine step then
// measures channels-last on the next candidate, LayoutSearch.h).
TEST(MemoryFormat, ALoneConvolutionKeepsNchwByDefault) {
  for (const char* name : {"62_conv2d_3x3", "66_conv2d_pointwise", "68_conv3d", "79_conv2d_relu", "81_conv2d_relu_maxpool"}) {
    SCOPED_TRACE(name);
    const LaidOutPlan l = laidOut(name, eagerTf32());
    EXPECT_TRUE(l.graph.layout.channelsLast.empty());
    const auto convs = convolutions(l.plan);
    ASSERT_FALSE(convs.empty());
    EXPECT_NE(l.plan.kernels[0].technique.find("layout: NCHW, as channels-last would only add copies here"), npos)
        << l.plan.kernels[0].technique;
  }
}

// Asked for channels-last (the layout trial), a lone convolution whose result is the forward's runs
// it too, its result written NDHWC and copied into the forward's NCDHW output by a kernel of its
// own: three conversions (input, filter, result). A stem of 3 channels, which the planner's own
// choice leaves to the direct NCHW kernel, runs channels-last when asked. conv_on_cpu.py runs both.
TEST(MemoryFormat, ALoneConvolutionAndAStemRunChannelsLastWhenAsked) {
  for (const bool asked : {false, true}) {
    SCOPED_TRACE(asked ? "asked" : "by default");
    const LaidOutPlan l = laidOut("lone_conv", asked ? withLayout(eagerTf32(), LayoutMode::ChannelsLast) : eagerTf32());
    const auto convs = convolutions(l.plan);
    ASSERT_EQ(convs.size(), 1u) << testing::leftOf(l.plan);
    EXPECT_EQ(convs[0]->conv.channelsLast, asked);
    EXPECT_EQ(conversions(l.graph), asked ? 2 : 0);  // the input and the filter into channels-last
    ASSERT_EQ(l.graph.outputs.size(), 1u);
    EXPECT_TRUE(l.graph.tensor(l.graph.outputs[0])->contiguous());
    if (!asked) continue;
    const Node* back = l.graph.node(*l.graph.tensor(l.graph.outputs[0])->producer);
    ASSERT_NE(back, nullptr);
    EXPECT_EQ(back->op, "aten::clone");  // the result back into NCDHW
    EXPECT_TRUE(l.graph.layout.channelsLast.count(*back->arg("self")->tensor));
  }
  // The stem's 3 -> 32 convolution: NCHW by default (the direct kernel competes), channels-last when asked.
  for (const bool asked : {false, true}) {
    const LaidOutPlan l =
        laidOut("87_conv_bn_relu_stem", asked ? withLayout(eagerTf32(), LayoutMode::ChannelsLast) : eagerTf32());
    const auto convs = convolutions(l.plan);
    ASSERT_EQ(convs.size(), 2u) << testing::leftOf(l.plan);
    EXPECT_EQ(convs[0]->conv.channelsLast, asked);
  }
}

// A transposed convolution runs channels-last when the layout trial asks: cuDNN's backward-data
// call told NHWC for its input, result and a KRSC filter copy (no NHWC<->NCHW conversions of its
// own around the call), the direct gather kernel, which reads NCHW, not among its alternatives,
// and the tail reads the NHWC result and writes the forward's NCHW output. conv_on_cpu.py runs it.
TEST(MemoryFormat, ATransposedConvolutionRunsChannelsLastWhenAsked) {
  const LaidOutPlan l = laidOut("83_conv_transpose2d_tanh_scale", withLayout(eagerTf32(), LayoutMode::ChannelsLast));
  const auto convs = convolutions(l.plan);
  ASSERT_EQ(convs.size(), 1u) << testing::leftOf(l.plan);
  const ConvCall& c = convs[0]->conv;
  EXPECT_TRUE(c.transposed);
  EXPECT_TRUE(c.channelsLast);
  EXPECT_EQ(directDeconvTile(c), 0);
  EXPECT_EQ(conversions(l.graph), 2);  // the input and the filter
  for (const auto& id : l.graph.outputs) EXPECT_TRUE(l.graph.tensor(id)->contiguous()) << id;
  ConvCall nchw = c;
  nchw.channelsLast = false;
  EXPECT_GT(directDeconvTile(nchw), 0);  // the NCHW call keeps the gather kernel as a rival
}

}  // namespace
}  // namespace stitch::agents::builtin
