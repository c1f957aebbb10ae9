// `stitchcuda score` end to end on a CPU machine: the real binary, the real harness worker and the
// GPU suite's recorded H200 verdict of the honest elementwise chain. Pins: a cheating source scored
// with that passing verdict gets reward 0 (the guards read the source again); the honest candidate
// earns its speed and the coverage of the graph, a PyTorch-only one covers nothing; without --verdict
// and without a GPU nothing runs: the code alone is scored, saying what needs a GPU; a batch writes
// one line per row, resumes keeping the rows already scored and retrying the failed ones; --jobs scores
// the candidates of a run's jobs folder and --table tabulates them.
#include "protocol/JsonRpc.h"
#include "tests/cli_support/CliRun.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using stitch::protocol::json;

namespace {

const fs::path kSource = STITCH_SOURCE_DIR;

using stitch::testing::CliRun;

CliRun score(const fs::path& work, const std::string& args) {
  return stitch::testing::runCli("score " + args + " --python " + STITCH_TEST_PYTHON + " --jobs-dir " +
                                 (work / "jobs").string() + " --log-level warning");
}

fs::path workDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("stitch-score-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// The honest elementwise chain's verdict as the GPU suite recorded it (passed, 2.46x eager).
json honestVerdict() {
  std::ifstream in(kSource / "tests/harness/results/gpu_suite_2026-11-22_h200.json");
  const json suite = json::parse(in);
  for (const json& e : suite["honest"])
    if (e["candidate"] == "honest/elementwise_chain")
      return {{"passed", e["passed"]}, {"status", "passed"}, {"failed_checks", e["failed_checks"]}, {"timing", e["timing"]}};
  ADD_FAILURE() << "no honest/elementwise_chain in the GPU suite record";
  return json::object();
}

fs::path writeJson(const fs::path& path, const json& j) {
  std::ofstream(path) << j.dump();
  return path;
}

std::vector<json> lines(const fs::path& path) {
  std::vector<json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

TEST(ScoreCli, ACheatScoredWithAPassingVerdictGetsZero) {
  const auto work = workDir("cheat");
  const auto verdict = writeJson(work / "verdict.json", honestVerdict());
  auto r = score(work, "--reference examples/elementwise_chain.py --candidate tests/harness/adversarial/side_stream_cuda.py"
                       " --verdict " + verdict.string() + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["reward"], 0.0);
  EXPECT_EQ(j["rubric"]["anti_hacking"]["score"], 0.0);
  EXPECT_EQ(j["rubric"]["anti_hacking"]["checks"]["side_stream"], "failed");
  EXPECT_EQ(j["verdictSource"], "recorded");
}

TEST(ScoreCli, AnHonestCandidateEarnsItsSpeedAndTheGraphsCoverage) {
  const auto work = workDir("honest");
  const auto verdict = writeJson(work / "verdict.json", honestVerdict());
  auto r = score(work, "--reference examples/elementwise_chain.py --candidate tests/harness/honest/elementwise_chain"
                       " --verdict " + verdict.string() + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_GT(j["reward"].get<double>(), 0.5);
  EXPECT_EQ(j["coverageSource"], "graph");
  const json& cover = j["rubric"]["operator_coverage"];
  EXPECT_GT(cover["operators"].get<int>(), 0);
  EXPECT_EQ(cover["coveredOperators"], cover["operators"]);
  EXPECT_TRUE(j["rubric"]["cuda_engineering"]["features"]["vectorized_access"]["present"].get<bool>());

  auto text = score(work, "--reference examples/elementwise_chain.py --candidate tests/harness/honest/elementwise_chain"
                          " --verdict " + verdict.string() + " --weight cuda_engineering=0");
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("REWARD "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("anti-hacking 1: 17 guards passed"), std::string::npos) << text.out;
}

TEST(ScoreCli, AProfileGivesTheEngineeringMeasuredEvidence) {
  // The honest chain's kernel as Nsight Compute measured it on an H200 (NcuRunner's CSV).
  const auto work = workDir("profile");
  const auto verdict = writeJson(work / "verdict.json", honestVerdict());
  const std::string base = "--reference examples/elementwise_chain.py --candidate tests/harness/honest/elementwise_chain"
                           " --verdict " + verdict.string();
  auto r = score(work, base + " --profile tests/profiling/fixtures/recorded/ncu_memory_bound.csv --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json eng = json::parse(r.out)["rubric"]["cuda_engineering"];
  EXPECT_EQ(eng["metrics"]["read"], "ncu");
  EXPECT_EQ(eng["metrics"]["kernels"][0]["name"], "chain_vec4");
  EXPECT_TRUE(eng["features"]["bandwidth_efficiency"]["present"].get<bool>()) << eng.dump();
  EXPECT_EQ(eng["features"]["fusion"]["measured"], "confirmed") << eng.dump();

  auto text = score(work, base + " --profile=tests/profiling/fixtures/recorded/ncu_memory_bound.csv");
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find(", metrics ncu):"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("bandwidth_efficiency ["), std::string::npos) << text.out;
  auto none = score(work, base);
  ASSERT_EQ(none.status, 0) << none.err;
  EXPECT_NE(none.out.find(", metrics none (no profile)):"), std::string::npos) << none.out;

  auto missing = score(work, base + " --profile " + (work / "no_such.csv").string());
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("profile: cannot read"), std::string::npos) << missing.err;
}

TEST(ScoreCli, OperatorsAVerdictReportsLeftInPyTorchAreNotCovered) {
  const auto work = workDir("partial");
  json v = honestVerdict();
  v["pytorch_ops"] = {{"aten::relu", 1}};  // as a partial candidate's verdict reports its declaration
  const auto verdict = writeJson(work / "verdict.json", v);
  auto r = score(work, "--reference examples/elementwise_chain.py --candidate tests/harness/honest/elementwise_chain"
                       " --verdict " + verdict.string() + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json cover = json::parse(r.out)["rubric"]["operator_coverage"];
  EXPECT_EQ(cover["coveredOperators"].get<int>(), cover["operators"].get<int>() - 1);
  EXPECT_LT(cover["timeShare"].get<double>(), 1.0);
}

TEST(ScoreCli, APyTorchOnlyCandidateCoversNoOperatorWhateverItsVerdict) {
  const auto work = workDir("pytorch-only");
  const auto verdict = writeJson(work / "verdict.json", honestVerdict());
  auto r = score(work, "--reference examples/elementwise_chain.py --candidate tests/harness/adversarial/pytorch_compute.py"
                       " --verdict " + verdict.string() + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json cover = json::parse(r.out)["rubric"]["operator_coverage"];
  EXPECT_EQ(cover["score"], 0.0) << cover.dump();
  EXPECT_EQ(cover["coveredOperators"], 0);
  EXPECT_GT(cover["operators"].get<int>(), 0);
}

TEST(ScoreCli, WithoutAVerdictOrAGpuTheCodeAloneIsScoredSayingWhatNeedsOne) {
  const auto work = workDir("no-gpu");
  // The verifier would run this 8M-element task on the CPU; nothing of the candidate runs instead.
  auto r = score(work, "--reference examples/elementwise_chain.py --candidate tests/harness/adversarial/pytorch_compute.py --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["verdictSource"], "none: no GPU is visible");
  EXPECT_EQ(j["verdictStatus"], "needs_gpu");
  EXPECT_TRUE(j["rule"]["score"].is_null());
  EXPECT_EQ(j["reward"], 0.0);  // its static guards see the PyTorch compute
  EXPECT_EQ(j["rubric"]["operator_coverage"]["score"], 0.0);
  ASSERT_TRUE(j["needsGpu"].is_array() && !j["needsGpu"].empty());

  auto honest = score(work, "--reference tests/harness/fixtures/small_elementwise.py --candidate tests/harness/honest/host_elementwise");
  ASSERT_EQ(honest.status, 0) << honest.err;
  EXPECT_NE(honest.out.find("REWARD -"), std::string::npos) << honest.out;  // not judged: no reward
  EXPECT_NE(honest.out.find("needs a GPU: rule: correctness and speed"), std::string::npos) << honest.out;
}

TEST(ScoreCli, BatchWritesOneLinePerRowAndResumes) {
  const auto work = workDir("batch");
  const json honest = {{"id", "honest"}, {"reference", "examples/elementwise_chain.py"},
                       {"candidate", "tests/harness/honest/elementwise_chain"}, {"verdict", honestVerdict()}};
  json cheat = honest;
  cheat["id"] = "cheat";
  cheat["candidate"] = "tests/harness/adversarial/try_except_fallback.py";
  json broken = {{"id", "broken"}, {"reference", "examples/elementwise_chain.py"}};  // no candidate
  auto writeRows = [&](const json& third) {
    std::ofstream(work / "rows.jsonl") << honest.dump() << "\n" << cheat.dump() << "\n\n" << third.dump() << "\n";
  };
  writeRows(broken);
  const std::string args = "--batch " + (work / "rows.jsonl").string() + " --out " + (work / "scores.jsonl").string();

  auto first = score(work, args);
  EXPECT_EQ(first.status, 1) << first.err;  // one row failed
  auto out = lines(work / "scores.jsonl");
  ASSERT_EQ(out.size(), 3u);
  std::map<std::string, json> byId;
  for (const json& l : out) byId[l["id"]] = l;
  EXPECT_GT(byId["honest"]["reward"].get<double>(), 0.5);
  EXPECT_EQ(byId["cheat"]["reward"], 0.0);
  EXPECT_EQ(byId["broken"]["error"]["code"], "invalid_row");
  EXPECT_EQ(byId["broken"]["row"], 3);
  // Where each row ran and for how long: one worker on what the environment shows.
  for (const auto& [id, l] : byId) {
    ASSERT_TRUE(l.contains("worker")) << id;
    EXPECT_TRUE(l["worker"]["gpu"].is_null()) << id;
    EXPECT_GT(l["worker"]["seconds"].get<double>(), 0.0) << id;
  }

  // A run stopped mid-line leaves half a line: resuming drops it, keeps the scored rows, retries the failed one.
  std::ofstream(work / "scores.jsonl", std::ios::app) << "{\"row\": 1, \"rew";
  broken["candidate"] = "tests/harness/honest/elementwise_chain";
  writeRows(broken);
  auto resumed = score(work, args);
  EXPECT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("1 scored, 2 already in"), std::string::npos) << resumed.err;
  out = lines(work / "scores.jsonl");
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out.back()["id"], "broken");
  EXPECT_FALSE(out.back().contains("error"));
}

TEST(ScoreCli, JobsScoresEveryJudgedCandidateOfARunAndTablesThem) {
  const auto work = workDir("jobs");
  // On a CPU machine: one candidate built, its verdict needs_gpu.
  stitch::testing::runCli(std::string("optimize examples/elementwise_chain.py --python ") + STITCH_TEST_PYTHON +
                          " --jobs-dir " + (work / "run").string() + " --log-level warning");
  auto r = score(work, "--jobs " + (work / "run").string() + " --out " + (work / "scores.jsonl").string() + " --table " +
                           (work / "table.md").string());
  ASSERT_EQ(r.status, 0) << r.err;
  auto out = lines(work / "scores.jsonl");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0]["coverageSource"], "plan");  // the job's own plan, from its log
  EXPECT_EQ(out[0]["verdictStatus"], "needs_gpu");
  const std::string id = out[0]["id"];
  EXPECT_EQ(id.substr(id.size() - 3), "/c1");
  std::ifstream table(work / "table.md");
  std::stringstream text;
  text << table.rdbuf();
  EXPECT_NE(text.str().find("| " + id + " | needs_gpu | — | — | 1.00 |"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("1 scored, 0 not scored."), std::string::npos) << text.str();
}

TEST(ScoreCli, UsageErrorsExitTwo) {
  const auto work = workDir("usage");
  EXPECT_EQ(score(work, "--reference examples/elementwise_chain.py").status, 2);
  EXPECT_EQ(score(work, "--batch rows.jsonl").status, 2);  // a batch needs --out
  EXPECT_EQ(score(work, "--reference a.py --candidate b.py --weight speed").status, 2);
}

}  // namespace
