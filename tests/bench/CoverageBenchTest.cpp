// Pins the CPU coverage bench's arithmetic on hand-made graphs: the roofline estimate per operator
// (bytes, FLOPs, the floor; views free; convolutions on the TF32 ceiling), the reading of the plan's
// `uncovered` entries, and which operators they claim.
#include "server/CoverageBench.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace stitch::server::coverage;
using stitch::protocol::json;

namespace {

json tensor(const std::string& id, std::vector<int> shape) {
  return {{"id", id}, {"shape", shape}, {"dtype", "float32"}};
}

json node(int id, const std::string& op, const std::vector<std::string>& inputs, const std::string& output, int line,
          const std::string& kind = "compute", json extra = json::array()) {
  json in = json::array();
  for (const auto& t : inputs) in.push_back({{"name", "x"}, {"tensor", t}});
  for (const auto& e : extra) in.push_back(e);
  return {{"id", id}, {"op", op}, {"inputs", in}, {"outputs", {output}}, {"kind", kind},
          {"source", {{"file", "task.py"}, {"line", line}}}};
}

}  // namespace

TEST(CoverageBench, MatmulCostIsTheLargerOfItsBytesAndItsFlops) {
  json g{{"tensors", {tensor("a", {1024, 1024}), tensor("b", {1024, 1024}), tensor("c", {1024, 1024}),
                      tensor("d", {2, 3}), tensor("e", {3, 4}), tensor("f", {2, 4})}},
         {"nodes", {node(0, "aten::mm", {"a", "b"}, "c", 5), node(1, "aten::mm", {"d", "e"}, "f", 6)}}};
  auto costs = estimateCosts(g);
  ASSERT_EQ(costs.size(), 2u);
  EXPECT_EQ(costs[0].op, "mm");
  EXPECT_DOUBLE_EQ(costs[0].flops, 2.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(costs[0].bytes, 3.0 * 1024 * 1024 * 4);
  EXPECT_NEAR(costs[0].us, 2.0 * 1024 * 1024 * 1024 / 66.9e6, 1e-9);  // compute-bound at FP32
  EXPECT_DOUBLE_EQ(costs[1].us, 2.0);                                 // tiny: the per-operator floor
}

// The cost kind comes from the operator registry: linear and matmul are GEMMs (2 M N K FLOPs), an
// operator the registry does not know costs as elementwise (its bytes).
TEST(CoverageBench, TheRegistrysCostKindMakesLinearAndMatmulGemms) {
  json g{{"tensors", {tensor("x", {512, 256}), tensor("w", {1024, 256}), tensor("y", {512, 1024}),
                      tensor("z", {512, 1024})}},
         {"nodes", {node(0, "aten::linear", {"x", "w"}, "y", 3), node(1, "aten::matmul", {"x", "w"}, "y", 4),
                    node(2, "aten::not_a_registered_op", {"y"}, "z", 5)}}};
  auto costs = estimateCosts(g);
  ASSERT_EQ(costs.size(), 3u);
  EXPECT_DOUBLE_EQ(costs[0].flops, 2.0 * 512 * 1024 * 256);
  EXPECT_DOUBLE_EQ(costs[1].flops, 2.0 * 512 * 1024 * 256);
  EXPECT_DOUBLE_EQ(costs[2].flops, 512.0 * 1024);  // one per element written
}

// The add forms take their accumulator first: K is read from the argument the schema calls mat1
// (batch1), not from the accumulator.
TEST(CoverageBench, AnAddFormsLeftMatrixIsItsArgumentMat1) {
  json g{{"tensors", {tensor("bias", {64, 32}), tensor("a", {64, 128}), tensor("b", {128, 32}), tensor("y", {64, 32}),
                      tensor("acc", {4, 64, 32}), tensor("p", {4, 64, 16}), tensor("q", {4, 16, 32}),
                      tensor("z", {4, 64, 32})}},
         {"nodes", {{{"id", 0}, {"op", "aten::addmm"}, {"kind", "compute"}, {"outputs", {"y"}},
                     {"inputs", {{{"name", "self"}, {"tensor", "bias"}}, {{"name", "mat1"}, {"tensor", "a"}},
                                 {{"name", "mat2"}, {"tensor", "b"}}}}},
                    {{"id", 1}, {"op", "aten::baddbmm"}, {"kind", "compute"}, {"outputs", {"z"}},
                     {"inputs", {{{"name", "self"}, {"tensor", "acc"}}, {{"name", "batch1"}, {"tensor", "p"}},
                                 {{"name", "batch2"}, {"tensor", "q"}}}}}}}};
  auto costs = estimateCosts(g);
  ASSERT_EQ(costs.size(), 2u);
  EXPECT_DOUBLE_EQ(costs[0].flops, 2.0 * 64 * 32 * 128);
  EXPECT_DOUBLE_EQ(costs[1].flops, 2.0 * 4 * 64 * 32 * 16);
}

TEST(CoverageBench, ViewsCostNothingAndConvolutionsUseTheTf32Ceiling) {
  json transposed = json::array({json{{"name", "transposed"}, {"value", true}}});
  json forward = json::array({json{{"name", "transposed"}, {"value", false}}});
  json g{{"tensors", {tensor("x", {8, 64, 64, 64}), tensor("w", {128, 64, 3, 3}), tensor("y", {8, 128, 62, 62}),
                      tensor("v", {8, 128 * 62 * 62}), tensor("wt", {64, 32, 3, 3}), tensor("z", {8, 32, 66, 66})}},
         {"nodes", {node(0, "aten::convolution", {"x", "w"}, "y", 3, "compute", forward),
                    node(1, "aten::view", {"y"}, "v", 4, "view"),
                    node(2, "aten::convolution", {"x", "wt"}, "z", 5, "compute", transposed)}}};
  auto costs = estimateCosts(g);
  ASSERT_EQ(costs.size(), 3u);
  const double forwardFlops = 2.0 * 8 * 128 * 62 * 62 * 64 * 9;
  EXPECT_DOUBLE_EQ(costs[0].flops, forwardFlops);
  EXPECT_NEAR(costs[0].us, std::max(forwardFlops / 494.7e6, costs[0].bytes / 3.35e6), 1e-9);
  EXPECT_TRUE(costs[1].view);
  EXPECT_DOUBLE_EQ(costs[1].us, 0.0);
  EXPECT_DOUBLE_EQ(costs[2].flops, 2.0 * 8 * 64 * 64 * 64 * 32 * 9);  // per input element when transposed
}

TEST(CoverageBench, ReadsTheUncoveredEntriesOfAPlan) {
  auto e = parseUncovered("relu_ (line 12): in place on an input: it stays in PyTorch");
  EXPECT_EQ(e.op, "relu_");
  EXPECT_EQ(e.line, 12);
  EXPECT_EQ(e.reason, "in place on an input: it stays in PyTorch");
  e = parseUncovered("aten::_local_scalar_dense: reads a tensor value on the host");
  EXPECT_EQ(e.op, "aten::_local_scalar_dense");
  EXPECT_EQ(e.line, 0);
  EXPECT_EQ(e.reason, "reads a tensor value on the host");
}

TEST(CoverageBench, EachEntryClaimsOneOperatorOfItsNameOnItsLine) {
  json g{{"tensors", {tensor("a", {4}), tensor("b", {4}), tensor("c", {4}), tensor("d", {4}), tensor("e", {4})}},
         {"nodes", {node(0, "aten::relu", {"a"}, "b", 3), node(1, "aten::cat", {"b", "a"}, "c", 4),
                    node(2, "aten::view", {"c"}, "d", 5, "view"), node(3, "aten::relu", {"d"}, "e", 6)}}};
  auto costs = estimateCosts(g);
  // cat on its line, a view left in PyTorch (counts as an operator then), relu on a line it is not
  // on (claims the first relu), and a whole-graph note that claims nothing.
  auto c = measureCoverage(costs, {"cat (line 4): no kernel", "view (line 5): not contiguous", "relu (line 9): x",
                                   "tensor t9: made outside ATen"});
  EXPECT_EQ(c.operators, 4);
  EXPECT_EQ(c.covered, 1);  // the second relu
  EXPECT_DOUBLE_EQ(c.totalUs, 3 * 2.0);
  EXPECT_DOUBLE_EQ(c.coveredUs, 2.0);
  auto all = measureCoverage(costs, {});
  EXPECT_EQ(all.operators, 3);  // views are no operators while covered
  EXPECT_EQ(all.covered, 3);
}
