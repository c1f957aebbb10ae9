// nn.LSTM / nn.GRU / nn.RNN as one cuDNN RNN library step (RnnCall): the captured
// aten::_cudnn_rnn node (the fixtures partial_rnn_lstm and rnn_gru_bidirectional, built as a GPU
// captures it) planned between the generated kernels around it, the graph normalization that
// resolves PyTorch's flat weight buffer and a batch_first layout, the configurations that stay in
// PyTorch and why, and the cuDNN v8 calls the coder emits.
#include "FixtureGraphs.h"

#include <gtest/gtest.h>

#include <fstream>

namespace stitch::agents::builtin {
namespace {

using testing::fixtureCandidate;
using testing::leftOf;
using testing::loadFixture;

std::string kinds(const Plan& p) {
  std::string s;
  for (const auto& k : p.kernels)
    s += !k.library ? "K" : k.library->kind == LibraryCall::Kind::Gemm ? "G" : k.library->kind == LibraryCall::Kind::Conv ? "C" : "R";
  return s;
}

Plan planOf(const std::string& fixture, PlannerOptions options = {}) {
  auto g = loadFixture(fixture);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return g.ok() ? makePlan(g.value(), {}, options) : Plan{};
}

// The LSTM fixture with one argument of its _cudnn_rnn node replaced.
Graph lstmGraphWith(const std::string& name, const nlohmann::json& value) {
  std::ifstream in(testing::sourceDir() / "tests/fixtures/graphs/partial_rnn_lstm.json");
  nlohmann::json j = nlohmann::json::parse(in);
  for (auto& n : j["nodes"])
    if (n["op"] == "aten::_cudnn_rnn")
      for (auto& a : n["inputs"])
        if (a["name"] == name) a = {{"name", name}, {"value", value}};
  auto g = parseNormalized(j);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return g.ok() ? std::move(g).value() : Graph{};
}

Plan lstmWith(const std::string& name, const nlohmann::json& value) { return makePlan(lstmGraphWith(name, value)); }

const Node* rnnNode(const Graph& g) {
  for (const Node& n : g.nodes)
    if (n.op == "aten::_cudnn_rnn") return &n;
  return nullptr;
}

TEST(RnnPlan, LstmIsOneCuDnnCallBetweenTheInputCopyAndTheGemm) {
  const Plan p = planOf("partial_rnn_lstm");
  // The batch_first input copied sequence-major (as _cudnn_rnn copies it), the LSTM, then fc on
  // the last step read from the RNN's output through the select's strides.
  ASSERT_EQ(kinds(p), "KRG") << leftOf(p);
  const RnnCall& r = p.kernels[1].library->rnn;
  EXPECT_EQ(r.mode, 2);
  EXPECT_EQ(r.layers, 2);
  EXPECT_EQ(r.directions, 1);
  EXPECT_EQ(r.hiddenSize, 16);
  EXPECT_EQ(r.inputSize, 8);
  EXPECT_EQ(r.seqLength, 5);
  EXPECT_EQ(r.batch, 3);
  EXPECT_EQ(r.weights.size(), 8u);
  EXPECT_EQ(r.weightElements, 3840);
  EXPECT_FALSE(r.cx.empty());
  EXPECT_FALSE(r.cy.empty());
  EXPECT_EQ(p.kernels[0].writes(), std::vector<std::string>{r.input});
  const GemmCall& fc = p.kernels[2].library->gemm;
  EXPECT_EQ(fc.a.tensorId, r.output);
  EXPECT_EQ(fc.a.offset, 4 * 3 * 16);  // out[:, -1, :]: the last step of the [T, N, H] output
  EXPECT_TRUE(fc.bias.has_value());
  EXPECT_NE(p.kernels[1].technique.find("cuDNN RNN LSTM 2 layer(s), hidden 16, input 8"), std::string::npos)
      << p.kernels[1].technique;
  // The initial states drawn in forward stay in PyTorch, and only they.
  for (const auto& u : p.uncovered) {
    if (u.node) {
      EXPECT_EQ(u.op, "aten::randn") << u.reason;
    }
  }
}

TEST(RnnPlan, BidirectionalGruReturnsItsFinalHiddenState) {
  const Plan p = planOf("rnn_gru_bidirectional");
  ASSERT_EQ(kinds(p), "R") << leftOf(p);
  EXPECT_TRUE(p.wholeForward()) << leftOf(p);
  const RnnCall& r = p.kernels[0].library->rnn;
  EXPECT_EQ(r.mode, 3);
  EXPECT_EQ(r.directions, 2);
  EXPECT_TRUE(r.cx.empty());
  EXPECT_TRUE(r.cy.empty());  // a GRU's cy is the empty tensor _cudnn_rnn returns
  EXPECT_EQ(r.weightElements, 2496);
  auto g = loadFixture("rnn_gru_bidirectional");
  EXPECT_EQ(r.hy, g.value().outputs[0]);
  EXPECT_EQ(p.kernels[0].writes(), (std::vector<std::string>{r.output, r.hy}));
  EXPECT_NE(p.kernels[0].technique.find("bidirectional"), std::string::npos);
}

TEST(RnnPlan, WhatCuDnnDoesNotRunAsPyTorchStaysInPyTorchAndSaysWhy) {
  const std::vector<std::pair<std::pair<std::string, nlohmann::json>, std::string>> cases = {
      {{"dropout", 0.5}, "dropout between layers in training mode"},
      {{"batch_sizes", {3, 3, 3, 3, 3}}, "packed sequence"},
      {{"proj_size", 8}, "projections"},
      {{"weight_buf", nullptr}, "not one flat buffer"},
  };
  for (const auto& [arg, why] : cases) {
    const Plan p = lstmWith(arg.first, arg.second);
    EXPECT_EQ(kinds(p).find('R'), std::string::npos) << arg.first;
    bool left = false;
    for (const auto& u : p.uncovered)
      left = left || (u.op == "aten::_cudnn_rnn" && u.reason.find(why) != std::string::npos);
    EXPECT_TRUE(left) << arg.first << ": " << leftOf(p);
  }
}

// An RNN left in PyTorch is issued there with the flat buffer as the same view of its first
// parameter, between the compiled segments.
TEST(RnnPlan, ALeftRnnRunsInPyTorchOnTheSameFlatBuffer) {
  const Graph g = lstmGraphWith("dropout", 0.5);
  auto f = testing::fixtureForward(g);
  ASSERT_TRUE(f.ok()) << f.error().message;
  auto c = generateCandidate(g, makePlan(g), f.value(), Variant{}, "partial_rnn_lstm dropout");
  ASSERT_TRUE(c.ok()) << c.error().message;
  const std::string& py = c.value().python;
  EXPECT_NE(py.find("torch.ops.aten.as_strided.default(self.lstm.weight_ih_l0, [3840], [1], 0)"), std::string::npos) << py;
  EXPECT_NE(py.find("torch.ops.aten._cudnn_rnn.default("), std::string::npos) << py;
}

// Dropout outside training draws nothing: cuDNN runs it.
TEST(RnnPlan, InferenceDropoutIsNoDropout) {
  std::ifstream in(testing::sourceDir() / "tests/fixtures/graphs/partial_rnn_lstm.json");
  nlohmann::json j = nlohmann::json::parse(in);
  for (auto& n : j["nodes"])
    if (n["op"] == "aten::_cudnn_rnn")
      for (auto& a : n["inputs"]) {
        if (a["name"] == "dropout") a["value"] = 0.5;
        if (a["name"] == "train") a["value"] = false;
      }
  auto g = parseNormalized(j);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(kinds(makePlan(g.value())), "KRG");
}

TEST(RnnPlan, TheAlgorithmIsPyTorchsChoice) {
  RnnCall r;
  r.mode = 2;
  r.hiddenSize = 256;  // KernelBench's level3/35_LSTM
  EXPECT_FALSE(r.persistSmallH());
  r.hiddenSize = 192;
  EXPECT_TRUE(r.persistSmallH());
  r.mode = 1;
  r.hiddenSize = 384;
  EXPECT_TRUE(r.persistSmallH());
  r.hiddenSize = 385;
  EXPECT_FALSE(r.persistSmallH());
}

TEST(GraphNormalize, TheFlatWeightBufferIsAViewOfTheFirstParameter) {
  auto parsed = loadFixture("partial_rnn_lstm");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const Graph& g = parsed.value();
  const Node* rnn = rnnNode(g);
  ASSERT_NE(rnn, nullptr);
  const TensorInfo* buf = g.tensor(*rnn->arg("weight_buf")->tensor);
  EXPECT_EQ(buf->viewOf, std::optional<std::string>(rnn->arg("weight")->tensors[0]));
  EXPECT_EQ(g.node(*buf->producer)->op, "aten::as_strided");
  EXPECT_EQ(g.node(*buf->producer)->kind, "view");
  // Sequence-major: the input a contiguous [T, N, I] clone, the captured [N, T, H] output a
  // transposed view of what cuDNN writes.
  EXPECT_EQ(std::get<bool>(rnn->arg("batch_first")->value), false);
  const TensorInfo* x = g.tensor(*rnn->arg("input")->tensor);
  EXPECT_EQ(x->shape, (std::vector<int64_t>{5, 3, 8}));
  EXPECT_TRUE(x->contiguous());
  EXPECT_EQ(g.node(*x->producer)->op, "aten::clone");
  const TensorInfo* y = g.tensor(rnn->outputs[0]);
  EXPECT_EQ(y->shape, (std::vector<int64_t>{5, 3, 16}));
  EXPECT_TRUE(y->contiguous());
  EXPECT_EQ(g.tensor("t17")->viewOf, std::optional<std::string>(y->id));
}

TEST(RnnCoder, CuDnnsV8RnnApiAsPyTorchConfiguresIt) {
  auto c = fixtureCandidate("partial_rnn_lstm");
  ASSERT_TRUE(c.ok()) << c.error().message;
  const std::string& cu = c.value().cuda;
  for (const char* call : {"cudnnSetRNNDescriptor_v8", "CUDNN_RNN_DOUBLE_BIAS", "CUDNN_LINEAR_INPUT",
                           "CUDNN_RNN_PADDED_IO_ENABLED", "CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED",
                           "cudnnGetRNNWeightSpaceSize", "cudnnGetRNNWeightParams", "cudnnGetRNNTempSpaceSizes",
                           "cudnnRNNForward(sc_dnn, r->rnn, CUDNN_FWD_MODE_INFERENCE"})
    EXPECT_NE(cu.find(call), std::string::npos) << call;
  EXPECT_NE(cu.find("{CUDNN_LSTM, 5, 3, 8, 16, 2, 1, 3840LL, CUDNN_RNN_ALGO_PERSIST_STATIC_SMALL_H, CUDNN_FMA_MATH}"),
            std::string::npos);
  EXPECT_EQ(cu.find("CUDNN_DEFAULT_MATH"), std::string::npos);  // exact fp32 unless eager runs TF32
  EXPECT_NE(c.value().python.find("STITCH_PYTORCH_OPS = {\"aten::randn\": 2}"), std::string::npos) << c.value().python;
  PlannerOptions eager;
  eager.convTf32 = true;
  eager.precisionWhy = PrecisionWhy::Eager;
  auto tf32 = fixtureCandidate("partial_rnn_lstm", eager);
  ASSERT_TRUE(tf32.ok()) << tf32.error().message;
  EXPECT_NE(tf32.value().cuda.find("CUDNN_RNN_ALGO_PERSIST_STATIC_SMALL_H, CUDNN_DEFAULT_MATH}"), std::string::npos);
  EXPECT_NE(tf32.value().cuda.find("as eager runs this recurrent layer (cudnn.allow_tf32)"), std::string::npos);
}

TEST(RnnCoder, AGruPassesNoCellState) {
  auto c = fixtureCandidate("rnn_gru_bidirectional");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_NE(c.value().cuda.find("{CUDNN_GRU, 5, 3, 8, 16, 1, 2, 2496LL"), std::string::npos);
  EXPECT_NE(c.value().cuda.find("(const float*)t[1].data, nullptr, w, "), std::string::npos);
}

}  // namespace
}  // namespace stitch::agents::builtin
