// Pins the LLM brain inside the real loop on the GPU path: plan (a first plan that fails the
// schema is sent back with its error) → code → verify (failed) → refine with the Verifier's one
// issue, the previous candidate and the memory of attempts → verify (passed) → done. The worker
// replays harness replies recorded on an H200; the model is the stand-in provider. Also pins
// that the API key appears in no event, and that a spent budget stops the loop cleanly.
#include "FakeProvider.h"
#include "agents/llm/LlmJob.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace stitch;
using namespace stitch::agents;
using protocol::json;
namespace fs = std::filesystem;
using stitch::fake::FakeProvider;

namespace {

const fs::path kSource = STITCH_SOURCE_DIR;
const char* kKey = "sk-live-SECRET-4f9a8b7c6d5e";

const json& suite() {
  static const json s = [] {
    std::ifstream f(kSource / "tests/harness/results/gpu_suite_2026-11-22_h200.json");
    return json::parse(f);
  }();
  return s;
}

WorkerReply ok(json j) { return {std::move(j), std::nullopt}; }

json failingVerdict() {
  return {{"passed", false},
          {"build", {{"ok", true}, {"library", "/cache/c1.so"}}},
          {"failed_checks", {"output_mismatch"}},
          {"findings", {{{"check", "output_mismatch"}, {"message", "max abs error 0.5 at trial 0"}}}},
          {"timing", nullptr}};
}

// Replays the recorded baseline of examples/mlp.py and scripted verdicts.
class ScriptedWorker final : public Worker {
public:
  explicit ScriptedWorker(std::deque<json>& verdicts) : verdicts_(verdicts) {}
  WorkerReply call(const std::string& method, const json&, std::chrono::milliseconds, const CancelToken&) override {
    if (method == "hello") return ok(suite()["hello"]);
    if (suite()["methods"].contains(method)) return ok(suite()["methods"][method]["result"]);
    if (method == "verify" && !verdicts_.empty()) {
      json v = verdicts_.front();
      verdicts_.pop_front();
      return ok(v);
    }
    return {std::nullopt, WorkerError{"unknown_method", method + " is not scripted", std::nullopt, std::nullopt}};
  }

private:
  std::deque<json>& verdicts_;
};

class RecordingContext final : public JobContext {
public:
  void emit(JobEvent event) override { events.push_back(std::move(event)); }
  void progress(const std::string& message, std::optional<int>) override { progressLines.push_back(message); }
  const CancelToken& cancelToken() const override { return token; }

  std::string allText() const {
    std::string s;
    for (const auto& e : events) s += methodOf(e) + " " + paramsOf(e).dump() + "\n";
    for (const auto& p : progressLines) s += p + "\n";
    return s;
  }
  std::vector<std::string> logLines() const {
    std::vector<std::string> out;
    for (const auto& e : events)
      if (auto* l = std::get_if<protocol::LogParams>(&e)) out.push_back("[" + l->phase + "] " + l->message);
    return out;
  }

