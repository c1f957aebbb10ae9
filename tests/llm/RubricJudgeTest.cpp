// The rubric judge (`stitchcuda score --judge`) against the stand-in provider in both wire formats:
// the project's rubric prompt carries the four dimensions and the candidate's code, the answer is
// read strictly (a score outside [0, 1] is sent back with its error, then accepted when fixed), and
// through the real binary the judgment sits beside the deterministic score without changing the
// reward — also when the judge's answers stay invalid.
#include "FakeProvider.h"

#include "agents/llm/RubricJudge.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace stitch::agents::llm;
using stitch::fake::FakeProvider;
using nlohmann::json;

namespace {

const std::string kGood =
    "The kernel fuses the chain with 16-byte loads.\n```json\n"
    "{\"anti_hacking\": {\"score\": 1, \"reason\": \"all work is in chain_vec4\"},\n"
    " \"cuda_engineering\": {\"score\": 0.4, \"reason\": \"float4 loads, no reuse to tile\"},\n"
    " \"operator_coverage\": {\"score\": 1.0, \"reason\": \"every operator\"},\n"
    " \"skill_compliance\": {\"score\": null, \"reason\": \"a generation\"},\n"
    " \"summary\": \"an honest fused elementwise kernel\"}\n```\n";

prompts::JudgeInput input() {
  prompts::JudgeInput in;
  in.taskSource = "class Model(nn.Module): ...";
  in.candidateCuda = "__global__ void chain_vec4(const float4* x) {}";
  in.candidatePython = "class ModelNew(nn.Module): ...";
  in.deterministic = R"({"reward": 0.76})";
  return in;
}

ProviderSettings settings(FakeProvider& server, ProviderKind kind, bool stream) {
  ProviderSettings s;
  s.kind = kind;
  s.baseUrl = server.baseUrl();
  s.model = "judge-model";
  s.stream = stream;
  s.backoffBase = std::chrono::milliseconds(10);
  s.totalTimeout = std::chrono::milliseconds(5000);
  return s;
}

TEST(RubricJudge, ScoresTheFourDimensionsFromTheProjectsPrompt) {
  for (auto [kind, stream] : {std::pair{ProviderKind::OpenAi, false}, {ProviderKind::Anthropic, true}}) {
    SCOPED_TRACE(providerName(kind));
    FakeProvider server;
    server.push(kind == ProviderKind::OpenAi ? stitch::fake::openAiWhole(kGood) : stitch::fake::anthropicStream(kGood));
    const auto s = settings(server, kind, stream);
    ChatClient client(s, [](const std::string&, const std::string&) {});
    auto j = judgeCandidate(client, input(), stitch::agents::CancelToken());
    ASSERT_TRUE(j.ok()) << j.error().message;
    EXPECT_EQ(j.value().scores.at("cuda_engineering").score, 0.4);
    EXPECT_FALSE(j.value().scores.at("skill_compliance").score);
    EXPECT_EQ(j.value().summary, "an honest fused elementwise kernel");
    const json body = server.requests().at(0).body;
    const std::string system = kind == ProviderKind::OpenAi ? body["messages"][0]["content"] : body["system"];
    for (const char* d : kJudgeDimensions) EXPECT_NE(system.find(d), std::string::npos) << d;
    EXPECT_NE(body.dump().find("chain_vec4"), std::string::npos);
    const json out = judgementToJson(j.value(), s);
    EXPECT_EQ(out["provider"], providerName(kind));
    EXPECT_EQ(out["scores"]["anti_hacking"]["score"], 1.0);
    EXPECT_TRUE(out["scores"]["skill_compliance"]["score"].is_null());
  }
}

TEST(RubricJudge, AnInvalidAnswerIsSentBackWithItsError) {
  FakeProvider server;
  std::string bad = kGood;
  bad.replace(bad.find("0.4"), 3, "1.5");
  server.push(stitch::fake::openAiWhole(bad));
  server.push(stitch::fake::openAiWhole(kGood));
  ChatClient client(settings(server, ProviderKind::OpenAi, false), [](const std::string&, const std::string&) {});
  auto j = judgeCandidate(client, input(), stitch::agents::CancelToken());
  ASSERT_TRUE(j.ok()) << j.error().message;
  EXPECT_EQ(j.value().answers, 2);
  EXPECT_EQ(j.value().usage.input, 200);
  const json second = server.requests().at(1).body;
  EXPECT_NE(second.dump().find("\\\"cuda_engineering.score\\\" is 1.5, not in [0, 1]"), std::string::npos) << second.dump();

  EXPECT_FALSE(parseJudgement("no block").ok());
  EXPECT_NE(parseJudgement("```json\n{\"anti_hacking\": {\"score\": 1, \"reason\": \"\"}}\n```").error().message.find(
                "\"cuda_engineering\" is missing"),
            std::string::npos);
}

json scoreCli(const std::string& extra) {
  const std::string cmd = std::string("cd ") + STITCH_SOURCE_DIR + " && STITCHCUDA_API_KEY=sk-judge " + STITCHCUDA_BIN +
                          " score --reference examples/elementwise_chain.py --candidate tests/harness/honest/elementwise_chain"
                          " --verdict tests/llm/fixtures/honest_chain_verdict.json --python " + STITCH_TEST_PYTHON +
                          " --jobs-dir " + (fs::temp_directory_path() / ("stitch-judge-" + std::to_string(::getpid()))).string() +
                          " --log-level warning --llm-attempts 1 --json " + extra + " 2>/dev/null";
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  EXPECT_EQ(WEXITSTATUS(::pclose(p)), 0) << out;
  return json::parse(out);
}

TEST(RubricJudge, TheCliPutsTheJudgmentBesideTheScoreAndNeverChangesTheReward) {
  const json plain = scoreCli("");
  FakeProvider server;
  server.push(stitch::fake::openAiStream(kGood));
  const json judged = scoreCli("--judge openai --judge-model judge-model --judge-base-url " + server.baseUrl());
  EXPECT_EQ(judged["reward"], plain["reward"]);
  EXPECT_EQ(judged["rubric"], plain["rubric"]);
  EXPECT_EQ(judged["judge"]["scores"]["cuda_engineering"]["score"], 0.4);
  EXPECT_EQ(judged["judge"]["model"], "judge-model");
  EXPECT_EQ(server.requests().at(0).headers.at("authorization"), "Bearer sk-judge");

  FakeProvider garbled;
  garbled.push(stitch::fake::openAiStream("no json here"));
  garbled.push(stitch::fake::openAiStream("still none"));
  garbled.push(stitch::fake::openAiStream("and none"));
  const json failed = scoreCli("--judge openai --judge-model m --judge-base-url " + garbled.baseUrl());
  EXPECT_EQ(failed["reward"], plain["reward"]);
  EXPECT_NE(failed["judge"]["error"].get<std::string>().find("still invalid"), std::string::npos) << failed["judge"];
}

}  // namespace
