// A harness worker process (`python3 -m stitchcuda_harness worker`) behind the agents'
// Worker interface: JSON Lines over pipes, a deadline per call, cooperative cancel, and a
// fresh process after a crash, a hang (killed at the deadline) or a sticky CUDA error.
// The worker runs in its own process group so its compilers and children die with it.
#pragma once

#include "agents/Worker.h"

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>
#include <sys/types.h>

namespace stitch::server {

struct WorkerSettings {
  std::string python = "python3";
  std::filesystem::path harnessDir;     // prepended to PYTHONPATH
  std::vector<std::string> extraArgs;   // after `-m stitchcuda_harness worker`
  std::optional<int> gpu;               // CUDA_VISIBLE_DEVICES for this worker
  // Seconds each stage of the model's code may take (import, __init__, get_inputs, a forward): past
  // it the worker answers stage_timeout, naming the stage and the model's line, and exits.
  std::optional<double> loadTimeoutSeconds = std::nullopt;
  // OMP_NUM_THREADS for this worker (unless the user set it): where several workers share a host,
  // each PyTorch sizing its thread pool to every core oversubscribed the cores (a 4-GPU batch's rows
  // ran 15% slower than one GPU's, bench/results/reward_throughput_2026-11-29b_h200).
  std::optional<unsigned> cpuThreads = std::nullopt;
};

// Each of `workers` workers' share of this host's cores; none for a single worker.
std::optional<unsigned> cpuShare(int workers);

// A call's deadline that leaves a stage of the model's code its whole load timeout, and the worker
// time to say where it was: the host's own deadline is the backstop for what the worker cannot stop.
std::chrono::milliseconds callDeadline(std::chrono::milliseconds configured, std::optional<double> loadTimeoutSeconds);

class WorkerProcess final : public agents::Worker {
public:
  // `onEvent` receives the worker's event lines ({"event": "log", ...}) as they arrive.
  WorkerProcess(WorkerSettings settings, std::function<void(const protocol::json&)> onEvent);
  ~WorkerProcess() override;

  agents::WorkerReply call(const std::string& method, const protocol::json& params,
                           std::chrono::milliseconds deadline, const agents::CancelToken& cancel) override;
  // Number of processes started so far (restarts are visible to tests and logs).
  int starts() const { return starts_; }

private:
  std::optional<agents::WorkerError> spawn();
  void kill();
  std::string exitDescription();

  WorkerSettings settings_;
  std::function<void(const protocol::json&)> onEvent_;
  pid_t pid_ = -1;
  int toWorker_ = -1;
  int fromWorker_ = -1;
  std::string pending_;  // bytes read past the last complete line
  std::int64_t nextId_ = 1;
  int starts_ = 0;
};

}  // namespace stitch::server
