// Pins layout as strides (design §8) on the layout fixtures: views (slices, selects, splits,
// unbind) read through their strides and offsets, and concatenations (cat, stack) written by the
// kernels that compute their pieces, copied where no generated kernel does, or read piece by
// piece. The plans and the emitted index expressions are checked here; generated_on_cpu.py runs
// the same candidates on the CPU against their Model.
#include "FixtureGraphs.h"
#include "agents/builtin/lower/Concatenation.h"

#include <fstream>

#include <gtest/gtest.h>

namespace stitch::agents::builtin {
namespace {

struct Fixture {
  Graph graph;
  Plan plan;
  std::string cuda;
};

Fixture fixture(const std::string& name) {
  auto g = testing::loadFixture(name);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  if (!g.ok()) return {};
  auto c = testing::fixtureCandidate(name);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
  return {g.value(), makePlan(g.value()), c.ok() ? c.value().cuda : ""};
}

using testing::leftOf;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Every output of the plan's generated kernels that writes into `tensor`.
std::vector<KernelOutput> writesInto(const Plan& p, const std::string& tensor) {
  std::vector<KernelOutput> r;
  for (const auto& k : p.kernels)
    if (!k.library)
      for (const auto& o : k.kernel.outputs)
        if (o.tensorId == tensor) r.push_back(o);
  return r;
}

int copies(const Plan& p) {
  int n = 0;
  for (const auto& k : p.kernels) n += has(k.technique, "copy into a slice");
  return n;
}

const Node* nodeOf(const Graph& g, const std::string& op) {
  for (const Node& n : g.nodes)
    if (n.op == op) return &n;
  return nullptr;
}

// A piece's slice of a stack has the result's contiguous strides less the stacked dim, and starts
// at its index along it; a cat's pieces start where the earlier ones end.
TEST(Layout, ConcatenationPiecesLieAtTheirSlicesOfTheContiguousResult) {
  auto g = testing::loadFixture("stack_elementwise");
  ASSERT_TRUE(g.ok());
  auto stack = concatenation(g.value(), *nodeOf(g.value(), "aten::stack"));  // [3, 4, 5] x3 at dim 1
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  ASSERT_EQ(stack.value().pieces.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(stack.value().pieces[i].strides, (std::vector<int64_t>{60, 5, 1}));
    EXPECT_EQ(stack.value().pieces[i].offset, 20 * i);
    EXPECT_EQ(stack.value().pieces[i].begin, i);
  }
  auto c = testing::loadFixture("cat_pieces");
  ASSERT_TRUE(c.ok());
  auto cat = concatenation(c.value(), *nodeOf(c.value(), "aten::cat"));  // [2, 3, 4|5|4] at dim 2
  ASSERT_TRUE(cat.ok()) << cat.error().message;
  ASSERT_EQ(cat.value().pieces.size(), 3u);
  EXPECT_EQ(cat.value().pieces[1].strides, (std::vector<int64_t>{39, 13, 1}));
  EXPECT_EQ(cat.value().pieces[1].offset, 4);
  EXPECT_EQ(cat.value().pieces[2].offset, 9);
  EXPECT_EQ(cat.value().pieces[2].end, 13);
}

// SqueezeNet's fire module: each expand branch's bias-and-ReLU kernel writes its result straight
// into its slice of the concatenation (channels 0-4 and 5-11 of 12, 8x8 each), with 16-byte
// stores, and nothing copies.
TEST(Layout, FireModuleBranchesWriteStraightIntoTheirSlicesOfTheConcatenation) {
  const Fixture f = fixture("fire_cat");
  EXPECT_TRUE(f.plan.wholeForward()) << leftOf(f.plan);
  const auto pieces = writesInto(f.plan, f.graph.outputs[0]);
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(pieces[0].offset, 0);
  EXPECT_EQ(pieces[1].offset, 5 * 64);
  EXPECT_EQ(pieces[1].strides, (std::vector<int64_t>{12 * 64, 64, 8, 1}));
  EXPECT_TRUE(pieces[1].vectorStores());
  EXPECT_EQ(copies(f.plan), 0);
  EXPECT_TRUE(has(f.cuda, "int64_t off = (int64_t)320LL;")) << f.cuda;
  EXPECT_TRUE(has(f.cuda, "off += rest * (int64_t)768LL;"));
  EXPECT_TRUE(has(f.cuda, "_ooff0(base)) = make_float4("));
}

// A DenseNet block: the concatenations' pieces are the block's input and convolution outputs, so
// the kernel after each reads every element from its piece, choosing by the channel, and the first
// concatenation (read only by the ReLU before the second convolution) is never written.
TEST(Layout, DenseBlockReadsEachElementOfTheConcatenationFromItsPiece) {
  const Fixture f = fixture("dense_cat");
  EXPECT_TRUE(f.plan.wholeForward()) << leftOf(f.plan);
  const Node* first = nodeOf(f.graph, "aten::cat");
  ASSERT_NE(first, nullptr);
  for (const auto& k : f.plan.kernels)
    for (const auto& w : k.writes()) EXPECT_NE(w, first->outputs[0]) << k.id << " writes the first concatenation";
  // [2, 7, 6, 6]: channels 0-3 from x, 4-6 from the first convolution's [2, 3, 6, 6] output.
  EXPECT_TRUE(has(f.cuda, "(lin / (int64_t)36LL) % (int64_t)7LL;")) << f.cuda;
  EXPECT_TRUE(has(f.cuda, " < (int64_t)4LL ? in0[k2_off0(lin)] : in1[k2_off1(lin)])"));
  EXPECT_TRUE(has(f.cuda, "int64_t off = (int64_t)-144LL;"));  // channel 4 of the result is channel 0 of the piece
  EXPECT_TRUE(has(f.cuda, "off += rest * (int64_t)108LL;"));   // the piece's own batch stride (3·36)
}

// One kernel computes the three stacked results and writes each into its slice; the one the
// forward also reads later is written whole as well.
TEST(Layout, StackedResultsOfOneKernelAreWrittenIntoTheirSlices) {
  const Fixture f = fixture("stack_elementwise");
  EXPECT_TRUE(f.plan.wholeForward()) << leftOf(f.plan);
  const Node* stack = nodeOf(f.graph, "aten::stack");
  const auto pieces = writesInto(f.plan, stack->outputs[0]);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(copies(f.plan), 0);
  const std::string sigmoid = stack->inputs[0].tensors[0];
  EXPECT_EQ(writesInto(f.plan, sigmoid).size(), 1u);  // also read by the add after the stack
  for (const std::string& other : {stack->inputs[0].tensors[1], stack->inputs[0].tensors[2]})
    EXPECT_TRUE(writesInto(f.plan, other).empty()) << other << " is read only by the stack";
  EXPECT_TRUE(has(f.cuda, "int64_t off = (int64_t)40LL;")) << f.cuda;
  EXPECT_TRUE(has(f.cuda, "off += rest * (int64_t)60LL;"));
}

// A piece read only by the concatenation is written only into its slice, one read elsewhere is
// written both ways, and a forward input is copied into its slice by a kernel of its own.
TEST(Layout, PiecesNoGeneratedKernelComputesAreCopiedIntoTheirSlices) {
  const Fixture f = fixture("cat_pieces");
  EXPECT_TRUE(f.plan.wholeForward()) << leftOf(f.plan);
  const Node* cat = nodeOf(f.graph, "aten::cat");
  const auto& pieces = cat->inputs[0].tensors;  // relu(x), y, exp(x)
  EXPECT_TRUE(writesInto(f.plan, pieces[0]).empty());
  EXPECT_EQ(writesInto(f.plan, pieces[2]).size(), 1u);
  EXPECT_EQ(writesInto(f.plan, cat->outputs[0]).size(), 3u);
  EXPECT_EQ(copies(f.plan), 1);
  bool catCounted = false;
  for (const auto& k : f.plan.kernels)
    for (const auto& op : k.operators) catCounted = catCounted || op == "aten::cat";
  EXPECT_TRUE(catCounted);
}

// A row reduction's per-row results are pieces too: each row's mean and max go to their columns
// of [4, 8, 2], stored at the row's place in the slice.
TEST(Layout, PerRowResultsAreWrittenIntoTheirColumnsOfTheConcatenation) {
  const Fixture f = fixture("cat_stats");
  EXPECT_TRUE(f.plan.wholeForward()) << leftOf(f.plan);
  ASSERT_EQ(f.plan.kernels.size(), 1u);
  const auto pieces = writesInto(f.plan, f.graph.outputs[0]);
  ASSERT_EQ(pieces.size(), 2u);
  for (const auto& p : pieces) {
    EXPECT_TRUE(p.perRow);
    EXPECT_EQ(p.strides, (std::vector<int64_t>{16, 2, 1}));
  }
  EXPECT_EQ(pieces[1].offset, 1);
  EXPECT_TRUE(has(f.cuda, "out1[k0_ooff1(row)] = ")) << f.cuda;
}

// A concatenation of forward inputs (one through a transpose) and a stack of inputs, each read by
// the elementwise kernel after it: the transposed piece's strides, its start shifted back.
TEST(Layout, ConcatenatedInputsAreReadThroughTheirOwnStrides) {
  const Fixture f = fixture("cat_inputs");
  EXPECT_TRUE(f.plan.wholeForward()) << leftOf(f.plan);
  EXPECT_EQ(copies(f.plan), 0);
  // y [2, 5, 4] transposed is channels 3-6 of [2, 13, 5]: channel stride 1, width stride 4.
  EXPECT_TRUE(has(f.cuda, "int64_t off = (int64_t)-3LL;")) << f.cuda;
  EXPECT_TRUE(has(f.cuda, "off += (rest % (int64_t)5LL) * (int64_t)4LL;"));
  EXPECT_TRUE(has(f.cuda, "(cat2 < (int64_t)1LL ? in0[k1_off0(lin)] : in1[k1_off1(lin)])"));
}

// KernelBench's exclusive cumsum: the scan of the narrowed input writes into columns 1-36 of the
// result and the zero column's fill kernel into column 0; nothing copies.
TEST(Layout, AScanAndAFillWriteTheirPiecesOfTheConcatenation) {
  const Fixture f = fixture("cumsum_exclusive");
  EXPECT_TRUE(f.plan.wholeForward()) << leftOf(f.plan);
  EXPECT_EQ(copies(f.plan), 0);
  const auto pieces = writesInto(f.plan, f.graph.outputs[0]);  // [4, 37]
  ASSERT_EQ(pieces.size(), 2u);
  std::set<int64_t> offsets;
  for (const auto& p : pieces) {
    EXPECT_EQ(p.strides, (std::vector<int64_t>{37, 1}));
    offsets.insert(p.offset);
  }
  EXPECT_EQ(offsets, (std::set<int64_t>{0, 1}));
  EXPECT_TRUE(has(f.cuda, "blockExclusiveScan<ScanSum>")) << f.cuda;
}

// LSTM gates: the sum is written, and each of its four chunks (unsafe_split views of [3, 24]) is
// read at its offset with the sum's row stride. The chunks' in-place activations are functional.
TEST(Layout, ChunkedGatesAreReadAtTheirOffsetsInTheWrittenSum) {
  const Fixture f = fixture("lstm_gates");
  EXPECT_TRUE(f.plan.wholeForward()) << leftOf(f.plan);
  for (const Node& n : f.graph.nodes) EXPECT_NE(n.kind, "inplace") << n.where();
  ASSERT_EQ(f.plan.kernels.size(), 2u);
  std::set<int64_t> offsets;
  for (const auto& in : f.plan.kernels[1].kernel.inputs)
    if (in.strides == std::vector<int64_t>{24, 1}) offsets.insert(in.offset);
  EXPECT_EQ(offsets, (std::set<int64_t>{0, 6, 12, 18}));
  EXPECT_TRUE(has(f.cuda, "int64_t off = (int64_t)18LL;")) << f.cuda;
}

// A chunk's in-place activation stays in place where its write is seen: the forward also returns
// the chunked sum.
TEST(Layout, AnInPlaceWriteIntoAChunkWhoseBaseIsReadStaysInPlace) {
  std::ifstream text(testing::sourceDir() / "tests/fixtures/graphs/lstm_gates.json");
  auto j = nlohmann::json::parse(text);
  for (const auto& n : j["nodes"])
    if (n["op"] == "aten::unsafe_split.Tensor") j["outputs"].push_back(n["inputs"][0]["tensor"]);
  auto g = parseNormalized(j);
  ASSERT_TRUE(g.ok()) << g.error().message;
  int inPlace = 0;
  for (const Node& n : g.value().nodes) inPlace += n.kind == "inplace";
  EXPECT_EQ(inPlace, 4);
}

// Slices (with a step), selects, unbind and split of the input are read through their strides and
// offsets; split of a computed value closes its kernel, and the next reads the written value.
TEST(Layout, SlicesSelectsAndSplitsAreReadThroughStridesAndOffsets) {
  const Fixture f = fixture("slice_select");
  EXPECT_TRUE(f.plan.wholeForward()) << leftOf(f.plan);
  const std::string x = f.graph.inputs[0];  // [2, 5, 6]
  auto reads = [&](int64_t offset, const std::vector<int64_t>& strides) {
    for (const auto& k : f.plan.kernels)
      for (const auto& in : k.kernel.inputs)
        if (in.tensorId == x && in.offset == offset && in.strides == strides) return true;
    return false;
  };
  EXPECT_TRUE(reads(6, {30, 6, 2}));  // x[:, 1:4, ::2]
  EXPECT_TRUE(reads(0, {30, 0, 2}));  // x.select(1, 0)[:, ::2].unsqueeze(1), broadcast over dim 1
  EXPECT_TRUE(reads(6, {30, 1}));     // unbind(x[:, :2], 1)[1]
  bool exp = false;
  for (const auto& k : f.plan.kernels)
    for (const auto& in : k.kernel.inputs)
      exp = exp || (in.tensorId != x && in.offset == 12 && in.strides == std::vector<int64_t>{30, 1});  // split's hi[:, 0]
  EXPECT_TRUE(exp);
}

// An elementwise result of a transposed view keeps the view's layout, as eager returns it: its
// kernel writes it at those strides, and the GEMM reads it there as a batch of row-major matrices
// (nn.MultiheadAttention's scaled query); before, the bmm stayed in PyTorch.
TEST(Layout, ATransposedElementwiseResultIsWrittenAtItsStridesForTheGemmThatReadsIt) {
  Fixture f = fixture("transposed_scale_bmm");
  EXPECT_EQ(leftOf(f.plan), "");
  const auto written = writesInto(f.plan, "t4");
  ASSERT_EQ(written.size(), 1u);
  EXPECT_EQ(written[0].strides, (std::vector<int64_t>{4, 32, 1}));
  const PlannedKernel* gemm = nullptr;
  for (const auto& k : f.plan.kernels)
    if (k.library && k.library->kind == LibraryCall::Kind::Gemm) gemm = &k;
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->library->gemm.a.tensorId, "t4");
  EXPECT_EQ(gemm->library->gemm.a.batchStride, 4);
  EXPECT_EQ(gemm->library->gemm.a.rowStride, 32);
}

// A returned elementwise result of a transposed input is made with eager's strides.
TEST(Layout, AReturnedTransposedResultIsAllocatedWithEagersStrides) {
  auto c = testing::fixtureCandidate("transposed_result");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(has(c.value().python, "torch.empty_strided((4, 8, 6), (48, 1, 8)")) << c.value().python;
}

// torch.flip reads through the flipped dims' strides negated, from the last element along them;
// a flipped value a kernel computes (an exp, a cumsum) and nothing else reads is written flipped by
// that kernel, through the same strides (Planner's placeFlip): no kernel of its own.
TEST(Layout, FlipsAreReadsThroughNegatedStrides) {
  const Fixture f = fixture("flip_dims");
  EXPECT_TRUE(f.plan.wholeForward()) << leftOf(f.plan);
  // x [2, 3, 4, 5] flipped along dims 1 and 3 starts at channel 2, column 4: 2 * 20 + 4.
  EXPECT_TRUE(has(f.cuda, "int64_t off = (int64_t)44LL;")) << f.cuda;
  EXPECT_TRUE(has(f.cuda, "off += (rest % (int64_t)3LL) * (int64_t)-20LL;"));
  EXPECT_TRUE(has(f.cuda, "off += (rest % (int64_t)5LL) * (int64_t)-1LL;"));
  // flip(cumsum(flip(x, [2]), 2), [2]): the scan writes its result reversed along dim 2.
  int flippedWrites = 0;
  for (const auto& k : f.plan.kernels)
    for (const auto& o : k.kernel.outputs)
      if (o.strided() && o.strides[2] < 0) {
        ++flippedWrites;
        EXPECT_EQ(o.offset, 3 * 5);  // from the last of dim 2's 4 elements
      }
  EXPECT_EQ(flippedWrites, 2);  // the cumsum's, and exp(x)'s before its flip and subtraction
  EXPECT_EQ(f.plan.kernels.size(), 4u);
}

// torch.roll is, per rolled dim, a concatenation of its last `shift` elements and the rest, each a
// slice read through the tensor's strides; a roll along a second dim reads the first one's result.
TEST(Layout, RollsAreConcatenationsOfTwoSlices) {
  const Fixture f = fixture("roll_shift");
  EXPECT_TRUE(f.plan.wholeForward()) << leftOf(f.plan);
  for (const Node& n : f.graph.nodes) EXPECT_NE(n.op, "aten::roll") << n.where();
  // roll(x, 1, 3): the last column, then columns 0-3.
  EXPECT_TRUE(has(f.cuda, "(cat2 < (int64_t)1LL ? in0[k0_off0(lin)] : in1[k0_off1(lin)])")) << f.cuda;
  // A shift of a whole turn is the same tensor: no concatenation.
  int cats = 0;
  for (const Node& n : f.graph.nodes) cats += n.op == "aten::cat";
  EXPECT_EQ(cats, 4);  // one per rolled dim: 1 + 2 + 1, and none for the whole turn
}

// nn.Embedding's lookup and `table[index]` read the table's row the index chose (a negative index
// counted from the end, one outside the table the nearest row), at the element's own coordinates
// within the row.
TEST(Layout, IndexedRowsAreReadAtTheRowTheIndexChose) {
  const Fixture f = fixture("gather_rows");
  EXPECT_TRUE(f.plan.wholeForward()) << leftOf(f.plan);
  EXPECT_TRUE(has(f.cuda, "min(max((int64_t)(v0 < 0 ? v0 + (int64_t)7LL : v0), (int64_t)0), (int64_t)6LL) * (int64_t)3LL]"))
      << f.cuda;
  EXPECT_TRUE(has(f.cuda, "min(max((int64_t)(v0 < 0 ? v0 + (int64_t)10LL : v0), (int64_t)0), (int64_t)9LL) * (int64_t)6LL]"));
}

}  // namespace
}  // namespace stitch::agents::builtin
