// Pins the strict reading of model answers: a valid plan becomes the protocol's tasks, and each
// kind of invalid plan or candidate is refused with the exact error the model will be sent.
#include "agents/llm/AnswerParser.h"
#include "agents/llm/AttemptMemory.h"
#include "agents/llm/Secret.h"
#include "agents/llm/UsageMeter.h"

#include <gtest/gtest.h>

using namespace stitch::agents;
using namespace stitch::agents::llm;

namespace {

const PlanContext kContext{{"aten::mul.Tensor", "aten::add.Tensor", "aten::relu", "aten::sigmoid"}, 20};

std::string fenced(const std::string& json) { return "Here is the plan.\n```json\n" + json + "\n```\n"; }

const std::string kPlan = R"({"tasks": [{"id": "k0", "title": "Fuse the chain", "operators": ["aten::mul.Tensor", "add",
  "aten::relu", "sigmoid"], "technique": "one pass, float4", "lines": [12, 12], "expectedGainPct": 70}], "uncovered": []})";

TEST(AnswerParser, ValidPlanBecomesTasks) {
  auto p = parsePlan(fenced(kPlan), kContext);
  ASSERT_TRUE(p) << p.error().message;
  ASSERT_EQ(p.value().tasks.size(), 1u);
  const auto& t = p.value().tasks[0];
  EXPECT_EQ(t.id, "k0");
  EXPECT_EQ(t.status, "active");
  EXPECT_EQ(t.operators, (std::vector<std::string>{"aten::mul.Tensor", "aten::add.Tensor", "aten::relu", "aten::sigmoid"}));
  EXPECT_EQ(t.range.start.line, 11);
  EXPECT_EQ(t.range.end.line, 12);
  EXPECT_EQ(t.expectedGainPct, 70.0);
}

TEST(AnswerParser, BareJsonPlanIsAccepted) { EXPECT_TRUE(parsePlan(kPlan, kContext)); }

struct BadPlan {
  std::string answer;
  std::string error;
};

TEST(AnswerParser, InvalidPlansSayExactlyWhy) {
  const std::vector<BadPlan> cases = {
      {fenced(R"({"tasks": []})"), "\"tasks\" must be a non-empty array"},
      {fenced(R"({"tasks": [{"id": "k0", "title": "t", "technique": "x", "operators": ["aten::gelu"], "lines": [1, 1]}]})"),
       "tasks[0].operators names \"aten::gelu\", which is not in the graph"},
      {fenced(R"({"tasks": [{"id": "k0", "title": "t", "technique": "x", "operators": ["relu"], "lines": [0, 30]}]})"),
       "tasks[0].lines [0, 30] is not a range inside the file's 20 lines"},
      {fenced(R"({"tasks": [{"id": "k0", "title": "t", "technique": "x", "operators": ["relu"]}]})"),
       "tasks[0].lines must be [first, last]"},
      {fenced(R"({"tasks": [{"id": "k0", "title": "", "technique": "x", "operators": ["relu"], "lines": [1, 1]}]})"),
       "tasks[0].title must be a non-empty string"},
      {fenced(R"({"tasks": [{"id": "k0", "title": "t", "technique": "x", "operators": ["relu", "sigmoid", "mul", "add"],
          "lines": [1, 1], "expectedGainPct": 250}]})"),
       "tasks[0].expectedGainPct must be a number from 0 to 100"},
      {fenced(R"({"tasks": [{"id": "k0", "title": "t", "technique": "x", "operators": ["relu"], "lines": [1, 1]}]})"),
       "the graph's operator aten::add.Tensor is in no task and not listed in \"uncovered\""},
      {fenced(R"({"tasks": [{"id": "k0", "title": "t", "technique": "x", "operators": ["relu"], "lin)"),
       "the plan is not valid JSON"},
      {"```json\n{\"tasks\": [", "the code block opened at line 1 (```json) is never closed"},
      {fenced(kPlan) + fenced(kPlan), "expected exactly one ```json block, found 2"},
  };
  for (const auto& c : cases) {
    auto p = parsePlan(c.answer, kContext);
    ASSERT_FALSE(p) << c.answer;
    EXPECT_NE(p.error().message.find(c.error), std::string::npos) << p.error().message;
  }
}

TEST(AnswerParser, UncoveredEntriesCountAsCovered) {
  auto p = parsePlan(fenced(R"({"tasks": [{"id": "k0", "title": "t", "technique": "x", "operators": ["mul", "add", "relu"],
      "lines": [1, 2]}], "uncovered": ["aten::sigmoid (line 12): kept in PyTorch"]})"), kContext);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p.value().uncovered, std::vector<std::string>{"aten::sigmoid (line 12): kept in PyTorch"});
}

