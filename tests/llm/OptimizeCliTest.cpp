// `stitchcuda optimize --brain openai|anthropic` end to end on a CPU machine: the real binary, the
// real harness (Debian's torch) and nvcc, the model replaced by the stand-in provider. Pins
// plan → code → build (compile-only without a GPU) → done, and that the API key reaches the
// provider but no terminal line, host log, JSONL job log or report.
#include "FakeProvider.h"
#include "tests/cli_support/CliRun.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using stitch::fake::FakeProvider;

namespace {

const char* kKey = "sk-cli-KEY-9e8d7c6b5a4f3e2d";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct CliRun {
  int status = -1;
  std::string output;  // stdout and stderr, interleaved as written
};

CliRun runCli(const std::string& args) {
  stitch::testing::CliOptions options;
  options.env = {{"STITCHCUDA_API_KEY", kKey}};
  options.mergeStderr = true;
  const auto r = stitch::testing::runCli("optimize " + args, options);
  return {r.status, r.out};
}

const std::string kPlan =
    "The chain is memory-bound; one pass reads x and y once.\n```json\n{\"tasks\": [{\"id\": \"k0\", \"title\": "
    "\"Fuse mul + add + relu + sigmoid + mul\", \"operators\": [\"mul\", \"add\", \"relu\", \"sigmoid\"], \"technique\": "
    "\"one elementwise pass\", \"lines\": [12, 12], \"expectedGainPct\": 80}], \"uncovered\": []}\n```\n";

// A candidate that compiles without a GPU (host code through nvcc), in the fast-path format.
std::string candidate() {
  const fs::path dir = fs::path(STITCH_SOURCE_DIR) / "tests/harness/honest/host_elementwise";
  return "Strategy: one fused elementwise pass\n```cuda candidate.cu\n" + slurp(dir / "candidate.cu") +
         "```\n```python model_new.py\n" + slurp(dir / "model_new.py") + "```\n";
}

void expectNoKey(const std::string& what, const std::string& text) {
  EXPECT_EQ(text.find(kKey), std::string::npos) << what << " contains the API key";
  EXPECT_EQ(text.find("sk-cli-KEY-9"), std::string::npos) << what << " contains the API key's prefix";
}

void runEndToEnd(const std::string& brain) {
  FakeProvider provider;
  const bool anthropic = brain == "anthropic";
  provider.push(anthropic ? stitch::fake::anthropicStream(kPlan) : stitch::fake::openAiStream(kPlan));
  provider.push(anthropic ? stitch::fake::anthropicStream(candidate()) : stitch::fake::openAiStream(candidate()));
  const fs::path work = fs::temp_directory_path() / ("stitch-llm-cli-" + brain + "-" + std::to_string(::getpid()));
  fs::remove_all(work);
  CliRun r = runCli("examples/elementwise_chain.py --brain " + brain + " --model test-model --base-url " + provider.baseUrl() +
                 " --python " + STITCH_TEST_PYTHON + " --jobs-dir " + (work / "jobs").string() + " --out " +
                 (work / "report").string() + " --log " + (work / "host.log").string() + " --log-level debug");
  EXPECT_EQ(r.status, 4) << r.output;  // compiled, but no GPU to verify on
  EXPECT_NE(r.output.find("LLM brain: " + brain + " model test-model"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("plan: 1 task(s)\n  - Fuse mul + add + relu + sigmoid + mul [one elementwise pass]"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("candidate c1: one fused elementwise pass"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("c1 compiled for sm_90"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("finished: noImprovement"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(LLM: 2 call(s), 200 input + 100 output tokens)"), std::string::npos) << r.output;
  ASSERT_EQ(provider.requests().size(), 2u);
  const auto first = provider.requests()[0];
  if (anthropic) EXPECT_EQ(first.headers.at("x-api-key"), kKey);
  else EXPECT_EQ(first.headers.at("authorization"), std::string("Bearer ") + kKey);

  expectNoKey("the terminal output", r.output);
  expectNoKey("the host log", slurp(work / "host.log"));
  expectNoKey("report.json", slurp(work / "report" / "report.json"));
  expectNoKey("report.md", slurp(work / "report" / "report.md"));
  int logs = 0;
  for (const auto& job : fs::directory_iterator(work / "jobs"))
    if (fs::exists(job.path() / "log.jsonl")) {
      expectNoKey("the JSONL job log", slurp(job.path() / "log.jsonl"));
      ++logs;
    }
  EXPECT_EQ(logs, 1);
  fs::remove_all(work);
}

TEST(OptimizeCli, OpenAiBrainPlansCodesAndBuildsWithoutAGpu) { runEndToEnd("openai"); }

TEST(OptimizeCli, AnthropicBrainPlansCodesAndBuildsWithoutAGpu) { runEndToEnd("anthropic"); }

TEST(OptimizeCli, LlmBrainWithoutAModelIsAUsageErrorNamingTheFix) {
  CliRun r = runCli("examples/elementwise_chain.py --brain openai --jobs-dir /tmp/stitch-llm-nomodel");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("the openai brain needs a model name: pass --model NAME"), std::string::npos) << r.output;
}

}  // namespace
