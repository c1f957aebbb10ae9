// Pins how the bench reads one `stitchcuda optimize --json` run into a row (the best verified
// candidate's speedups, its roofline fraction from the PROFILE line, the first failed check, the
// no-GPU verdict, and crashes, timeouts and garbage as errors with a reason), results.json's row
// format both ways, and which files of a folder are tasks and at which level.
#include "server/BenchCommand.h"
#include "server/BenchResults.h"
#include "server/BenchTasks.h"

#include <gtest/gtest.h>

#include <fstream>
#include <unistd.h>

using namespace stitch::server;
using namespace stitch::server::bench;
using stitch::process::ChildOutcome;
namespace fs = std::filesystem;

namespace {

std::string candidateLine(const std::string& id, const std::string& status, std::optional<double> eager,
                          std::optional<double> compile, std::vector<std::string> failed = {}) {
  json c{{"id", id},     {"taskId", "k0"},          {"title", "fused " + id}, {"status", status},
         {"range", json::object()}, {"failedChecks", failed}, {"newText", ""},         {"documentVersion", 0}};
  if (eager) c["speedupEager"] = *eager;
  if (compile) c["speedupCompile"] = *compile;
  return json{{"method", "stitchcuda/candidate"}, {"params", {{"jobId", "j"}, {"uri", "file:///t.py"}, {"candidate", c}}}}
      .dump();
}

std::string logLine(const std::string& phase, const std::string& level, const std::string& message) {
  return json{{"method", "stitchcuda/log"},
              {"params", {{"jobId", "j"}, {"level", level}, {"phase", phase}, {"message", message}}}}
      .dump();
}

std::string finishedLine(const std::string& state, const std::string& message, std::optional<std::string> best = {}) {
  json p{{"jobId", "j"}, {"state", state}, {"message", message}};
  if (best) p["bestCandidateId"] = *best;
  return json{{"method", "stitchcuda/jobFinished"}, {"params", p}}.dump();
}

ChildOutcome exited(int code, double seconds = 10) {
  ChildOutcome o;
  o.exitCode = code;
  o.seconds = seconds;
  return o;
}

const BenchTask kTask{"/suite/level2/13_bias_gelu.py", "level2/13_bias_gelu", 2};

}  // namespace

TEST(OptimizeRunReader, TakesTheBestVerifiedCandidateWithItsRooflineAndTiming) {
  OptimizeRunReader reader;
  reader.line(logLine("BASELINE", "info", "harness: Python 3.12, PyTorch 2.11.0+cu130, GPU NVIDIA H100, driver 580"));
  reader.line(candidateLine("c1", "unverified", {}, {}));
  reader.line(candidateLine("c1", "failed", {}, {}, {"output_mismatch", "nan_check"}));
  reader.line(logLine("VERIFY", "warning", "c1 failed: output_mismatch: max abs error 3.1"));
  reader.line(candidateLine("c2", "verified", 2.5, 1.25));
  reader.line(logLine("PROFILE", "info",
                      "c2 reaches 81% of the memory-roofline floor (0.120 ms for 402.7 MB at 3350 GB/s) "
                      "[roofline_fraction=0.812]"));
  reader.line(candidateLine("c3", "verified", 1.9, 0.9));
  reader.line(logLine("PROFILE", "info", "c3 reaches 60% of the floor [roofline_fraction=0.600]"));
  reader.line(logLine("DONE", "info", "best verified candidate: c2"));
  reader.line(finishedLine("improved", "verified c2, 2.50x faster than eager", "c2"));
  json report{{"timing", {{"seconds", 40.0}, {"firstVerifiedCandidate", "c2"}, {"firstVerifiedSeconds", 21.5}}}};
  TaskResult r = reader.result(kTask, exited(0), report);
  EXPECT_FALSE(r.error);
  EXPECT_EQ(r.task, "level2/13_bias_gelu");
  EXPECT_EQ(r.level, 2);
  EXPECT_EQ(r.state, "improved");
  ASSERT_TRUE(r.verified());
  EXPECT_EQ(*r.best, "c2");
  EXPECT_DOUBLE_EQ(*r.speedupEager, 2.5);
  EXPECT_DOUBLE_EQ(*r.speedupCompile, 1.25);
  EXPECT_DOUBLE_EQ(*r.rooflineFraction, 0.812);
  EXPECT_DOUBLE_EQ(*r.firstVerifiedSeconds, 21.5);
  EXPECT_EQ(r.candidatesTried, 3);
  EXPECT_EQ(r.firstFailedCheck, "output_mismatch");
  EXPECT_FALSE(r.needsGpu);
  ASSERT_EQ(r.candidates.size(), 3u);
  EXPECT_DOUBLE_EQ(*r.candidates[2].rooflineFraction, 0.6);
  ASSERT_EQ(r.log.size(), 2u);  // the warning and the DONE line
  EXPECT_EQ(r.log[1], "[DONE] best verified candidate: c2");
}

