// The batch as a run-time parameter (RuntimeRows.h) on recorded fixtures: which plans take the rows
// of each call, which keep them fixed and why, and what the generated program then checks and
// computes from the rows.
#include "FixtureGraphs.h"

#include "agents/builtin/plan/RuntimeRows.h"

#include <gtest/gtest.h>

namespace stitch::agents::builtin {
namespace {

using testing::fixtureCandidate;
using testing::fixturePlan;
using testing::loadFixture;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The plan of fixture `name` with its half-batch capture edited by `edit` first.
Plan planWithHalf(const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
  auto j = testing::fixtureJson(name);
  EXPECT_TRUE(j) << name;
  nlohmann::json captured = j.value();
  edit(captured["batch"]["graph"]);
  auto g = parseNormalized(captured);
  EXPECT_TRUE(g) << name;
  Plan plan = makePlan(g.value());
  planRows(plan, g.value(), captured, {}, {});
  return plan;
}

// The plan of fixture `name` as the built-in brain makes it (an empty plan, after a failure, where
// the fixture does not load).
Plan planOf(const std::string& name) {
  auto g = loadFixture(name);
  if (!g) {
    ADD_FAILURE() << g.error().message;
    return {};
  }
  auto plan = fixturePlan(name, g.value());
  if (!plan) ADD_FAILURE() << plan.error().message;
  return plan ? plan.value() : Plan{};
}

// The plan's library calls of one kind.
std::vector<LibraryCall> calls(const Plan& plan, LibraryCall::Kind kind) {
  std::vector<LibraryCall> found;
  for (const auto& k : plan.kernels)
    if (k.library && k.library->kind == kind) found.push_back(*k.library);
  return found;
}

nlohmann::json& tensor(nlohmann::json& graph, const std::string& id) {
  for (auto& t : graph["tensors"])
    if (t["id"] == id) return t;
  throw std::runtime_error("no tensor " + id);
}

TEST(RuntimeRows, AnElementwiseChainTakesTheRowsOfEachCall) {
  auto g = loadFixture("12_elementwise_chain");
  ASSERT_TRUE(g);
  auto plan = fixturePlan("12_elementwise_chain", g.value());
  ASSERT_TRUE(plan);
  ASSERT_TRUE(plan.value().rows) << plan.value().fixedRowsWhy;
  const BatchRows& rows = *plan.value().rows;
  EXPECT_EQ(rows.captured, 4096);
  for (const auto& id : g.value().inputs) EXPECT_EQ(rows.perRow.at(id), 1) << id;
  for (const auto& k : plan.value().kernels) EXPECT_EQ(k.kernel.perRow, 1) << k.id;
  EXPECT_EQ(rows.sizeText(g.value().inputs[0]), "rows");

  auto c = fixtureCandidate("12_elementwise_chain");
  ASSERT_TRUE(c);
  const std::string& cu = c.value().cuda;
  EXPECT_TRUE(contains(cu, "// Rows: any; the program was captured with 4096")) << cu.substr(0, 400);
  // The host check takes the rows from the first tensor that carries them; every kernel's element
  // count and grid come from them.
  EXPECT_TRUE(contains(cu, "rows = t[0].sizes[0] / kPerRow0[0];"));
  EXPECT_TRUE(contains(cu, "const int64_t rows)"));
  EXPECT_TRUE(contains(cu, "sc_blocks("));
  EXPECT_FALSE(contains(cu, "16777216LL")) << "the element count 4096 x 4096 is baked in";
  EXPECT_TRUE(contains(c.value().python, "rows = x.shape[0]"));
  EXPECT_TRUE(contains(c.value().python, "torch.empty((rows, 4096)"));
}

TEST(RuntimeRows, ALinearLayerSetsItsGemmRowsPerCall) {
  const Plan plan = planOf("60_linear_bias");
  ASSERT_TRUE(plan.rows) << plan.fixedRowsWhy;
  const auto gemms = calls(plan, LibraryCall::Kind::Gemm);
  ASSERT_EQ(gemms.size(), 1u);
  EXPECT_EQ(gemms[0].gemm.mPerRow, 1);
  EXPECT_EQ(gemms[0].gemm.batchPerRow, 0);
  auto c = fixtureCandidate("60_linear_bias");
  ASSERT_TRUE(c);
  EXPECT_TRUE(contains(c.value().cuda, "s.m = rows * 1;"));
  EXPECT_TRUE(contains(c.value().cuda, "sc_gemm_for_rows("));
}

TEST(RuntimeRows, ConvolutionsTakeTheImagesOfEachCall) {
  const Plan plan = planOf("91_lenet5");
  ASSERT_TRUE(plan.rows) << plan.fixedRowsWhy;
  const auto convs = calls(plan, LibraryCall::Kind::Conv);
  EXPECT_EQ(convs.size(), 2u);
  for (const auto& c : convs) EXPECT_EQ(c.conv.nPerRow, 1);
  auto c = fixtureCandidate("91_lenet5");
  ASSERT_TRUE(c);
  EXPECT_TRUE(contains(c.value().cuda, "s.in[0] = s.out[0] = (int)(rows * 1);"));
  // Group norm over few long rows splits them over blocks: its partial results are sized for the
  // captured rows, so that program keeps them.
  const Plan norm = planOf("82_conv2d_group_norm");
  EXPECT_FALSE(norm.rows);
  EXPECT_TRUE(contains(norm.fixedRowsWhy, "splits its few long rows")) << norm.fixedRowsWhy;
}

TEST(RuntimeRows, WithoutTheHalfBatchCaptureTheRowsStayFixedAndSaySo) {
  auto g = loadFixture("partial_sort");
  ASSERT_TRUE(g);
  ASSERT_TRUE(g.value().independentRows);
  const Plan plan = planOf("partial_sort");
  EXPECT_FALSE(plan.rows);
  EXPECT_EQ(plan.fixedRowsWhy, "the capture did not record the forward at half the rows");
  // No batch probe at all (a fixture recorded before it): nothing to say.
  const Plan old = planOf("20_mean_dim1");
  EXPECT_FALSE(old.rows);
  EXPECT_EQ(old.fixedRowsWhy, "");
}

TEST(RuntimeRows, AHalfBatchCaptureThatDiffersInMoreThanTheRowsKeepsThemFixed) {
  // Another layout at half the rows: the batch is not the outermost dim of that tensor.
  Plan strides = planWithHalf("12_elementwise_chain", [](nlohmann::json& half) {
    tensor(half, half["inputs"][0].get<std::string>())["strides"] = {1, 2048};
  });
  EXPECT_FALSE(strides.rows);
  EXPECT_TRUE(contains(strides.fixedRowsWhy, "layout changes with the rows")) << strides.fixedRowsWhy;
  // Another size in a dim other than the rows.
  Plan width = planWithHalf("12_elementwise_chain", [](nlohmann::json& half) {
    tensor(half, half["inputs"][0].get<std::string>())["shape"][1] = 2048;
  });
  EXPECT_FALSE(width.rows);
  EXPECT_TRUE(contains(width.fixedRowsWhy, "dim 1 changes with the rows")) << width.fixedRowsWhy;
  // Unchanged, the same fixture takes the rows of each call.
  EXPECT_TRUE(planWithHalf("12_elementwise_chain", [](nlohmann::json&) {}).rows);
}

TEST(RuntimeRows, FewLongRowsSplitOverBlocksKeepTheirRowsFixed) {
  FusedKernel few;
  few.shape = {16, 1 << 20};
  few.reduceBegin = 1;
  few.reduceEnd = 2;
  EXPECT_TRUE(maySplitRows(few));  // partial results sized for 16 rows
  FusedKernel many = few;
  many.shape = {4096, 4096};
  EXPECT_FALSE(maySplitRows(many));
  FusedKernel shortRows = few;
  shortRows.shape = {16, 1024};
  EXPECT_FALSE(maySplitRows(shortRows));
}

}  // namespace
}  // namespace stitch::agents::builtin