const std::string kCuda = "#include \"stitch_abi.h\"\nextern \"C\" int stitch_forward(const StitchTensor* t, int32_t n, cudaStream_t s) { return 0; }\n";
const std::string kPython =
    "import torch\nfrom stitchcuda_harness.abi import load_library\nclass ModelNew(torch.nn.Module):\n"
    "    def __init__(self):\n        super().__init__()\n        self.lib = load_library(__stitch_library__)\n"
    "    def forward(self, x):\n        out = torch.empty_like(x)\n        self.lib.forward(x, out)\n        return out\n";

std::string candidate(const std::string& cuda, const std::string& python) {
  return "Strategy: one fused pass\n```cuda candidate.cu\n" + cuda + "```\n\n```python model_new.py\n" + python + "```\n";
}

TEST(AnswerParser, CandidateGivesBothFilesAndTheStrategy) {
  auto c = parseCandidate(candidate(kCuda, kPython));
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c.value().cuda, kCuda);
  EXPECT_EQ(c.value().python, kPython);
  EXPECT_EQ(c.value().strategy, "one fused pass");
}

TEST(AnswerParser, InvalidCandidatesSayExactlyWhy) {
  const std::vector<BadPlan> cases = {
      {"```cuda\n" + kCuda + "```\n", "found 1 CUDA and 0 Python block(s)"},
      {candidate("extern \"C\" int stitch_forward() {}\n", kPython), "does not #include \"stitch_abi.h\""},
      {candidate("#include \"stitch_abi.h\"\n", kPython), "does not export extern \"C\" int stitch_forward"},
      {candidate(kCuda + "#include <torch/extension.h>\n", kPython), "includes PyTorch headers"},
      {candidate(kCuda, "class ModelNew: pass\n"), "load_library(__stitch_library__)"},
      {candidate(kCuda, "x = 1\n"), "defines no class ModelNew"},
  };
  for (const auto& c : cases) {
    auto p = parseCandidate(c.answer);
    ASSERT_FALSE(p) << c.answer;
    EXPECT_NE(p.error().message.find(c.error), std::string::npos) << p.error().message;
  }
}

TEST(AttemptMemory, FingerprintIgnoresNumbersPathsAndQuotes) {
  EXPECT_EQ(AttemptMemory::fingerprint("/tmp/jobs/c1/candidate.cu:12: error \"x\" 3 times"),
            AttemptMemory::fingerprint("/work/jobs/c2/candidate.cu:97: error \"yy\" 41 times"));
  EXPECT_NE(AttemptMemory::fingerprint("candidate.cu:12: error"), AttemptMemory::fingerprint("model_new.py:12: error"));
}

TEST(AttemptMemory, RepeatedFailureIsCalledOut) {
  AttemptMemory m;
  loop::Feedback fb;
  fb.built = true;
  fb.failedChecks = {"output_mismatch"};
  m.recordVerdict("c1", "tiled", fb);
  m.recordVerdict("c2", "tiled again", fb);
  const std::string text = m.render();
  EXPECT_NE(text.find("- c1 [tiled]: FAILED: output_mismatch\n"), std::string::npos) << text;
  EXPECT_NE(text.find("(seen 2 times now: change approach)"), std::string::npos) << text;
}

TEST(UsageMeter, TokenAndCostBudgetsStopFurtherCalls) {
  LlmBudget budget;
  budget.tokens = 1000;
  budget.usd = 0.01;
  budget.pricing = {3, 15};
  UsageMeter m(budget);
  EXPECT_FALSE(m.exhausted());
  m.add({400, 100});
  EXPECT_FALSE(m.exhausted());
  EXPECT_EQ(m.summary(), "1 call(s), 400 input + 100 output tokens, $0.0027");
  m.add({300, 500});  // 1300 tokens
  ASSERT_TRUE(m.exhausted());
  EXPECT_NE(m.exhausted()->find("token budget is spent (1300 of 1000 tokens)"), std::string::npos);
  budget.tokens.reset();
  UsageMeter money(budget);
  money.add({1000, 1000});  // $0.018
  ASSERT_TRUE(money.exhausted());
  EXPECT_NE(money.exhausted()->find("cost budget is spent ($0.0180 of $0.0100)"), std::string::npos);
}

TEST(Secret, ScrubRemovesTheKeyAndItsPrefix) {
  Secret s("sk-abcdefghijklmnopqrstuvwxyz");
  EXPECT_EQ(s.scrub("key sk-abcdefghijklmnopqrstuvwxyz and sk-abcdefghi... shortened"),
            "key [redacted] and [redacted]... shortened");
}

}  // namespace
