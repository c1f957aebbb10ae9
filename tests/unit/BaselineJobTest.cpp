// Pins the BASELINE phase's use of the worker: what it asks in which order, what it streams,
// and how a harness error ends the job. The worker is scripted in process.
#include "agents/BaselineJob.h"

#include <gtest/gtest.h>

#include <map>

using namespace stitch;
using protocol::json;

namespace {

class ScriptedWorker final : public agents::Worker {
public:
  explicit ScriptedWorker(std::map<std::string, agents::WorkerReply> replies, std::vector<std::string>& calls)
      : replies_(std::move(replies)), calls_(calls) {}
  agents::WorkerReply call(const std::string& method, const json& params, std::chrono::milliseconds,
                           const agents::CancelToken&) override {
    calls_.push_back(method + (params.contains("path") ? " " + params["path"].get<std::string>() : ""));
    auto it = replies_.find(method);
    if (it == replies_.end()) return {std::nullopt, agents::WorkerError{"unknown_method", method, {}, {}}};
    return it->second;
  }

private:
  std::map<std::string, agents::WorkerReply> replies_;
  std::vector<std::string>& calls_;
};

class RecordingContext final : public agents::JobContext {
public:
  void emit(agents::JobEvent e) override { events.push_back(std::move(e)); }
  void progress(const std::string& m, std::optional<int>) override { progressMessages.push_back(m); }
  const agents::CancelToken& cancelToken() const override { return token; }
  std::vector<agents::JobEvent> events;
  std::vector<std::string> progressMessages;
  agents::CancelToken token;
};

agents::WorkerReply ok(json j) { return {std::move(j), std::nullopt}; }

struct JobRun {
  std::vector<std::string> calls;
  RecordingContext context;
  protocol::JobFinishedParams finished;
};

JobRun run(std::map<std::string, agents::WorkerReply> replies) {
  JobRun r;
  agents::BaselineJob job([&](auto) { return std::make_unique<ScriptedWorker>(replies, r.calls); });
  agents::JobRequest request{"j", "file:///m.py", "/jobs/j/m.py", "/jobs/j", 1, {}, ""};
  r.finished = job.run(request, r.context);
  return r;
}

json cpuProfile() {
  json line{{"file", "/jobs/j/m.py"}, {"line", 5}, {"timeUs", 1500.0}, {"share", 0.75},
            {"ops", json::array({json{{"name", "aten::gelu"}, {"timeUs", 1500.0}, {"calls", 1}}})}};
  json small{{"file", "/jobs/j/m.py"}, {"line", 6}, {"timeUs", 20.0}, {"share", 0.01}, {"ops", json::array()}};
  return {{"timeKind", "cpu"}, {"totalUs", 2000.0}, {"lines", json::array({small, line})}};
}

std::map<std::string, agents::WorkerReply> cpuReplies() {
  return {{"hello", ok({{"python", "3.11"}, {"torch", "1.13"}, {"cudaAvailable", false}})},
          {"loadTask", ok({{"modelClass", "Model"}, {"inputs", json::array({1, 2})}})},
          {"captureGraph", ok({{"nodes", json::array({1, 2, 3})}, {"uncovered", json::array()}})},
          {"profileReference", ok(cpuProfile())}};
}

}  // namespace

TEST(BaselineJob, WithoutGpuCapturesTheGraphAndSaysVerificationNeedsAGpu) {
  auto r = run(cpuReplies());
  EXPECT_EQ(r.calls, (std::vector<std::string>{"hello", "loadTask /jobs/j/m.py", "captureGraph /jobs/j/m.py",
                                               "profileReference /jobs/j/m.py"}));
  EXPECT_EQ(r.finished.state, "noImprovement");
  EXPECT_NE(r.finished.message.find("GPU"), std::string::npos);
  bool sawGraph = false;
  for (const auto& e : r.context.events)
    if (auto* l = std::get_if<protocol::LogParams>(&e); l && l->message.find("3 ATen operator(s)") != std::string::npos)
      sawGraph = true;
  EXPECT_TRUE(sawGraph);
}

TEST(BaselineJob, HarnessErrorEndsTheJobWithFileAndLine) {
  auto replies = cpuReplies();
  replies["loadTask"] = {std::nullopt, agents::WorkerError{"task_syntax_error", "invalid syntax", "/jobs/j/m.py", 7}};
  auto r = run(replies);
  EXPECT_EQ(r.finished.state, "failed");
  EXPECT_NE(r.finished.message.find("/jobs/j/m.py:7: invalid syntax"), std::string::npos) << r.finished.message;
  EXPECT_EQ(r.calls.size(), 2u);  // nothing after the failure
}

