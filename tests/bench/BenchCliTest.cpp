// `stitchcuda bench` end to end on a CPU machine: the real binary runs each task through its own
// `optimize` with the real harness (Debian's torch). Pins the exit codes, results.json (every task
// with its level and the no-GPU verdict, a task that raises at import as an error while the others
// still run), results.md's table and summary, --resume running only the missing tasks and refusing
// results from another GPU, and a task past its timeout killed with what it started.
#include "protocol/JsonRpc.h"
#include "tests/cli_support/CliRun.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace fs = std::filesystem;
using stitch::protocol::json;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

using stitch::testing::CliRun;

// From the scratch folder: a relative path (the default --out) lands there, not in the source tree.
CliRun bench(const fs::path& work, const std::string& args) {
  stitch::testing::CliOptions options;
  options.cwd = work;
  return stitch::testing::runCli("bench " + args + " --python " + STITCH_TEST_PYTHON + " --log-level warning", options);
}

int jobFolders(const fs::path& jobs) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(jobs))
    if (e.is_directory() && !e.path().filename().string().starts_with(".")) ++n;
  return n;
}

json resultFor(const json& results, const std::string& task) {
  for (const json& r : results["results"])
    if (r["task"] == task) return r;
  ADD_FAILURE() << "no result for " << task << " in " << results.dump(1);
  return json::object();
}

class BenchCli : public ::testing::Test {
protected:
  void SetUp() override {
    work_ = fs::temp_directory_path() /
            ("stitch-bench-cli-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(work_);
    fs::create_directories(work_ / "suite" / "level1");
    fs::create_directories(work_ / "suite" / "level2");
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(work_);
  }
  void copyTask(const std::string& fixture, const std::string& to) {
    fs::copy_file(fs::path(STITCH_SOURCE_DIR) / "tests/harness/fixtures" / fixture, work_ / "suite" / to);
  }
  void writeTask(const std::string& to, const std::string& text) { std::ofstream(work_ / "suite" / to) << text; }
  std::string suite() const { return (work_ / "suite").string(); }
  std::string out() const { return (work_ / "out").string(); }
  fs::path work_;
};

}  // namespace

