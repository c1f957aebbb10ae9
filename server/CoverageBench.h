// `stitchcuda bench DIR --no-gpu`: how much of a suite the built-in brain covers, measured on a
// machine without a GPU. Per task: load it at sizes the machine can hold (the harness halves the
// task's module-level sizes by one general rule, task_shrink.py), capture its ATen graph on the
// CPU, plan with the built-in brain, generate the candidate and compile it with nvcc for sm_90.
// A row per task as it finishes; RESULTS/results.json and results.md: per task whether a candidate
// compiled (or why not), the operators covered, an estimate of the share of the reference's GPU
// time covered (a roofline over the captured shapes against H100 ceilings: nothing is timed), the
// operators left in PyTorch and why; per level and overall the share of tasks with a compiled
// candidate and with every operator covered.
//
// --every K / --slice N/M pick a fixed subset (CI runs one); --expect FILE fails the run (exit 1)
// when a task compiled or fully covered there no longer is; --write-expect FILE records this
// run's outcome as that file. Exit: 0 when every picked task ran, 1 on a regression or a write
// error, 2 on usage.
#pragma once

#include "protocol/JsonRpc.h"
#include "server/Config.h"
#include "server/SlurmArray.h"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace stitch::server {

// What `bench --no-gpu` was asked (BenchCommand parses its command line).
struct CoverageArgs {
  std::filesystem::path dir;
  std::filesystem::path out = "coverage-results";
  int every = 1;
  int sliceIndex = 0;  // zero-based part of `sliceCount`
  int sliceCount = 1;
  int jobs = 0;                 // 0: one per core
  double timeoutSeconds = 600;  // per harness call
  std::optional<std::filesystem::path> expect;
  std::optional<std::filesystem::path> writeExpect;
  std::vector<std::string> argv;  // the whole command line, recorded with the results
  SlurmOptions slurm;             // --slurm: the tasks as a job array (SlurmArray.h)
  bool resume = false;            // with --slurm: carry on from RESULTS/slurm's plan and element files
};

int runCoverageBench(const HostConfig& config, const CoverageArgs& args);

namespace coverage {

// The roofline's ceilings: an H100 SXM's HBM3 bandwidth, FP32 rate and dense TF32 tensor-core
// rate (convolutions: cuDNN runs them in TF32 under PyTorch's defaults), and a floor per operator
// (the GPU time of one small kernel).
struct Ceilings {
  double bytesPerUs = 3.35e6;       // 3.35 TB/s
  double fp32FlopsPerUs = 66.9e6;   // 66.9 TFLOP/s
  double tf32FlopsPerUs = 494.7e6;  // 494.7 TFLOP/s
  double floorUs = 2.0;
};

// One operator of a captured graph (stitchcuda.graph/1 JSON) as the estimate sees it.
struct OperatorCost {
  int node = 0;
  std::string op;   // without "aten::"
  int line = 0;     // one-based source line, 0 when unknown
  bool view = false;
  double bytes = 0;
  double flops = 0;
  double us = 0;    // max(bytes / bandwidth, flops / rate, floor); 0 for a view
};
std::vector<OperatorCost> estimateCosts(const protocol::json& graph, const Ceilings& ceilings = {});

// An entry of BrainPlan's `uncovered` ("relu_ (line 12): why") split into its parts.
struct UncoveredEntry {
  std::string op;
  int line = 0;
  std::string reason;
};
UncoveredEntry parseUncovered(const std::string& text);

// Which operators the plan leaves in PyTorch: each entry claims the first unclaimed operator of
// its name on its line (any line when it names none). Entries that claim none are whole-graph
// notes; they still count in `uncovered` lists but not in operator counts.
struct Coverage {
  int operators = 0;  // operators other than views, plus views left in PyTorch
  int covered = 0;
  double totalUs = 0;
  double coveredUs = 0;
};
Coverage measureCoverage(const std::vector<OperatorCost>& costs, const std::vector<std::string>& uncovered);

}  // namespace coverage
}  // namespace stitch::server