TEST(OptimizeRunReader, WithoutAGpuTheRowSaysVerificationNeedsOne) {
  OptimizeRunReader reader;
  reader.line(candidateLine("c1", "unverified", {}, {}));
  reader.line(finishedLine("noImprovement", "planned, generated and compiled a candidate; timing and verification "
                                            "need a GPU, and none is visible"));
  TaskResult r = reader.result(kTask, exited(3), std::nullopt);
  EXPECT_FALSE(r.error);
  EXPECT_FALSE(r.verified());
  EXPECT_TRUE(r.needsGpu);
  EXPECT_EQ(r.candidatesTried, 1);
  EXPECT_EQ(*r.exitCode, 3);
}

TEST(OptimizeRunReader, AFailedJobIsAnErrorWithTheHarnessReason) {
  OptimizeRunReader reader;
  reader.line(finishedLine("failed", "/jobs/x/t.py:2: importing t.py: RuntimeError: boom [task_import_error]"));
  TaskResult r = reader.result(kTask, exited(1), std::nullopt);
  EXPECT_TRUE(r.error);
  EXPECT_EQ(r.errorReason, "/jobs/x/t.py:2: importing t.py: RuntimeError: boom [task_import_error]");
}

TEST(OptimizeRunReader, GarbageAndACrashAreAnErrorNamingBoth) {
  OptimizeRunReader reader;
  reader.line(candidateLine("c1", "unverified", {}, {}));
  reader.line("Segmentation fault in the middle of nowhere");
  reader.line("[1, 2, 3]");
  ChildOutcome crashed;
  crashed.signal = 11;
  crashed.stderrTail = "some warning\nfatal: it broke\n";
  TaskResult r = reader.result(kTask, crashed, std::nullopt);
  EXPECT_TRUE(r.error);
  EXPECT_NE(r.errorReason.find("killed by signal 11"), std::string::npos) << r.errorReason;
  EXPECT_NE(r.errorReason.find("2 line(s) of its output were not JSON: Segmentation fault"), std::string::npos)
      << r.errorReason;
  EXPECT_NE(r.errorReason.find("stderr: fatal: it broke"), std::string::npos) << r.errorReason;
  EXPECT_EQ(r.candidatesTried, 1);
}

TEST(OptimizeRunReader, ARunKilledAtTheTimeoutIsAnErrorEvenAfterAVerifiedCandidate) {
  OptimizeRunReader reader;
  reader.line(candidateLine("c1", "verified", 3.0, 2.0));
  ChildOutcome late;
  late.timedOut = true;
  late.signal = 9;
  late.seconds = 150.2;
  TaskResult r = reader.result(kTask, late, std::nullopt);
  EXPECT_TRUE(r.error);
  EXPECT_FALSE(r.verified());
  EXPECT_NE(r.errorReason.find("timed out after 150 s"), std::string::npos) << r.errorReason;
}

// A job stopped at the timeout is cancelled and says how it ended: what it verified by then counts,
// with a note; a job that verified nothing is still an error.
TEST(OptimizeRunReader, AJobCutAtTheTimeoutKeepsItsBestVerifiedCandidate) {
  ChildOutcome late;
  late.timedOut = true;
  late.exitCode = 130;
  late.seconds = 100.4;
  OptimizeRunReader kept;
  kept.line(candidateLine("c1", "verified", 2.5, 1.6));
  kept.line(candidateLine("c2", "failed", {}, {}, {"output_mismatch"}));
  kept.line(finishedLine("cancelled", "cancelled; kept c1", "c1"));
  TaskResult r = kept.result(kTask, late, std::nullopt);
  EXPECT_FALSE(r.error);
  ASSERT_TRUE(r.verified());
  EXPECT_EQ(*r.best, "c1");
  EXPECT_EQ(*r.speedupEager, 2.5);
  ASSERT_FALSE(r.log.empty());
  EXPECT_NE(r.log.back().find("best verified candidate is kept"), std::string::npos) << r.log.back();

  OptimizeRunReader none;
  none.line(candidateLine("c1", "failed", {}, {}, {"output_mismatch"}));
  none.line(finishedLine("cancelled", "cancelled"));
  TaskResult n = none.result(kTask, late, std::nullopt);
  EXPECT_TRUE(n.error);
  EXPECT_FALSE(n.verified());
  EXPECT_NE(n.errorReason.find("timed out"), std::string::npos) << n.errorReason;
}

