// Pins the agent loop end to end: phases in order in the job's JSONL log, PROFILE's editor
// profile and feedback for a verified candidate, ncu's bounds and fallbacks, budgets, cancel and
// REPLAN. The worker replays harness replies recorded on an H200 (the GPU suite's verdicts and
// method results, the profiling fixtures); `ncu` is a script that replays a recorded ncu log.
#include "agents/JobLog.h"
#include "agents/loop/OptimizeLoop.h"
#include "agents/loop/TransitionLog.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <thread>
#include <unistd.h>

using namespace stitch;
using namespace stitch::agents;
using protocol::json;
namespace fs = std::filesystem;

namespace {

const fs::path kSource = STITCH_SOURCE_DIR;
const fs::path kRecorded = kSource / "tests/profiling/fixtures/recorded";

json readJson(const fs::path& p) {
  std::ifstream f(p);
  EXPECT_TRUE(f) << "missing fixture " << p;
  return json::parse(f);
}

// The GPU suite's record: hello, the baseline methods' results and real verdicts.
const json& suite() {
  static const json s = readJson(kSource / "tests/harness/results/gpu_suite_2026-11-22_h200.json");
  return s;
}

WorkerReply ok(json j) { return {std::move(j), std::nullopt}; }
WorkerReply error(const std::string& code, const std::string& message) {
  return {std::nullopt, WorkerError{code, message, std::nullopt, std::nullopt}};
}

// The honest elementwise_chain candidate's verdict; `scale` stretches its measured time.
json passingVerdict(double scale = 1.0) {
  json v = suite()["honest"][0];
  v["timing"]["candidate"]["median_ms"] = v["timing"]["candidate"]["median_ms"].get<double>() * scale;
  v["timing"]["speedup_vs_eager"] = v["timing"]["speedup_vs_eager"].get<double>() / scale;
  return v;
}

// The no-op kernel's rejection, its findings rebuilt from the suite's "[check] message" lines.
json failingVerdict() {
  const json& a = suite()["adversarial"][0];
  json findings = json::array();
  const std::regex line(R"(^\[([a-z_]+)\] (.*)$)");
  for (const auto& m : a["messages"]) {
    std::smatch match;
    const std::string text = m.get<std::string>();
    if (std::regex_match(text, match, line)) findings.push_back({{"check", match[1]}, {"message", match[2]}});
  }
  return {{"passed", false}, {"failed_checks", a["failed_checks"]}, {"findings", findings}, {"timing", nullptr}};
}

// What the scripted harness answers and what it was asked.
struct Script {
  std::deque<WorkerReply> verdicts;
  std::vector<std::string> calls;
  std::function<std::optional<WorkerReply>(const std::string& method)> intercept;  // cancels, delays
  std::vector<json> verifyEvents;  // what every verify call sends before its reply
  json ceilingsParams;             // what measureCeilings was sent
  std::map<std::string, std::vector<json>> sent;  // each method's params, call by call
};

class ScriptedWorker final : public Worker {
public:
  ScriptedWorker(Script& s, std::function<void(const json&)> onEvent) : s_(s), onEvent_(std::move(onEvent)) {}
  WorkerReply call(const std::string& method, const json& params, std::chrono::milliseconds,
                   const CancelToken&) override {
    s_.calls.push_back(method);
    s_.sent[method].push_back(params);
    if (s_.intercept)
      if (auto r = s_.intercept(method)) return *r;
    if (method == "hello") return ok(suite()["hello"]);
    if (suite()["methods"].contains(method)) return ok(suite()["methods"][method]["result"]);
    if (method == "verify") {
      for (const json& e : s_.verifyEvents) onEvent_(e);
      if (s_.verdicts.empty()) return error("unscripted", "no verdict left in the script");
      auto r = s_.verdicts.front();
      s_.verdicts.pop_front();
      return r;
    }
    if (method == "profileTrace") {  // the harness writes the trace where it is told
      const fs::path out = params.at("out").get<std::string>();
      fs::create_directories(out.parent_path());
      fs::copy_file(kRecorded / "torch_trace_chain_candidate.json", out, fs::copy_options::overwrite_existing);
      json r = readJson(kRecorded / "profile_trace_chain_candidate.result.json");
      r["trace"] = out.string();
      return ok(r);
    }
    if (method == "measureCeilings") {
      s_.ceilingsParams = params;
      return ok(readJson(kRecorded / "ceilings.json"));
    }
    if (method == "buildCandidate" && params.value("background", false)) return ok({{"arch", "sm_90a"}, {"started", 1}});
    if (method == "ncuTarget")
      return ok({{"python", "python3"}, {"harnessDir", (kSource / "harness").string()},
                 {"module", "stitchcuda_harness.ncu_target"}, {"nvtxRange", "stitchcuda.forward"}});
    return error("unknown_method", method);
  }

private:
  Script& s_;
  std::function<void(const json&)> onEvent_;
};

// A brain that writes nothing: it hands out drafts and remembers what it was told.
struct BrainRecord {
  int drafts = 2;
  bool replansOnStagnation = true;
  std::vector<profiling::LibraryMath> math;  // what the plan says its library calls compute
  std::optional<loop::BrainPlan> changedPlan;  // the second draft's, as a refine that changed the plan gives it
  std::vector<bool> plans;                               // the replan flag of each plan() call
  std::vector<std::optional<loop::Feedback>> feedback;   // `last` of each next() call
};

class TestBrain final : public loop::Brain {
public:
  explicit TestBrain(BrainRecord& r) : r_(r) {}
  loop::BrainPlan plan(const BaselineFacts&, const JobRequest& request, bool replan) override {
    r_.plans.push_back(replan);
    loop::BrainPlan p;
    p.plan.jobId = request.jobId;
    p.plan.uri = request.uri;
    protocol::PlanTask t;
    t.id = "chain";  // the recorded candidate's kernel is chain_vec4
    t.title = "Fuse mul + add + relu";
    t.range = {{11, 0}, {13, 0}};
    p.plan.tasks.push_back(t);
    p.generatable = true;
    p.math = r_.math;
    return p;
  }
  std::optional<loop::Draft> next(const std::optional<loop::Feedback>& last, const fs::path& dir,
                                  std::string&) override {
    r_.feedback.push_back(last);
    if (r_.drafts-- <= 0) return std::nullopt;
    fs::create_directories(dir);
    std::ofstream(dir / "candidate.cu") << "#include \"stitch_abi.h\"\n// kernels of " << dir.filename().string() << "\n";
    loop::Draft d{"variant " + dir.filename().string(), "v", dir, std::nullopt};
    if (r_.feedback.size() == 2) d.plan = r_.changedPlan;
    return d;
  }
  protocol::Range editRange() const override { return {{10, 0}, {14, 0}}; }
  std::string editText(const program::ProgramNames& p, std::optional<double>) const override {
    return "run(" + p.folder + "/" + p.cuda + ")";
  }
  bool replansOnStagnation() const override { return r_.replansOnStagnation; }

private:
  BrainRecord& r_;
};

// Streams into memory and into the job's JSONL log, like the job manager.
class LoggingContext final : public JobContext {
public:
  explicit LoggingContext(const fs::path& log) : writer(log) {}
  void emit(JobEvent e) override {
    writer.append(e);
    events.push_back(std::move(e));
  }
  void progress(const std::string&, std::optional<int>) override {}
  const CancelToken& cancelToken() const override { return token; }
  JobLogWriter writer;
  std::vector<JobEvent> events;
  CancelToken token;
};

// A stand-in for Nsight Compute: `--version`, then one run that writes `csv` (or prints
// `stderrLine` and fails) and counts itself.
fs::path writeNcu(const fs::path& dir, const std::string& csv, const std::string& stderrLine = "") {
  fs::create_directories(dir);
  const fs::path script = dir / "ncu";
  std::ofstream f(script);
  f << "#!/bin/sh\n"
    << "if [ \"$1\" = --version ]; then echo 'NVIDIA (R) Nsight Compute'; echo 'Version 2025.3.1.0'; exit 0; fi\n"
    << "echo run >> '" << (dir / "runs").string() << "'\n";
  if (!stderrLine.empty()) f << "echo '" << stderrLine << "' >&2\nexit 1\n";
  f << "while [ $# -gt 0 ]; do [ \"$1\" = --log-file ] && cp '" << (kRecorded / csv).string() << "' \"$2\"; shift; done\n";
  f.close();
  fs::permissions(script, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);
  return script;
}

int ncuRuns(const fs::path& dir) {
  std::ifstream f(dir / "runs");
  int n = 0;
  for (std::string line; std::getline(f, line);) ++n;
  return n;
}

class OptimizeLoopTest : public ::testing::Test {
protected:
  void SetUp() override {
    root = fs::temp_directory_path() / ("stitch-loop-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root);
    fs::create_directories(root / "jobs");
    std::ofstream(root / "m.py") << "# the task\n";
    limits.baseline.timingSeconds = 0.1;
    limits.profile.ncu = writeNcu(root / "ncu", "ncu_memory_bound.csv");
  }
  void TearDown() override { fs::remove_all(root); }

  protocol::JobFinishedParams run(const std::string& jobId = "j") {
    JobRequest request{jobId, "file:///m.py", root / "m.py", root / "jobs" / jobId, 1, options, ""};
    context = std::make_unique<LoggingContext>(root / "jobs" / jobId / "log.jsonl");
    context->token = cancel.token();
    loop::OptimizeLoop job([this](auto onEvent) { return std::make_unique<ScriptedWorker>(script, std::move(onEvent)); },
                           [this] { return std::make_unique<TestBrain>(brain); }, limits);
    return job.run(request, *context);
  }

  std::vector<protocol::LogParams> logs() const {
    std::vector<protocol::LogParams> out;
    for (const auto& e : context->events)
      if (auto* l = std::get_if<protocol::LogParams>(&e)) out.push_back(*l);
    return out;
  }
  int logsContaining(const std::string& text) const {
    int n = 0;
    for (const auto& l : logs()) n += l.message.find(text) != std::string::npos;
    return n;
  }
  std::vector<protocol::ProfileParams> profiles() const {
    std::vector<protocol::ProfileParams> out;
    for (const auto& e : context->events)
      if (auto* p = std::get_if<protocol::ProfileParams>(&e)) out.push_back(*p);
    return out;
  }
  int calls(const std::string& method) const { return std::count(script.calls.begin(), script.calls.end(), method); }

  fs::path root;
  loop::LoopLimits limits;
  protocol::OptimizeParams options;
  Script script;
  BrainRecord brain;
  CancelSource cancel;
  std::unique_ptr<LoggingContext> context;
};

}  // namespace

TEST_F(OptimizeLoopTest, PhasesFollowDesignOrderInTheJobLog) {
  script.verdicts = {ok(passingVerdict()), ok(passingVerdict(0.9))};
  options.budget.iterations = 2;
  auto finished = run();
  EXPECT_EQ(finished.state, "improved");
  EXPECT_EQ(finished.bestCandidateId, "c2");

  // Read back from the JSONL file: what a replay or a person sees.
  auto log = readJobLog(root / "jobs/j/log.jsonl");
  EXPECT_TRUE(log.problems.empty());
  std::vector<std::string> phases;
  std::vector<std::string> stream;  // candidate and profile events among the log lines, in order
  for (const auto& e : log.events) {
    if (auto* l = std::get_if<protocol::LogParams>(&e); l && (phases.empty() || phases.back() != l->phase))
      phases.push_back(l->phase);
    if (auto* c = std::get_if<protocol::CandidateParams>(&e)) stream.push_back("candidate " + c->candidate.id);
    if (auto* p = std::get_if<protocol::ProfileParams>(&e)) stream.push_back("profile " + p->subject);
  }
  // BASELINE's eager timing runs after c1 is written, while c1 builds; torch.compile's after c1, verified.
  EXPECT_EQ(phases, (std::vector<std::string>{"BASELINE", "PLAN", "CODE", "BASELINE", "VERIFY", "PROFILE", "BASELINE",
                                              "REFINE", "VERIFY", "PROFILE", "DONE"}));
  EXPECT_EQ(stream, (std::vector<std::string>{"profile reference", "candidate c1", "profile c1", "candidate c2",
                                              "profile c2"}));
}

// The reference's facts first (the plan needs them), then c1's build started in the background,
// then eager timed while it builds, then c1's verify, which collects the build.
TEST_F(OptimizeLoopTest, TheFirstBuildRunsWhileTheReferenceIsTimed) {
  script.verdicts = {ok(passingVerdict()), ok(passingVerdict(0.9))};
  options.budget.iterations = 2;
  run();
  const auto firstVerify = std::find(script.calls.begin(), script.calls.end(), "verify");
  EXPECT_EQ(std::vector<std::string>(script.calls.begin(), firstVerify),
            (std::vector<std::string>{"hello", "loadTask", "captureGraph", "profileReference", "buildCandidate", "baseline"}));
  EXPECT_EQ(calls("baseline"), 2);  // eager, then torch.compile after c1 verified
  EXPECT_EQ(calls("buildCandidate"), 1);  // c2 is built by its verify
  EXPECT_EQ(calls("verify"), 2);
  EXPECT_EQ(logsContaining("while c1's build ran)"), 1);
  EXPECT_EQ(logsContaining("steps: hello "), 1);
}

// A worker that cannot start the build early costs the job nothing: the timing and verify go on.
TEST_F(OptimizeLoopTest, ABuildThatCannotStartEarlyIsLeftToVerify) {
  script.verdicts = {ok(passingVerdict())};
  script.intercept = [](const std::string& method) -> std::optional<WorkerReply> {
    if (method == "buildCandidate") return error("unknown_method", "no method 'buildCandidate'");
    return std::nullopt;
  };
  options.budget.iterations = 1;
  EXPECT_EQ(run().bestCandidateId, "c1");
  EXPECT_EQ(logsContaining("did not start beside the timing"), 1);
  EXPECT_EQ(calls("baseline"), 2);
}

// torch.compile's compile is not on the way to the first verified candidate: the first timing is
// eager's alone and c1's verify does not ask for torch.compile; after it, both are timed side by side
// (the later verifies read them from the cache), and c1, verified before, gets its speedup over
// torch.compile as the verifier computes it: over eager, over torch.compile's over eager.
TEST_F(OptimizeLoopTest, TorchCompileIsTimedAfterTheFirstVerifiedCandidate) {
  script.verdicts = {ok(passingVerdict()), ok(passingVerdict(0.9))};
  options.budget.iterations = 2;
  json timed = suite()["methods"]["baseline"]["result"];
  const double eagerMs = timed["eager"]["median_ms"];
  timed["compile"] = {{"median_ms", eagerMs / 1.25}};
  script.intercept = [&](const std::string& method) -> std::optional<WorkerReply> {
    if (method == "baseline" && script.sent["baseline"].back().value("compile", true)) return ok(timed);
    return std::nullopt;
  };
  run();
  ASSERT_EQ(script.sent["baseline"].size(), 2u);
  EXPECT_FALSE(script.sent["baseline"][0]["compile"]);
  EXPECT_TRUE(script.sent["baseline"][1]["compile"]);
  ASSERT_EQ(script.sent["verify"].size(), 2u);
  EXPECT_FALSE(script.sent["verify"][0]["compileBaseline"]);
  EXPECT_TRUE(script.sent["verify"][1]["compileBaseline"]);
  const auto verifies = [&](int n) {
    return std::find_if(script.calls.begin(), script.calls.end(), [&, seen = 0](const std::string& c) mutable {
      return c == "verify" && ++seen == n;
    });
  };
  EXPECT_EQ(std::count(verifies(1), verifies(2), "baseline"), 1) << "torch.compile is timed between c1 and c2";
  std::vector<protocol::Candidate> c1;
  for (const auto& e : context->events)
    if (auto* c = std::get_if<protocol::CandidateParams>(&e); c && c->candidate.id == "c1") c1.push_back(c->candidate);
  ASSERT_EQ(c1.size(), 2u);
  EXPECT_FALSE(c1[0].speedupCompile);
  ASSERT_TRUE(c1[1].speedupCompile && c1[1].speedupEager);
  EXPECT_NEAR(*c1[1].speedupCompile, *c1[1].speedupEager / 1.25, 1e-9);
  EXPECT_EQ(c1[1].status, "verified");
  EXPECT_EQ(logsContaining("x torch.compile (its speedup over eager, over torch.compile's)"), 1);
}

// A baseline already cached with torch.compile (an earlier job on the task) is timed once, and every
// verify reads torch.compile's from it.
TEST_F(OptimizeLoopTest, ACachedTorchCompileTimingIsNotTakenAgain) {
  script.verdicts = {ok(passingVerdict()), ok(passingVerdict(0.9))};
  options.budget.iterations = 2;
  json cached = suite()["methods"]["baseline"]["result"];
  cached["compile"] = {{"median_ms", 0.04}};
  script.intercept = [&](const std::string& method) -> std::optional<WorkerReply> {
    if (method == "baseline") return ok(cached);
    return std::nullopt;
  };
  run();
  EXPECT_EQ(calls("baseline"), 1);
  ASSERT_EQ(script.sent["verify"].size(), 2u);
  EXPECT_TRUE(script.sent["verify"][0]["compileBaseline"]);
  EXPECT_EQ(logsContaining("its speedup over eager, over torch.compile's"), 0);
}

TEST_F(OptimizeLoopTest, VerifiedCandidateProfileLandsOnTheLinesItReplaces) {
  script.verdicts = {ok(passingVerdict())};
  options.budget.iterations = 1;
  run();
  auto ps = profiles();
  ASSERT_EQ(ps.size(), 2u);  // the reference's (BASELINE), then the candidate's
  const auto& p = ps[1];
  EXPECT_EQ(p.subject, "c1");
  EXPECT_EQ(p.uri, "file:///m.py");
  EXPECT_NEAR(p.totalGpuTimeUs, (24.895 + 25.76 + 25.504) / 3, 1e-6);  // the trace's mean over 3 forwards
  ASSERT_EQ(p.lines.size(), 1u);
  const auto& line = p.lines[0];
  EXPECT_EQ(line.line, 11);  // task "chain"'s first line: chain_vec4 is named after it
  EXPECT_EQ(line.kernels, std::vector<std::string>{"chain_vec4"});
  EXPECT_EQ(line.share, 1.0);
  EXPECT_EQ(line.bound, "memory");
  ASSERT_TRUE(line.achievedPct);
  EXPECT_GT(*line.achievedPct, 80);  // against the recorded H200 copy ceiling
  ASSERT_TRUE(line.topStall);
  EXPECT_NE(line.inlineText.find("memory-bound"), std::string::npos) << line.inlineText;
  // The log line the bench runner reads, and the kernels line.
  EXPECT_EQ(logsContaining("c1 reaches 49% of the memory-roofline floor"), 1);
  EXPECT_EQ(logsContaining("[roofline_fraction=0.493]"), 1);
  EXPECT_EQ(logsContaining("c1: 1 kernel(s)"), 1);
}

// A verified candidate's edit imports its program, whose files wait in the candidate's folder
// until Accept copies them beside the model: the loader, and the .cu with its ABI header inlined.
TEST_F(OptimizeLoopTest, VerifiedCandidateCarriesItsProgramFiles) {
  json verdict = passingVerdict();
  verdict["build"] = {{"ok", true}, {"library", "/cache/builds/c1/libcandidate.so"}};
  script.verdicts = {ok(verdict)};
  options.budget.iterations = 1;
  options.kernelsFolder = "fast_kernels";
  run();
  const protocol::Candidate* c = nullptr;
  for (const auto& e : context->events)
    if (auto* p = std::get_if<protocol::CandidateParams>(&e); p && p->candidate.status == "verified") c = &p->candidate;
  ASSERT_TRUE(c);
  EXPECT_EQ(c->newText, "run(fast_kernels/m.cu)");
  ASSERT_EQ(c->files.size(), 2u);
  EXPECT_EQ(c->files[0].path, "fast_kernels/__init__.py");
  EXPECT_EQ(c->files[1].path, "fast_kernels/m.cu");
  EXPECT_EQ(fs::path(c->files[1].source), root / "jobs/j/candidates/c1/program/fast_kernels/m.cu");
  std::ifstream cu(c->files[1].source), loader(c->files[0].source);
  std::stringstream cuText, loaderText;
  cuText << cu.rdbuf();
  loaderText << loader.rdbuf();
  EXPECT_EQ(cuText.str().find("#include \"stitch_abi.h\""), std::string::npos) << cuText.str();
  EXPECT_NE(cuText.str().find("typedef struct StitchTensor"), std::string::npos);
  EXPECT_NE(cuText.str().find("// kernels of c1"), std::string::npos);
  EXPECT_NE(loaderText.str().find("def load_program("), std::string::npos);
  EXPECT_EQ(loaderText.str().find("stitchcuda_harness"), std::string::npos);
}

// A plan with library math is held to the higher of its two floors: 2 GFLOP at the recorded
// 51.25 TFLOP/s FP32 ceiling is 0.039 ms, above the 0.024 ms the bytes need.
TEST_F(OptimizeLoopTest, LibraryMathIsHeldToTheComputeFloorWhenItIsHigher) {
  script.verdicts = {ok(passingVerdict())};
  options.budget.iterations = 1;
  brain.math = {{2e9}};
  run();
  EXPECT_EQ(logsContaining("c1 reaches 80% of the compute-roofline floor (0.039 ms for 2.0 GFLOP at 51.3 TFLOP/s FP32)"), 1);
  EXPECT_EQ(logsContaining("[roofline_fraction=0.802]"), 1);
  EXPECT_EQ(logsContaining("memory-roofline"), 0);
}

// The same math in TF32 (a convolution as eager runs it) is bound by the recorded 409 TFLOP/s
// TF32 ceiling: 0.005 ms, under the bytes' 0.024 ms, so the memory floor holds; against the FP32
// cores it read 80%, and a call at TF32 speed read far past 100%.
TEST_F(OptimizeLoopTest, Tf32MathIsHeldToTheTensorCoresCeiling) {
  script.verdicts = {ok(passingVerdict())};
  options.budget.iterations = 1;
  brain.math = {{2e9, true}};
  run();
  EXPECT_EQ(logsContaining("c1 reaches 49% of the memory-roofline floor"), 1);
  EXPECT_EQ(logsContaining("compute-roofline"), 0);
  brain.math = {{2e10, true}};  // 0.049 ms at 409 TFLOP/s, above the bytes' floor
  script.verdicts = {ok(passingVerdict())};
  run("j2");
  EXPECT_EQ(logsContaining("compute-roofline floor (0.049 ms for 20.0 GFLOP at 409.0 TFLOP/s TF32 tensor cores)"), 1);
}

// A draft made from a plan the brain changed while refining (a convolution left to PyTorch after
// no form of its cuDNN call ran) is announced: the editor gets the plan again, and the compute
// floor takes the new plan's math (none left here, so the bytes' floor holds).
TEST_F(OptimizeLoopTest, APlanChangedWhileRefiningIsAnnounced) {
  script.verdicts = {ok(failingVerdict()), ok(passingVerdict())};
  options.budget.iterations = 2;
  brain.math = {{2e10, true}};  // 0.049 ms at the TF32 ceiling, above the bytes' 0.024 ms
  loop::BrainPlan changed;
  changed.plan.uncovered = {"convolution (line 12): its cuDNN call (step k0) had no form that ran on the GPU"};
  changed.generatable = true;
  brain.changedPlan = changed;
  run();
  std::vector<protocol::PlanParams> plans;
  for (const auto& e : context->events)
    if (auto* p = std::get_if<protocol::PlanParams>(&e)) plans.push_back(*p);
  ASSERT_GE(plans.size(), 2u);  // the first plan, the changed one (and the last statuses)
  EXPECT_TRUE(plans[0].uncovered.empty());
  EXPECT_EQ(plans[1].uncovered, changed.plan.uncovered);
  EXPECT_EQ(plans.back().uncovered, changed.plan.uncovered);
  EXPECT_EQ(logsContaining("the plan changed: 0 step(s), 1 operator(s) left in PyTorch"), 1);
  EXPECT_EQ(logsContaining("c2 reaches 49% of the memory-roofline floor"), 1);
}

TEST_F(OptimizeLoopTest, FeedbackOfEachRoundReachesTheBrain) {
  script.verdicts = {ok(failingVerdict()), ok(passingVerdict())};
  options.budget.iterations = 3;
  run();
  ASSERT_EQ(brain.feedback.size(), 3u);
  EXPECT_FALSE(brain.feedback[0]);

  const auto& fix = brain.feedback[1];
  ASSERT_TRUE(fix && fix->verifier);
  EXPECT_FALSE(fix->passed);
  EXPECT_EQ(fix->verifier->mode, "fix");
  EXPECT_EQ(fix->verifier->category, "output_mismatch");  // the first failed check, alone
  EXPECT_NE(fix->verifier->diagnosis.find("max abs err 13.5"), std::string::npos) << fix->verifier->diagnosis;
  EXPECT_FALSE(fix->verifier->suggestion.empty());

  const auto& opt = brain.feedback[2];
  ASSERT_TRUE(opt && opt->verifier);
  EXPECT_TRUE(opt->passed);
  EXPECT_EQ(opt->verifier->mode, "optimize");
  EXPECT_EQ(opt->verifier->category, "memory_bound_at_ceiling");
  EXPECT_EQ(opt->metricsSource, "ncu");
  EXPECT_EQ(opt->bound, "memory");
  ASSERT_TRUE(opt->achievedPct);
  EXPECT_GT(*opt->achievedPct, 80);
  ASSERT_TRUE(opt->floorFraction);
  EXPECT_NEAR(*opt->floorFraction, 0.0240042 / 0.048656, 1e-3);
  bool memoryPct = false;
  for (const auto& e : opt->verifier->evidence) memoryPct = memoryPct || (e.metric == "memory_roofline_pct" && e.value > 80);
  EXPECT_TRUE(memoryPct);
  // The trace's kernels in launch order, per forward, for a brain that times its own steps.
  EXPECT_GT(opt->tracedForwards, 0);
  ASSERT_FALSE(opt->launches.empty());
  EXPECT_NE(opt->launches.front().name.find("chain_vec4"), std::string::npos) << opt->launches.front().name;
  EXPECT_EQ(opt->launches.back().forward, opt->tracedForwards - 1);
  EXPECT_EQ(logsContaining("c2 feedback [optimize/memory_bound_at_ceiling]"), 1);
  EXPECT_EQ(logsContaining("c1 feedback [fix/output_mismatch]"), 1);
  // ncu's CSV stays beside c2's verdict for `stitchcuda score`; c1 failed and was never profiled.
  std::ifstream csv(root / "jobs/j/candidates/c2/ncu.csv");
  const std::string text((std::istreambuf_iterator<char>(csv)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("chain_vec4"), std::string::npos) << text.substr(0, 400);  // the kernel ncu measured
  EXPECT_FALSE(fs::exists(root / "jobs/j/candidates/c1/ncu.csv"));
}

TEST_F(OptimizeLoopTest, MissingNcuIsSaidOnceAndTimingCarriesTheJob) {
  limits.profile.ncu = root / "nowhere" / "ncu";
  script.verdicts = {ok(passingVerdict()), ok(passingVerdict(0.9)), ok(passingVerdict(0.8))};
  options.budget.iterations = 3;
  brain.drafts = 3;
  auto finished = run();
  EXPECT_EQ(finished.state, "improved");
  EXPECT_EQ(finished.bestCandidateId, "c3");
  EXPECT_EQ(logsContaining("Nsight Compute unavailable"), 1);
  EXPECT_EQ(logsContaining("falls back to CUDA events"), 1);
  EXPECT_EQ(calls("ncuTarget"), 0);
  EXPECT_EQ(profiles().size(), 4u);  // the reference and every verified candidate
  ASSERT_TRUE(brain.feedback[1] && brain.feedback[1]->verifier);
  EXPECT_EQ(brain.feedback[1]->metricsSource, "trace");
  EXPECT_EQ(brain.feedback[1]->verifier->category, "below_memory_floor");
  EXPECT_FALSE(brain.feedback[1]->bound);
}

TEST_F(OptimizeLoopTest, CounterPermissionIsSaidOnceAndNcuIsNotAskedAgain) {
  limits.profile.ncu = writeNcu(root / "ncu-denied", "ncu_memory_bound.csv",
                                "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
                                "Performance Counters on the target device 0.");
  script.verdicts = {ok(passingVerdict()), ok(passingVerdict(0.9))};
  options.budget.iterations = 2;
  auto finished = run();
  EXPECT_EQ(finished.state, "improved");
  EXPECT_EQ(ncuRuns(root / "ncu-denied"), 1);
  EXPECT_EQ(logsContaining("ERR_NVGPUCTRPERM"), 1);
  EXPECT_EQ(brain.feedback[1]->metricsSource, "trace");
}

TEST_F(OptimizeLoopTest, NcuRunsOnlyForANewBestAndWithinTheJobLimit) {
  limits.profile.ncuRuns = 2;
  // c1 new best (ncu), c2 slower (no ncu), c3 new best (ncu), c4 new best but the job's runs are spent.
  script.verdicts = {ok(passingVerdict()), ok(passingVerdict(1.5)), ok(passingVerdict(0.8)), ok(passingVerdict(0.7))};
  options.budget.iterations = 5;
  brain.drafts = 4;
  run();
  EXPECT_EQ(ncuRuns(root / "ncu"), 2);
  ASSERT_EQ(brain.feedback.size(), 5u);
  std::vector<std::string> sources;
  for (std::size_t i = 1; i < brain.feedback.size(); ++i) sources.push_back(brain.feedback[i]->metricsSource);
  EXPECT_EQ(sources, (std::vector<std::string>{"ncu", "trace", "ncu", "trace"}));
  EXPECT_EQ(logsContaining("Nsight Compute run(s) of this job are spent"), 1);
  EXPECT_EQ(logsContaining("Nsight Compute unavailable"), 0);
}

TEST_F(OptimizeLoopTest, CeilingsAreMeasuredOncePerGpuAndCached) {
  script.verdicts = {ok(passingVerdict()), ok(passingVerdict())};
  options.budget.iterations = 1;
  limits.profile.gemmCeilingProgram = "// the GEMM search's program";
  run("first");
  run("second");
  EXPECT_EQ(calls("measureCeilings"), 1);
  EXPECT_EQ(script.ceilingsParams.value("gemmProgram", ""), "// the GEMM search's program");
  EXPECT_TRUE(fs::exists(root / "jobs/.baseline-cache/roofline-v3/NVIDIA_H200.json"));
  EXPECT_EQ(logsContaining("measured 2026-11-22T03:09:59Z"), 1);  // the second job read the cache
}

TEST_F(OptimizeLoopTest, CancelKeepsTheBestVerifiedCandidate) {
  script.verdicts = {ok(passingVerdict())};
  brain.drafts = 3;
  int verifies = 0;
  script.intercept = [&](const std::string& method) -> std::optional<WorkerReply> {
    if (method != "verify" || ++verifies < 2) return std::nullopt;
    cancel.cancel();  // the user cancels while c2 is being judged
    return error("cancelled", "cancelled by the client");
  };
  auto finished = run();
  EXPECT_EQ(finished.state, "cancelled");
  EXPECT_EQ(finished.bestCandidateId, "c1");
  ASSERT_TRUE(finished.speedupEager);
  EXPECT_NEAR(*finished.speedupEager, 2.4637, 1e-3);
  EXPECT_EQ(script.calls.back(), "verify");  // nothing ran after the cancel
  for (const auto& e : context->events)
    if (auto* c = std::get_if<protocol::CandidateParams>(&e)) {
      EXPECT_EQ(c->candidate.id, "c1");  // c2 stays unjudged
    }
}

TEST_F(OptimizeLoopTest, IterationBudgetBoundsTheCandidates) {
  for (int i = 0; i < 5; ++i) script.verdicts.push_back(ok(passingVerdict()));
  brain.drafts = 5;
  options.budget.iterations = 2;
  run();
  EXPECT_EQ(brain.feedback.size(), 2u);
  EXPECT_EQ(calls("verify"), 2);
}

TEST_F(OptimizeLoopTest, WallTimeBudgetEndsTheJobBetweenCandidates) {
  for (int i = 0; i < 3; ++i) script.verdicts.push_back(ok(passingVerdict()));
  brain.drafts = 3;
  options.budget.iterations = 3;
  options.budget.wallSeconds = 0.2;
  script.intercept = [&](const std::string& method) -> std::optional<WorkerReply> {
    if (method == "verify") std::this_thread::sleep_for(std::chrono::milliseconds(300));
    return std::nullopt;
  };
  auto finished = run();
  EXPECT_EQ(calls("verify"), 1);
  EXPECT_EQ(finished.state, "improved");
  EXPECT_EQ(logsContaining("wall-time budget of 0 s spent after 1 candidate(s)"), 1);
}

// A wrong answer's distances from the fp64 truth (the finding's data) reach the brain as the fix
// round's evidence: what tells eager's own rounding from the candidate's (LayoutSearch.h).
TEST_F(OptimizeLoopTest, AWrongAnswersDistancesFromTheTruthReachTheBrain) {
  json wrong = failingVerdict();
  wrong["failed_checks"] = {"output_mismatch"};
  wrong["findings"] = {{{"check", "output_mismatch"},
                        {"message", "output 0, trial 5: 9946/10000 elements outside atol=0.0001 rtol=0.0001"},
                        {"data", {{"trial", 5}, {"output", 0}, {"candidate_truth_err", 0.00205}, {"reference_truth_err", 1.3e-6}}}}};
  script.verdicts = {ok(wrong), ok(passingVerdict())};
  options.budget.iterations = 2;
  run();
  ASSERT_EQ(brain.feedback.size(), 2u);
  ASSERT_TRUE(brain.feedback[1] && brain.feedback[1]->verifier);
  std::map<std::string, double> evidence;
  for (const auto& e : brain.feedback[1]->verifier->evidence) evidence[e.metric] = e.value;
  EXPECT_EQ(evidence, (std::map<std::string, double>{{"candidate_truth_err", 0.00205}, {"reference_truth_err", 1.3e-6}}));
  EXPECT_EQ(logsContaining("(candidate_truth_err=0.00205 abs err, reference_truth_err=1.3e-06 abs err)"), 1);
}

TEST_F(OptimizeLoopTest, TwoFailuresInARowReplan) {
  script.verdicts = {ok(failingVerdict()), ok(failingVerdict()), ok(passingVerdict())};
  brain.drafts = 3;
  options.budget.iterations = 3;
  auto finished = run();
  EXPECT_EQ(brain.plans, (std::vector<bool>{false, true}));
  EXPECT_EQ(finished.bestCandidateId, "c3");
  std::vector<std::string> phases;
  for (const auto& l : logs())
    if (phases.empty() || phases.back() != l.phase) phases.push_back(l.phase);
  // torch.compile is timed after c3, the first candidate that passed: the failures are followed at
  // once by the next candidate.
  EXPECT_EQ(phases, (std::vector<std::string>{"BASELINE", "PLAN", "CODE", "BASELINE", "VERIFY", "REFINE", "VERIFY",
                                              "REPLAN", "CODE", "VERIFY", "PROFILE", "BASELINE", "DONE"}));
  EXPECT_FALSE(brain.feedback[2]);  // a new plan starts without the old plan's feedback
}

TEST_F(OptimizeLoopTest, TwoStagnantVerifiedCandidatesReplan) {
  // c2 and c3 are no faster than c1 (within 2%); c4 comes from the new plan and wins.
  script.verdicts = {ok(passingVerdict()), ok(passingVerdict(0.99)), ok(passingVerdict(1.05)), ok(passingVerdict(0.5))};
  brain.drafts = 4;
  options.budget.iterations = 4;
  auto finished = run();
  EXPECT_EQ(brain.plans, (std::vector<bool>{false, true}));
  EXPECT_EQ(finished.bestCandidateId, "c4");
  bool said = false;
  for (const auto& l : logs())
    said = said || (l.phase == "REPLAN" && l.message.find("2 verified candidates in a row no faster than c2") == 0);
  EXPECT_TRUE(said);  // c2 (0.99) became the best, but by less than the noise margin
}

TEST_F(OptimizeLoopTest, StagnationLeavesThePlanOfABrainThatCannotReplanForIt) {
  script.verdicts = {ok(passingVerdict()), ok(passingVerdict()), ok(passingVerdict()), ok(passingVerdict())};
  brain.drafts = 4;
  brain.replansOnStagnation = false;
  options.budget.iterations = 4;
  run();
  EXPECT_EQ(brain.plans, (std::vector<bool>{false}));
}

// The verifier's own failure (issue 20: out of memory in its comparison, blamed on the candidate and
// turned into "Remove the construct the internal_error guard names") is the verifier's: the
// candidate stays unverified, no fix advice reaches the brain, and the job says the verifier failed.
TEST_F(OptimizeLoopTest, VerifierFailureIsNeverAdviceForTheCandidate) {
  json broken = {{"passed", false}, {"status", "verifier_error"}, {"failed_checks", {"verifier_error"}},
                 {"findings", {{{"check", "verifier_error"}, {"evidence", "verifier"},
                                {"message", "the verifier failed in its correctness stage, not the candidate: "
                                            "OutOfMemoryError: CUDA out of memory. Tried to allocate 12.00 GiB"}}}}};
  for (const auto& reply : {ok(broken), error("internal_error", "RuntimeError: CUDA out of memory")}) {
    script.verdicts = {reply, ok(passingVerdict())};
    brain = BrainRecord{};
    options.budget.iterations = 2;
    auto finished = run();
    EXPECT_EQ(calls("verify"), 1) << "the next candidate would meet the same verifier";
    script.calls.clear();
    ASSERT_EQ(brain.feedback.size(), 1u);  // the brain was never asked to refine c1
    EXPECT_EQ(finished.state, "noImprovement");
    EXPECT_NE(finished.message.find("the verifier failed"), std::string::npos) << finished.message;
    EXPECT_EQ(logsContaining("the verifier failed on c1, not the candidate"), 1);
    EXPECT_EQ(logsContaining("feedback [fix/"), 0);
    for (const auto& e : context->events) {
      if (auto* c = std::get_if<protocol::CandidateParams>(&e)) {
        EXPECT_EQ(c->candidate.status, "unverified");
      }
    }
  }
}

// A verify that passes its deadline while the harness says only the verifier's own work runs (the
// reference's forward, the fp64 truth, a comparison) is the verifier's failure: the candidate stays
// unverified and no fix advice reaches the brain. The same deadline inside the candidate's forward stays
// the candidate's.
TEST_F(OptimizeLoopTest, ADeadlineInTheVerifiersOwnWorkIsTheVerifiers) {
  script.verifyEvents = {{{"event", "verifyStage"}, {"stage", "correctness"}, {"running", "candidate"}},
                         {{"event", "verifyStage"}, {"stage", "correctness"}, {"running", "verifier"}}};
  script.verdicts = {error("deadline_exceeded", "verify took longer than 300 s; the worker was killed"),
                     ok(passingVerdict())};
  options.budget.iterations = 2;
  auto finished = run();
  EXPECT_EQ(calls("verify"), 1) << "the next candidate would meet the same verifier";
  EXPECT_EQ(finished.state, "noImprovement");
  EXPECT_NE(finished.message.find("verifier_error: its own work (correctness stage) was still running at the deadline"),
            std::string::npos)
      << finished.message;
  EXPECT_EQ(logsContaining("feedback [fix/"), 0);
  EXPECT_EQ(brain.feedback.size(), 1u);  // never asked to refine c1
}

TEST_F(OptimizeLoopTest, ADeadlineInTheCandidatesForwardStaysTheCandidates) {
  script.verifyEvents = {{{"event", "verifyStage"}, {"stage", "correctness"}, {"running", "verifier"}},
                         {{"event", "verifyStage"}, {"stage", "correctness"}, {"running", "candidate"}}};
  script.verdicts = {error("deadline_exceeded", "verify took longer than 300 s; the worker was killed"),
                     ok(passingVerdict())};
  options.budget.iterations = 2;
  auto finished = run();
  EXPECT_EQ(calls("verify"), 2);
  EXPECT_EQ(finished.state, "improved");
  EXPECT_EQ(logsContaining("c1 could not be judged"), 1);
}

// --record-transitions: one training record per CODE/REFINE step, with what the Coder was given
// (a refinement: the previous round's feedback and candidate), its verdict, the feedback it produced
// and the harness's rubric score; each judged candidate's verdict is kept beside it. Without the
// option nothing is scored.
TEST_F(OptimizeLoopTest, RecordedTransitionsCarryEachStepWithWhatItWasGiven) {
  script.verdicts = {ok(failingVerdict()), ok(passingVerdict())};
  options.budget.iterations = 2;
  limits.recordTransitions = root / "transitions";
  script.intercept = [](const std::string& method) -> std::optional<WorkerReply> {
    if (method == "score") return ok({{"schema", "stitchcuda.score/1"}, {"reward", 0.5}});
    return std::nullopt;
  };
  run();
  auto read = loop::readTransitions(root / "transitions" / "j.transitions.jsonl");
  ASSERT_TRUE(read.ok()) << read.error();
  ASSERT_EQ(read.value().size(), 2u);
  const auto& first = read.value()[0];
  const auto& second = read.value()[1];
  EXPECT_EQ(first.skill, "generate");
  EXPECT_EQ(first.candidateId, "c1");
  EXPECT_EQ(first.verdict["failed_checks"], failingVerdict()["failed_checks"]);
  ASSERT_TRUE(first.profile);  // the fix-mode feedback c1 produced...
  EXPECT_EQ(first.profile->at("feedback")["mode"], "fix");
  EXPECT_EQ(second.skill, "refine");  // ...is what c2 was given
  EXPECT_EQ(second.feedback, first.profile->at("feedback"));
  ASSERT_TRUE(second.profile);  // a verified candidate's profile: the timing against its floor
  EXPECT_EQ(second.profile->at("medianMs"), passingVerdict()["timing"]["candidate"]["median_ms"]);
  EXPECT_GT(second.profile->at("floorFraction").get<double>(), 0.0);
  EXPECT_EQ(second.previousCandidateId, "c1");
  EXPECT_TRUE(second.verdict["passed"].get<bool>());
  EXPECT_EQ(second.reward->at("reward"), 0.5);
  EXPECT_NE(second.files.at("candidate.cu").find("// kernels of c2"), std::string::npos);
  EXPECT_EQ(calls("score"), 2);
  for (const char* c : {"c1", "c2"}) EXPECT_TRUE(fs::is_regular_file(root / "jobs/j/candidates" / c / "verdict.json")) << c;
}

TEST_F(OptimizeLoopTest, NothingIsScoredWithoutRecordTransitions) {
  script.verdicts = {ok(passingVerdict())};
  options.budget.iterations = 1;
  run();
  EXPECT_EQ(calls("score"), 0);
}