  std::vector<JobEvent> events;
  std::vector<std::string> progressLines;
  CancelToken token;
};

const std::string kPlan =
    "```json\n{\"tasks\": [{\"id\": \"k0\", \"title\": \"Linear with a fused ReLU epilogue\", \"operators\": "
    "[\"aten::addmm\", \"aten::relu\"], \"technique\": \"cuBLASLt matmul, bias+ReLU epilogue\", \"lines\": [13, 13], "
    "\"expectedGainPct\": 30}], \"uncovered\": []}\n```\n";
const std::string kBadPlan =
    "```json\n{\"tasks\": [{\"id\": \"k0\", \"title\": \"Linear\", \"operators\": [\"aten::linear\"], "
    "\"technique\": \"tiled GEMM\", \"lines\": [13, 13]}]}\n```\n";

std::string candidate(const std::string& strategy, const std::string& marker) {
  return "Strategy: " + strategy +
         "\n```cuda candidate.cu\n#include \"stitch_abi.h\"\n// " + marker +
         "\nextern \"C\" int stitch_forward(const StitchTensor* t, int32_t n, cudaStream_t stream) { return 0; }\n```\n"
         "```python model_new.py\nimport torch\nimport torch.nn as nn\nfrom stitchcuda_harness.abi import load_library\n\n\n"
         "class ModelNew(nn.Module):\n    def __init__(self, d_in, d_out):\n        super().__init__()\n"
         "        self.fc = nn.Linear(d_in, d_out)\n        self.lib = load_library(__stitch_library__)\n\n"
         "    def forward(self, x):\n        out = torch.empty((x.shape[0], 256), device=x.device)\n"
         "        self.lib.forward(x, self.fc.weight, self.fc.bias, out)\n        return out\n```\n";
}

struct JobRun {
  protocol::JobFinishedParams finished;
  RecordingContext context;
  fs::path jobDir;
};

// `model`: the task's text, when not examples/mlp.py as it is.
std::unique_ptr<JobRun> runJob(FakeProvider& provider, std::deque<json>& verdicts, int iterations,
                               std::optional<long long> tokenBudget = std::nullopt,
                               std::optional<std::string> model = std::nullopt) {
  auto run = std::make_unique<JobRun>();
  run->jobDir = fs::temp_directory_path() / ("stitch-llm-job-" + std::to_string(::getpid()) + "-" + std::to_string(iterations));
  fs::remove_all(run->jobDir);
  fs::create_directories(run->jobDir);
  if (model) std::ofstream(run->jobDir / "mlp.py") << *model;
  else fs::copy_file(kSource / "examples/mlp.py", run->jobDir / "mlp.py");
  JobRequest request;
  request.jobId = "job-1";
  request.uri = "file:///work/mlp.py";
  request.taskFile = run->jobDir / "mlp.py";
  request.jobDir = run->jobDir;
  request.options.brain = "openai";
  request.options.budget.iterations = iterations;

  llm::LlmSettings settings;
  settings.provider.baseUrl = provider.baseUrl();
  settings.provider.model = "test-model";
  settings.provider.apiKey = llm::Secret(kKey);
  settings.provider.backoffBase = std::chrono::milliseconds(10);
  settings.budget.tokens = tokenBudget;
  settings.budget.pricing = {2, 8};
  WorkerFactory workers = [&verdicts](std::function<void(const json&)>) { return std::make_unique<ScriptedWorker>(verdicts); };
  llm::LlmJob job(workers, {}, settings);
  run->finished = job.run(request, run->context);
  return run;
}

std::string userTurns(const fake::RecordedRequest& r) {
  std::string s;
  for (const auto& m : r.body["messages"]) s += m["role"].get<std::string>() + ": " + m["content"].get<std::string>() + "\n";
  return s;
}

TEST(LlmJob, PlanCodeVerifyRefineDone) {
  FakeProvider provider;
  provider.push(fake::openAiStream(kBadPlan, 1000, 100));
  provider.push(fake::openAiStream(kPlan, 1200, 120));
  provider.push(fake::openAiStream(candidate("naive tiled GEMM", "FIRST"), 2000, 800));
  provider.push(fake::openAiStream(candidate("cuBLASLt with ReLU epilogue", "SECOND"), 3000, 900));
  json passing = suite()["honest"][0];
  passing["build"] = {{"ok", true}, {"library", "/cache/c2.so"}};
  std::deque<json> verdicts{failingVerdict(), passing};
  auto run = runJob(provider, verdicts, 2);
  std::string log;
  for (const auto& l : run->context.logLines()) log += l + "\n";

  EXPECT_EQ(run->finished.state, "improved") << run->finished.message << "\n" << log;
  EXPECT_EQ(run->finished.bestCandidateId, "c2");
  EXPECT_NE(run->finished.message.find("(LLM: 4 call(s), 7200 input + 1920 output tokens, $0.0298)"), std::string::npos)
      << run->finished.message;
  ASSERT_EQ(provider.requests().size(), 4u);

  // The planner saw the graph and the built-in plan; the invalid plan went back with its error.
  const auto requests = provider.requests();
  const std::string plan1 = userTurns(requests[0]);
  EXPECT_NE(plan1.find("aten::addmm"), std::string::npos);
  EXPECT_NE(plan1.find("The built-in planner's plan"), std::string::npos);
  const std::string plan2 = userTurns(requests[1]);
  EXPECT_NE(plan2.find("assistant: " + kBadPlan), std::string::npos);
  EXPECT_NE(plan2.find("Your answer could not be used: tasks[0].operators names \"aten::linear\", which is not in the graph"),
            std::string::npos)
      << plan2;
  EXPECT_NE(log.find("the openai planner's answer was invalid"), std::string::npos) << log;

  // The refine request carries the one issue, the previous candidate and the memory.
  const std::string refine = userTurns(requests[3]);
  EXPECT_NE(refine.find("The Verifier's verdict on it\nFAILED.\nIssue [output_mismatch]: "), std::string::npos) << refine;
  EXPECT_NE(refine.find("Fix: Compare the kernel's indexing"), std::string::npos) << refine;
  EXPECT_NE(refine.find("// FIRST"), std::string::npos);
  EXPECT_NE(refine.find("- c1 [naive tiled GEMM]: FAILED: output_mismatch"), std::string::npos) << refine;
  EXPECT_NE(refine.find("an answer of the planner was invalid"), std::string::npos);

  // The second candidate is on disk and its edit calls the built library.
  std::ifstream cu(run->jobDir / "candidates/c2/candidate.cu");
  std::stringstream text;
  text << cu.rdbuf();
  EXPECT_NE(text.str().find("// SECOND"), std::string::npos);
  bool edited = false;
  for (const auto& e : run->context.events)
    if (auto* c = std::get_if<protocol::CandidateParams>(&e); c && c->candidate.id == "c2" && c->candidate.status == "verified") {
      EXPECT_NE(c->candidate.newText.find("            from stitchcuda_kernels import load_program\n"
                                          "            self._stitch_lib = load_program(\"mlp.cu\")\n"),
                std::string::npos)
          << c->candidate.newText;
      EXPECT_EQ(c->candidate.newText.find("stitchcuda_harness"), std::string::npos);
      EXPECT_EQ(c->candidate.files.size(), 2u);
      EXPECT_NE(c->candidate.newText.find("        self._stitch_lib.forward(x, self.fc.weight, self.fc.bias, out)\n"),
                std::string::npos)
          << c->candidate.newText;
      EXPECT_EQ(c->candidate.range.start.line, 12);
      edited = true;
    }
  EXPECT_TRUE(edited);
  fs::remove_all(run->jobDir);
}

TEST(LlmJob, ApiKeyAppearsInNoEventOrProgress) {
  FakeProvider provider;
  // A 401-style echo of the key first (retried as a 500), then a normal job.
  provider.push(fake::errorReply(500, std::string("{\"error\":{\"message\":\"bad key ") + kKey + "\"}}"));
  provider.push(fake::openAiStream(kPlan));
  provider.push(fake::openAiStream(candidate("one kernel", "ONLY")));
  std::deque<json> verdicts{suite()["honest"][0]};
  auto run = runJob(provider, verdicts, 1);
  EXPECT_EQ(run->finished.state, "improved") << run->finished.message;
  EXPECT_EQ(provider.requests().at(0).headers.at("authorization"), std::string("Bearer ") + kKey);
  const std::string all = run->context.allText() + run->finished.message;
  EXPECT_NE(all.find("[redacted]"), std::string::npos) << "the echoed key should have been logged, redacted";
  EXPECT_EQ(all.find(kKey), std::string::npos);
  EXPECT_EQ(all.find("sk-live-SECR"), std::string::npos);
  fs::remove_all(run->jobDir);
}

// A forward written on one line: the edit replaces that line and begins with the def up to its colon.
TEST(LlmJob, AOneLineForwardIsEditedIntoAWholeDef) {
  std::ifstream in(kSource / "examples/mlp.py");
  std::stringstream text;
  text << in.rdbuf();
  std::string model = text.str();
  const std::string twoLines = "    def forward(self, x):\n        return torch.relu(self.fc(x))\n";
  ASSERT_NE(model.find(twoLines), std::string::npos);
  model.replace(model.find(twoLines), twoLines.size(), "    def forward(self, x): return torch.relu(self.fc(x))\n");
  FakeProvider provider;
  provider.push(fake::openAiStream(kPlan));
  provider.push(fake::openAiStream(candidate("one kernel", "ONLY")));
  json passing = suite()["honest"][0];
  passing["build"] = {{"ok", true}, {"library", "/cache/c1.so"}};
  std::deque<json> verdicts{passing};
  auto run = runJob(provider, verdicts, 1, std::nullopt, model);
  bool edited = false;
  for (const auto& e : run->context.events)
    if (auto* c = std::get_if<protocol::CandidateParams>(&e); c && c->candidate.id == "c1" && !c->candidate.newText.empty()) {
      EXPECT_TRUE(c->candidate.newText.starts_with("    def forward(self, x):\n        # StitchCUDA: the LLM brain's candidate"))
          << c->candidate.newText;
      EXPECT_EQ(c->candidate.range.start.line, 11);  // the def line itself
      EXPECT_EQ(c->candidate.range.end.line, 12);
      edited = true;
    }
  EXPECT_TRUE(edited) << run->finished.message;
  fs::remove_all(run->jobDir);
}

TEST(LlmJob, SpentTokenBudgetStopsTheLoopCleanly) {
  FakeProvider provider;
  provider.push(fake::openAiStream(kPlan, 900, 200));  // 1100 tokens: over the budget of 1000
  std::deque<json> verdicts;
  auto run = runJob(provider, verdicts, 3, 1000);
  EXPECT_EQ(provider.requests().size(), 1u);
  EXPECT_EQ(run->finished.state, "noImprovement");
  std::string log;
  for (const auto& l : run->context.logLines()) log += l + "\n";
  EXPECT_NE(log.find("stopping: the job's token budget is spent (1100 of 1000 tokens)"), std::string::npos) << log;
  fs::remove_all(run->jobDir);
}

}  // namespace
