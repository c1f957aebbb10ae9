// What `stitchcuda bench` records: one row per task, read from the `stitchcuda optimize --json` run
// that measured it (its JSON lines, its report.json and how the process ended), the environment the
// harness reported, and results.json in both directions so that a run can be resumed.
#pragma once

#include "protocol/JsonRpc.h"
#include "process/ChildProcess.h"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stitch::server::bench {

using protocol::json;

// A task file of the suite. `key` names it in tables, results.json and the report folders:
// "level1/01_relu" (from its innermost levelN folder) or its path below the bench folder.
struct BenchTask {
  std::filesystem::path file;  // absolute
  std::string key;
  int level = 0;  // 0: in no levelN folder ("other")
};

// The facts the harness reports about itself (its `hello`), as results.json keeps them.
struct BenchEnvironment {
  std::optional<std::string> gpu;     // null: no GPU visible
  std::optional<std::string> driver;  // NVIDIA driver, when a GPU is visible
  std::optional<std::string> cuda;    // the CUDA version PyTorch was built with
  std::optional<std::string> torch;
  std::optional<std::string> python;

  static BenchEnvironment fromHello(const json& hello);
  // "NVIDIA H100 80GB HBM3, driver 550.54.15, CUDA 12.4, PyTorch 2.5.1"
  std::string describe() const;
  // Results from two environments can share a table only when GPU and PyTorch are the same.
  bool comparableWith(const BenchEnvironment& other) const { return gpu == other.gpu && torch == other.torch; }
};

struct CandidateRow {
  std::string id;
  std::string title;
  std::string status;
  std::optional<double> speedupEager;
  std::optional<double> speedupCompile;
  std::optional<double> rooflineFraction;
  std::vector<std::string> failedChecks;
};

struct TaskResult {
  std::string task;  // BenchTask::key
  int level = 0;
  bool error = false;       // the task produced no verdict: crash, timeout, garbage, a failed or cancelled job
  std::string errorReason;  // set with `error`
  std::string state;        // the job's final state (improved | noImprovement | failed | cancelled), "" when none
  std::string message;      // the job's final message
  std::optional<int> exitCode;
  double seconds = 0;
  bool needsGpu = false;  // optimize said that verification needs a GPU and none is visible
  std::optional<std::string> best;  // the best verified candidate: the task counts as verified
  std::optional<double> speedupEager;
  std::optional<double> speedupCompile;
  std::optional<double> rooflineFraction;  // of the memory-roofline floor, best candidate
  std::optional<double> firstVerifiedSeconds;  // from the job's start
  int candidatesTried = 0;
  std::string firstFailedCheck;  // of the first candidate that failed, "" when none did
  std::vector<CandidateRow> candidates;
  std::vector<std::string> log;  // warnings, errors and the job's conclusions, shortened
  json slurm;                    // with --slurm: the node, GPU and job that ran it (SlurmArray.h)

  bool verified() const { return best.has_value(); }
};

// Reads one `stitchcuda optimize --json` run line by line, then makes the task's row.
class OptimizeRunReader {
public:
  void line(std::string_view text);
  // `report` is the run's report.json when it wrote one.
  TaskResult result(const BenchTask& task, const process::ChildOutcome& outcome, const std::optional<json>& report) const;

private:
  std::vector<CandidateRow> candidates_;  // in arrival order, updated in place
  std::optional<json> finished_;
  std::vector<std::string> log_;
  int notJson_ = 0;
  std::string firstNotJson_;
};

void to_json(json& j, const BenchEnvironment& e);
void from_json(const json& j, BenchEnvironment& e);
void to_json(json& j, const TaskResult& r);
void from_json(const json& j, TaskResult& r);

}  // namespace stitch::server::bench