TEST_F(BenchCli, RunsEveryTaskRecordsAnImportErrorAndResumesOnlyWhatIsMissing) {
  // The task that raises sorts first: the bench must go on to the others.
  writeTask("level1/00_raises.py", "import torch\nraise RuntimeError('broken on purpose')\n");
  copyTask("small_elementwise.py", "level1/01_small_elementwise.py");
  copyTask("relu_nonneg.py", "level2/02_relu.py");

  CliRun first = bench(work_, suite() + " --out " + out());
  ASSERT_EQ(first.status, 0) << first.out << first.err;
  const json results = json::parse(slurp(work_ / "out" / "results.json"));
  ASSERT_EQ(results["results"].size(), 3u) << results.dump(1);
  EXPECT_TRUE(results["environment"]["gpu"].is_null());
  EXPECT_TRUE(results["environment"]["torch"].is_string());
  ASSERT_EQ(results["runs"].size(), 1u);
  EXPECT_NE(results["runs"][0]["command"].get<std::string>().find(" bench " + suite() + " --out " + out()),
            std::string::npos);

  const json raises = resultFor(results, "level1/00_raises");
  EXPECT_EQ(raises["level"], 1);
  ASSERT_TRUE(raises["error"].is_string());
  EXPECT_NE(raises["error"].get<std::string>().find("RuntimeError: broken on purpose"), std::string::npos)
      << raises.dump(1);
  for (const char* task : {"level1/01_small_elementwise", "level2/02_relu"}) {
    const json r = resultFor(results, task);
    EXPECT_EQ(r["level"], std::string(task).starts_with("level1") ? 1 : 2) << task;
    EXPECT_TRUE(r["error"].is_null()) << r.dump(1);
    EXPECT_EQ(r["verified"], false) << task;
    EXPECT_EQ(r["needsGpu"], true) << task;
    EXPECT_EQ(r["state"], "noImprovement") << task;
    EXPECT_GE(r["candidatesTried"].get<int>(), 1) << task;
  }
  EXPECT_EQ(results["summary"]["all"]["tasks"], 3);
  EXPECT_EQ(results["summary"]["all"]["errors"], 1);
  EXPECT_EQ(results["summary"]["all"]["fast_0"], 0.0);
  EXPECT_EQ(results["summary"]["levels"]["level2"]["tasks"], 1);

  const std::string md = slurp(work_ / "out" / "results.md");
  EXPECT_NE(md.find("| task | level | verified | vs eager | vs torch.compile |"), std::string::npos) << md;
  EXPECT_NE(md.find("| level1/01_small_elementwise | level1 | no GPU: verification needs one |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("| level1/00_raises | level1 | error: "), std::string::npos) << md;
  EXPECT_NE(md.find("| fast_0 | fast_1 vs eager | fast_1 vs torch.compile |"), std::string::npos) << md;
  EXPECT_NE(md.find("| all | 3 | 0 (0%) | 1 | 0.00 | 0.00 | 0.00 | — | — | — |"), std::string::npos) << md;
  EXPECT_NE(md.find("PyTorch " + results["environment"]["torch"].get<std::string>()), std::string::npos) << md;
  EXPECT_NE(first.out.find("| level2/02_relu | level2 | no GPU: verification needs one |"), std::string::npos)
      << first.out;
  EXPECT_NE(first.out.find("| all | 3 |"), std::string::npos) << first.out;
  EXPECT_EQ(jobFolders(work_ / "out" / "jobs"), 3);
  EXPECT_TRUE(fs::exists(work_ / "out" / "reports" / "level2" / "02_relu" / "report.json"));

  // One more task: --resume runs it alone and keeps the three results.
  copyTask("small_elementwise.py", "level2/03_more.py");
  CliRun second = bench(work_, suite() + " --out " + out() + " --resume");
  ASSERT_EQ(second.status, 0) << second.out << second.err;
  EXPECT_NE(second.out.find("resuming: 3 task(s) already in"), std::string::npos) << second.out;
  EXPECT_EQ(jobFolders(work_ / "out" / "jobs"), 4);
  const json resumed = json::parse(slurp(work_ / "out" / "results.json"));
  EXPECT_EQ(resumed["results"].size(), 4u);
  EXPECT_EQ(resumed["runs"].size(), 2u);
  EXPECT_EQ(resultFor(resumed, "level2/03_more")["needsGpu"], true);
  EXPECT_EQ(resultFor(resumed, "level1/00_raises"), raises);
}

TEST_F(BenchCli, ResumeRefusesResultsFromAnotherGpuOrPyTorch) {
  copyTask("small_elementwise.py", "level1/01_small_elementwise.py");
  fs::create_directories(work_ / "out");
  const json foreign{{"format", "stitchcuda.bench/1"},
                     {"environment",
                      {{"gpu", "NVIDIA H100 80GB HBM3"}, {"driver", "580.159.04"}, {"cuda", "13.0"},
                       {"torch", "2.11.0+cu130"}, {"python", "3.12.3"}}},
                     {"runs", json::array()},
                     {"results", json::array()}};
  std::ofstream(work_ / "out" / "results.json") << foreign.dump(1);
  CliRun r = bench(work_, suite() + " --out " + out() + " --resume");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("refusing to resume"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("NVIDIA H100 80GB HBM3"), std::string::npos) << r.err;
  EXPECT_EQ(json::parse(slurp(work_ / "out" / "results.json")), foreign);
  EXPECT_FALSE(fs::exists(work_ / "out" / "jobs"));
}

TEST_F(BenchCli, ATaskPastItsTimeoutIsStoppedWithItsReportAndNoWorkerLeft) {
  // Importing the task takes longer than the timeout: optimize is stopped (SIGTERM) while its harness
  // worker is still busy with it; it cancels the job, writes its report and stops the worker itself.
  writeTask("level1/01_slow.py",
            "import time\ntime.sleep(30)\nimport torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
            "        return x\ndef get_inputs():\n    return [torch.rand(4)]\ndef get_init_inputs():\n    return []\n");
  CliRun r = bench(work_, suite() + "/level1 --out " + out() + " --timeout 4");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const json slow = resultFor(json::parse(slurp(work_ / "out" / "results.json")), "level1/01_slow");
  ASSERT_TRUE(slow["error"].is_string()) << slow.dump(1);
  EXPECT_NE(slow["error"].get<std::string>().find("timed out after 4 s"), std::string::npos) << slow.dump(1);
  EXPECT_EQ(slow["log"].dump().find("process group(s) left running"), std::string::npos) << slow.dump(1);
  const json report = json::parse(slurp(work_ / "out" / "reports" / "level1" / "01_slow" / "report.json"));
  EXPECT_EQ(report["finished"]["state"], "cancelled");
}

TEST_F(BenchCli, UsageErrorsExitTwo) {
  EXPECT_EQ(bench(work_, "").status, 2);
  EXPECT_EQ(bench(work_, (work_ / "no-such-folder").string()).status, 2);
  EXPECT_EQ(bench(work_, suite() + " --gpus 0").status, 2);
  EXPECT_EQ(bench(work_, suite() + " --frobnicate").status, 2);
  CliRun empty = bench(work_, suite() + " --out " + out());
  EXPECT_EQ(empty.status, 1);  // a folder without a task is an error, not a usage mistake
  EXPECT_NE(empty.err.find("no task (*.py) under"), std::string::npos) << empty.err;
}