TEST(BenchResultsJson, ARowSurvivesTheRoundTrip) {
  OptimizeRunReader reader;
  reader.line(candidateLine("c1", "failed", {}, {}, {"shape_mismatch"}));
  reader.line(candidateLine("c2", "verified", 1.5, 0.75));
  reader.line(logLine("PROFILE", "info", "c2 reaches 40% [roofline_fraction=0.400]"));
  reader.line(finishedLine("improved", "verified c2", "c2"));
  TaskResult before = reader.result(kTask, exited(0, 33.5), std::nullopt);
  json j = before;
  EXPECT_EQ(j["verified"], true);
  EXPECT_TRUE(j["error"].is_null());
  TaskResult after = j.get<TaskResult>();
  EXPECT_EQ(json(after), j);
  EXPECT_EQ(*after.best, "c2");
  EXPECT_EQ(after.level, 2);
  EXPECT_EQ(after.firstFailedCheck, "shape_mismatch");

  TaskResult broken;
  broken.task = "t";
  broken.error = true;
  broken.errorReason = "optimize exited with status 1 without a result";
  TaskResult back = json(broken).get<TaskResult>();
  EXPECT_TRUE(back.error);
  EXPECT_EQ(back.errorReason, broken.errorReason);
}

TEST(BenchEnvironment, ComesFromTheHarnessHelloAndComparesGpuAndTorch) {
  json hello{{"python", "3.12.3"}, {"torch", "2.11.0+cu130"}, {"torchCuda", "13.0"}, {"cudaAvailable", true},
             {"gpu", "NVIDIA H100 80GB HBM3"}, {"driver", "580.159.04"}};
  BenchEnvironment e = BenchEnvironment::fromHello(hello);
  EXPECT_EQ(e.describe(), "NVIDIA H100 80GB HBM3, driver 580.159.04, CUDA 13.0, PyTorch 2.11.0+cu130");
  BenchEnvironment sameMachine = json(e).get<BenchEnvironment>();
  sameMachine.driver = "580.200";
  EXPECT_TRUE(e.comparableWith(sameMachine));
  BenchEnvironment h200 = e;
  h200.gpu = "NVIDIA H200";
  EXPECT_FALSE(e.comparableWith(h200));
  BenchEnvironment otherTorch = e;
  otherTorch.torch = "2.10.0";
  EXPECT_FALSE(e.comparableWith(otherTorch));
  BenchEnvironment cpu = BenchEnvironment::fromHello({{"torch", "2.11.0"}, {"gpu", nullptr}, {"driver", nullptr}});
  EXPECT_FALSE(cpu.gpu.has_value());
  EXPECT_EQ(cpu.describe(), "no GPU, driver —, CUDA —, PyTorch 2.11.0");
}

class FindTasks : public ::testing::Test {
protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("stitch-bench-find-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    for (const char* f : {"tasks/level1/01_relu.py", "tasks/level1/02_gelu.py", "tasks/level2/13_bias_gelu.py",
                          "tasks/level10/99_big.py", "tasks/loose.py", "tasks/extra/nested.py",
                          "tasks/level1/__init__.py", "tasks/level1/__pycache__/01_relu.cpython-311.py",
                          "tasks/level1/notes.txt"}) {
      fs::create_directories((root_ / f).parent_path());
      std::ofstream(root_ / f) << "# task\n";
    }
  }
  void TearDown() override { fs::remove_all(root_); }
  std::vector<std::string> keys(const fs::path& p) {
    auto tasks = findTasks(p);
    EXPECT_TRUE(tasks.ok()) << (tasks.ok() ? "" : tasks.error());
    std::vector<std::string> out;
    if (tasks.ok())
      for (const auto& t : tasks.value()) out.push_back(t.key + "@" + std::to_string(t.level));
    return out;
  }
  fs::path root_;
};

TEST_F(FindTasks, EveryPythonFileUnderTheFolderWithItsLevelInLevelOrder) {
  EXPECT_EQ(keys(root_ / "tasks"),
            (std::vector<std::string>{"level1/01_relu@1", "level1/02_gelu@1", "level2/13_bias_gelu@2",
                                      "level10/99_big@10", "extra/nested@0", "loose@0"}));
}

TEST_F(FindTasks, ALevelFolderOrOneTaskKeepsTheSameNames) {
  EXPECT_EQ(keys(root_ / "tasks/level1/"), (std::vector<std::string>{"level1/01_relu@1", "level1/02_gelu@1"}));
  EXPECT_EQ(keys(root_ / "tasks/level2/13_bias_gelu.py"), (std::vector<std::string>{"level2/13_bias_gelu@2"}));
  EXPECT_EQ(keys(root_ / "tasks/loose.py"), (std::vector<std::string>{"loose@0"}));
  auto one = findTasks(root_ / "tasks/level2/13_bias_gelu.py");
  ASSERT_TRUE(one.ok());
  EXPECT_TRUE(one.value()[0].file.is_absolute());
}

TEST_F(FindTasks, AFileThatIsNotPythonOrAMissingPathIsAnError) {
  auto txt = findTasks(root_ / "tasks/level1/notes.txt");
  ASSERT_FALSE(txt.ok());
  EXPECT_NE(txt.error().find("is not a task file"), std::string::npos);
  auto missing = findTasks(root_ / "nothing-here");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("cannot read"), std::string::npos);
}