TEST(BaselineJob, OnAGpuTimesAndStreamsTheReferenceProfile) {
  auto replies = cpuReplies();
  replies["hello"] = ok({{"python", "3.12"}, {"torch", "2.11"}, {"cudaAvailable", true}, {"gpu", "H100"}, {"driver", "580"}});
  replies["baseline"] = ok({{"eager", {{"median_ms", 1.5}}}, {"compile", {{"error", {{"message", "no triton"}}}}}});
  auto gpuProfile = cpuProfile();
  gpuProfile["timeKind"] = "gpu";
  replies["profileReference"] = ok(gpuProfile);
  auto r = run(replies);
  EXPECT_EQ(r.finished.state, "noImprovement");
  const protocol::ProfileParams* profile = nullptr;
  std::string baselineLog;
  for (const auto& e : r.context.events) {
    if (auto* p = std::get_if<protocol::ProfileParams>(&e)) profile = p;
    if (auto* l = std::get_if<protocol::LogParams>(&e); l && l->message.rfind("baseline:", 0) == 0) baselineLog = l->message;
  }
  EXPECT_EQ(baselineLog.rfind("baseline: eager 1.500 ms, torch.compile unavailable (no triton) (timed in ", 0), 0u)
      << baselineLog;
  ASSERT_TRUE(profile);
  EXPECT_EQ(profile->subject, "reference");
  EXPECT_EQ(profile->totalGpuTimeUs, 2000.0);
  EXPECT_EQ(profile->timeKind, "gpu");
  ASSERT_EQ(profile->lines.size(), 2u);
  // Hottest first, zero-based lines, operators listed, inline text only above 5%.
  EXPECT_EQ(profile->lines[0].line, 4);
  EXPECT_EQ(profile->lines[0].kernels, std::vector<std::string>{"aten::gelu"});
  EXPECT_EQ(profile->lines[0].inlineText, "1.50 ms · 75% of forward");
  EXPECT_EQ(profile->lines[1].inlineText, "");
}

// The precision flags the harness reads after loading the task become a fact for planning, and a
// log line says them; a harness that reports none leaves them unknown.
TEST(BaselineJob, EagersPrecisionFlagsComeWithTheTask) {
  auto replies = cpuReplies();
  replies["loadTask"] = ok({{"modelClass", "Model"},
                            {"inputs", json::array()},
                            {"precision", {{"cudnn.allow_tf32", true}, {"cuda.matmul.allow_tf32", false},
                                           {"float32_matmul_precision", "highest"}}}});
  std::vector<std::string> calls;
  ScriptedWorker worker(replies, calls);
  RecordingContext context;
  agents::JobRequest request{"j", "file:///m.py", "/jobs/j/m.py", "/jobs/j", 1, {}, ""};
  protocol::JobFinishedParams finished;
  auto facts = agents::runBaselinePhase(request, context, worker, {}, finished);
  ASSERT_TRUE(facts);
  ASSERT_TRUE(facts->precision);
  EXPECT_TRUE(facts->precision->convTf32);
  EXPECT_FALSE(facts->precision->matmulTf32);
  std::string log;
  for (const auto& e : context.events)
    if (auto* l = std::get_if<protocol::LogParams>(&e); l && l->message.rfind("precision:", 0) == 0) log = l->message;
  EXPECT_NE(log.find("convolutions in TF32 (cudnn.allow_tf32) and matmuls in fp32 (cuda.matmul.allow_tf32 off)"),
            std::string::npos) << log;

  EXPECT_FALSE(agents::parseEagerPrecision(json{{"modelClass", "Model"}}));
  auto matmul = agents::parseEagerPrecision(json{{"precision", {{"cuda.matmul.allow_tf32", true}}}});
  ASSERT_TRUE(matmul);
  EXPECT_FALSE(matmul->convTf32);
  EXPECT_TRUE(matmul->matmulTf32);
}

// A job stopped from outside (a task timeout) says where its time went, step by step.
TEST(BaselineJob, AStepCancelledOnTheWayNamesTheStepsTimes) {
  auto replies = cpuReplies();
  replies["captureGraph"] = {std::nullopt, agents::WorkerError{"cancelled", "captureGraph cancelled; the worker was stopped", {}, {}}};
  auto r = run(replies);
  EXPECT_EQ(r.finished.state, "cancelled");
  EXPECT_NE(r.finished.message.find("captureGraph cancelled; the worker was stopped (hello 0.0 s, loadTask 0.0 s, "
                                    "captureGraph 0.0 s)"),
            std::string::npos)
      << r.finished.message;
}

TEST(BaselineJob, CancelledBeforeAStepStopsThere) {
  JobRun r;
  agents::CancelSource source;
  r.context.token = source.token();
  source.cancel();
  auto replies = cpuReplies();
  agents::BaselineJob job([&](auto) { return std::make_unique<ScriptedWorker>(replies, r.calls); });
  agents::JobRequest request{"j", "file:///m.py", "/jobs/j/m.py", "/jobs/j", 1, {}, ""};
  auto finished = job.run(request, r.context);
  EXPECT_EQ(finished.state, "cancelled");
  EXPECT_TRUE(r.calls.empty());
}
