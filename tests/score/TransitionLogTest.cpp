// The transitions file (protocol/TRANSITIONS.md) round-trips through its schema: a record written
// by TransitionLog reads back field for field and re-serializes to the same line; the reader refuses
// a line that does not fit, naming the field and the line; and `stitchcuda optimize
// --record-transitions` on a CPU machine writes a file the reader accepts, with the step's candidate,
// its build verdict and its rubric reward from the real harness.
#include "agents/loop/TransitionLog.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using stitch::protocol::json;
using namespace stitch::agents::loop;

namespace {

fs::path freshDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("stitch-transitions-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

Transition sample(int step, bool refine) {
  Transition t;
  t.jobId = "job-1";
  t.step = step;
  t.skill = refine ? "refine" : "generate";
  t.candidateId = "c" + std::to_string(step);
  t.taskFile = "/jobs/job-1/task.py";
  t.taskSource = "class Model(nn.Module):\n    ...\n";
  t.plan = {{"jobId", "job-1"}, {"tasks", json::array()}, {"coverage", {{"operators", 5}, {"coveredOperators", 4}}}};
  if (refine) {
    t.feedback = json{{"schema", "stitchcuda.feedback/1"}, {"mode", "optimize"}, {"category", "launch_overhead"}};
    t.previousCandidateId = "c" + std::to_string(step - 1);
  }
  t.candidateDir = "/jobs/job-1/candidates/" + t.candidateId;
  t.title = "fused chain";
  t.variant = "b256v4i1";
  t.files = {{"candidate.cu", "__global__ void k() {}\n"}, {"model_new.py", "class ModelNew: ...\n"}};
  t.verdict = {{"passed", true}, {"status", "passed"}, {"failed_checks", json::array()}};
  t.profile = json{{"feedback", {{"schema", "stitchcuda.feedback/1"}, {"mode", "optimize"}, {"category", "memory_floor_reached"}}},
                   {"metricsSource", "timing"}, {"floorFraction", 0.8}};
  t.reward = json{{"schema", "stitchcuda.score/1"}, {"reward", 0.7}};
  return t;
}

TEST(TransitionLog, RecordsRoundTripThroughTheSchema) {
  const auto dir = freshDir("roundtrip");
  const std::vector<Transition> written = {sample(1, false), sample(2, true)};
  {
    TransitionLog log(dir, "job-1");
    ASSERT_TRUE(log.ok());
    for (const auto& t : written) log.append(t);
  }
  auto read = readTransitions(dir / "job-1.transitions.jsonl");
  ASSERT_TRUE(read.ok()) << read.error();
  ASSERT_EQ(read.value().size(), 2u);
  for (std::size_t i = 0; i < written.size(); ++i) EXPECT_EQ(toJson(read.value()[i]), toJson(written[i]));
  EXPECT_EQ(read.value()[1].feedback->at("category"), "launch_overhead");
  EXPECT_EQ(read.value()[1].previousCandidateId, "c1");
  EXPECT_FALSE(read.value()[0].feedback);
}

TEST(TransitionLog, TheReaderNamesTheFieldAndLineThatDoNotFit) {
  const auto dir = freshDir("strict");
  json missing = toJson(sample(1, false));
  missing["candidate"].erase("files");
  json blindRefine = toJson(sample(2, true));
  blindRefine["context"]["feedback"] = nullptr;
  for (const auto& [bad, expected] : {std::pair{missing, "2: missing \"candidate.files\""},
                                      {blindRefine, "2: a refine step has the feedback it answers"}}) {
    std::ofstream(dir / "t.jsonl") << toJson(sample(1, false)).dump() << "\n" << bad.dump() << "\n";
    auto r = readTransitions(dir / "t.jsonl");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().find(expected), std::string::npos) << r.error();
  }
}

TEST(TransitionLog, OptimizeRecordsItsStepsWithTheirRewardOnACpuMachine) {
  const auto dir = freshDir("optimize");
  const std::string cmd = "cd " STITCH_SOURCE_DIR " && " STITCHCUDA_BIN " optimize examples/elementwise_chain.py --python " +
                          std::string(STITCH_TEST_PYTHON) + " --jobs-dir " + (dir / "jobs").string() +
                          " --record-transitions " + (dir / "out").string() + " --log-level warning >/dev/null 2>&1";
  std::system(cmd.c_str());  // exits 3 on a machine without a GPU: no verified candidate
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir / "out")) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);
  auto read = readTransitions(files[0]);
  ASSERT_TRUE(read.ok()) << read.error();
  ASSERT_EQ(read.value().size(), 1u);  // without a GPU one candidate is built, nothing to refine
  const Transition& t = read.value()[0];
  EXPECT_EQ(t.skill, "generate");
  EXPECT_EQ(files[0].filename().string(), t.jobId + ".transitions.jsonl");
  EXPECT_NE(t.taskSource.find("class Model"), std::string::npos);
  EXPECT_TRUE(t.plan.contains("coverage"));
  EXPECT_NE(t.files.at("candidate.cu").find("__global__"), std::string::npos);
  EXPECT_EQ(t.verdict["status"], "needs_gpu");
  ASSERT_TRUE(t.reward);
  EXPECT_EQ(t.reward->at("schema"), "stitchcuda.score/1");
  EXPECT_TRUE(t.reward->at("reward").is_null());  // not judged without a GPU, never a guess
  EXPECT_EQ(t.reward->at("rubric")["anti_hacking"]["score"], 1.0);
  EXPECT_EQ(t.reward->at("rubric")["operator_coverage"]["score"], 1.0);
  std::ifstream in(files[0]);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(toJson(t), json::parse(line));
}

}  // namespace
