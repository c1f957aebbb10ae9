// Slurm as the engine past one machine (protocol/SLURM.md): `bench` and `score --batch` with --slurm
// submit their tasks or rows as one job array, each element this same binary re-run with its own
// command line plus `--slurm-plan PLAN --slurm-element I` on its node, which does element I alone and
// writes its result to a file of its own in the shared folder. The submitter polls squeue and the
// files, hands each finished element to the command once (which merges it into the same results
// files as a local run), resubmits an element that vanished without a result a bounded number of
// times, and --resume carries on from the plan and the files after the submitter died.
#pragma once

#include "protocol/JsonRpc.h"

#include <CLI/CLI.hpp>

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stitch::server {

struct SlurmOptions {
  bool enabled = false;  // --slurm
  std::optional<std::string> partition, account, time;
  std::vector<std::string> sbatchArgs;  // --sbatch-arg, passed to sbatch as given
  std::optional<int> gpus;              // --slurm-gpus: 0 asks for no GPU; unset: sinfo says
  int retries = 2;                      // resubmissions of a lost element
  // Set in an element's own command line (hidden options): which element to run, of which plan.
  std::optional<std::size_t> element;
  std::optional<std::filesystem::path> plan;
};

// Adds --slurm and its options, and the hidden element options, to a command.
void addSlurmOptions(CLI::App& command, SlurmOptions& options);
// The Slurm option names a user may give (for the commands' "needs --slurm" checks).
const std::vector<std::string>& slurmOptionNames();

// Where a finished element ran: added to its verdict.
protocol::json slurmPlacement();

// This machine's host name, as gethostname() gives it.
std::string hostName();

// In an element: checks that the plan's keys are `keys` (the suite or the batch file has not changed
// since it was submitted), runs `work(options.element)` and writes what it returns, with where it ran,
// to the element's file (atomically). Nothing (a stop signal cut the work short) writes nothing and
// exits 1: the submitter takes the element as lost. Returns the exit status.
int runSlurmElement(const SlurmOptions& options, const std::vector<std::string>& keys,
                    const std::function<std::optional<protocol::json>(std::size_t index)>& work);

struct SlurmArrayRun {
  std::filesystem::path dir;          // plan.json, element.sh, elements/, logs/ (shared by every node)
  std::vector<std::string> keys;      // element i does the task or row keys[i]
  std::vector<bool> wanted;           // false: already in the results, not submitted (empty: all)
  bool needsGpu = true;               // false: no --gres at all (the coverage run)
  bool resume = false;
  bool restartOnChange = false;       // with resume: a plan for other keys starts over instead of refusing
};

// The elements of the array `jobName` squeue still lists (pending, running, completing), by index, with
// their state; nullopt, with `error` set, when squeue cannot answer (a controller restarting).
std::optional<std::map<std::size_t, std::string>> slurmAliveElements(const std::string& jobName, std::string& error);
// Why a job ended, as far as sacct knows (it needs the cluster's accounting); `jobId` as JOBID_INDEX.
std::string slurmLostReason(const std::string& jobId);
// scancel with these arguments (job ids, or --name=NAME); a failure is said on stderr.
void slurmCancel(const std::vector<std::string>& what);

// The submitting side of one array: its folder (plan.json, element.sh, elements/, logs/) and every sbatch.
// element.sh runs this process's command line again plus `--slurm-plan PLAN --slurm-element INDEX`.
class SlurmArraySubmitter {
public:
  // `run` must outlive the submitter.
  SlurmArraySubmitter(const SlurmOptions& options, const SlurmArrayRun& run) : options_(options), run_(run) {}
  // Reads the earlier plan (--resume) or starts a new one; writes element.sh and the plan; an error says why not.
  std::optional<std::string> prepare();
  // One sbatch for these elements (a sub-array of the same name); their attempt counts go up.
  std::optional<std::string> submit(std::vector<std::size_t> elements);
  std::string jobName() const;
  int attempts(std::size_t index) const;    // submissions by this process
  std::string lastJob(std::size_t index) const;  // JOBID_INDEX of the latest
  std::filesystem::path planFile() const { return run_.dir / "plan.json"; }

private:
  std::optional<std::string> savePlan();

  const SlurmOptions& options_;
  const SlurmArrayRun& run_;
  protocol::json plan_;
  bool gres_ = false;
  std::map<std::size_t, int> attempts_;
  std::map<std::size_t, std::string> lastJob_;
};

// Submits (each element re-runs this process's command line) and polls until every wanted element is done or given up. `done` gets each element's file
// (its `result`, `slurm` placement, `index`), once per element, also those found from an earlier
// submitter on --resume; `gaveUp` each element lost more than options.retries times, with why.
// Messages go to stderr; returns 0, or 1 (with the reason on stderr) when submitting failed.
int runSlurmArray(const SlurmOptions& options, const SlurmArrayRun& run,
                  const std::function<void(const protocol::json& element)>& done,
                  const std::function<void(std::size_t index, const std::string& why)>& gaveUp,
                  const std::atomic<bool>* stopping = nullptr);

}  // namespace stitch::server
