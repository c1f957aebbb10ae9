// `stitchcuda bench DIR`: every task of a KernelBench-style suite (levelN folders) through the real
// job — this binary's `optimize --json` in a child process, one task at a time per GPU — with a row
// per task as results arrive, KernelBench's summary per level, and RESULTS/results.json and .md
// (written after every task, so `--resume` runs only what is missing). Exits 0 when every task ran,
// whatever the verdicts; 1 on error (also: tasks left unrun by --deadline); 2 on usage.
#pragma once

#include "server/BenchResults.h"
#include "server/CommandLine.h"
#include "server/Config.h"
#include "server/CoverageBench.h"
#include "server/SlurmArray.h"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace stitch::server {

// What `bench` was asked, as its command line said it.
struct BenchArgs {
  std::filesystem::path dir;
  std::optional<std::filesystem::path> out;  // default bench-results (coverage-results with --no-gpu)
  int gpus = 1;
  bool resume = false;
  std::optional<double> timeoutSeconds;  // per task, then the optimize process is stopped (default 900)
  std::optional<double> deadline;        // no task starts after this many seconds
  bool noGpu = false;                    // the coverage run (CoverageBench.h) instead
  CoverageArgs coverage;                 // its own options; with --no-gpu also the suite, --out and --timeout
  cli::JobOptions job;                   // checked as optimize checks them, then passed on as given
  bool jobsDirGiven = false;             // --jobs-dir: job folders there instead of RESULTS/jobs
  std::vector<std::string> forward;      // the job's and the LLM's options as given, for each optimize
  std::vector<std::string> argv;         // the whole command line, recorded with the results
  SlurmOptions slurm;                    // --slurm: the tasks as one job array (SlurmArray.h)
};

// Adds the `bench` command and its own options (both runs') to `app`, filling `args` as it parses.
CLI::App* addBenchCommand(CLI::App& app, BenchArgs& args);
int runBench(const HostConfig& config, const BenchArgs& args);

}  // namespace stitch::server
