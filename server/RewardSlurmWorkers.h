// serve-reward --slurm (protocol/REWARD_SERVICE.md): the service's workers as long-lived Slurm jobs, one
// per seat of the pool, submitted as one array with SlurmArray's submitter. Each job runs this binary's
// serve-reward again on its node (RewardSlurmNode), which starts its harness worker and connects back;
// a request is then sent whole to a free worker and answered there, by the same code a local slot runs.
// A job that ends (scancel, --time, its node lost) is noticed by its connection closing or by squeue,
// and a replacement submitted; its request runs again on another worker (RewardPool's lost retries).
#pragma once

#include "server/LineSocket.h"
#include "server/RewardPool.h"
#include "server/SlurmArray.h"

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

namespace stitch::server {

class RewardSlurmWorkers {
public:
  // `dir` (on the filesystem the nodes share) takes the plan, the job script, service.json and the logs.
  RewardSlurmWorkers(const SlurmOptions& options, std::size_t seats, std::filesystem::path dir);
  ~RewardSlurmWorkers();  // stop()
  RewardSlurmWorkers(const RewardSlurmWorkers&) = delete;
  RewardSlurmWorkers& operator=(const RewardSlurmWorkers&) = delete;

  // Listens for the workers, writes service.json (where to connect, the token) and submits the array.
  std::optional<std::string> start();
  // The pool's factory: slot i's worker is whichever job holds seat i.
  RewardPool::WorkerFactory factory();
  // Cancels every job of the array (scancel) and waits a while for squeue to drop them. Idempotent.
  void stop();
  // For GET /v1/metrics: the jobs' name, counts (pending, running, lost, failed) and each seat.
  protocol::json snapshot() const;

private:
  struct Seat;
  class RemoteWorker;
  void acceptLoop();
  void watchLoop();
  void admit(std::unique_ptr<LineSocket> socket);
  // Under mutex_: the seat's worker is gone; its job is cancelled and replaced after the lock is let go
  // (replaceLost), unless the service stops.
  void lose(std::size_t seat, const std::string& why);
  void replaceLost();
  bool allGaveUp() const;  // under mutex_

  const SlurmOptions& options_;
  SlurmArrayRun run_;
  SlurmArraySubmitter submitter_;
  std::string token_;
  std::unique_ptr<LineListener> listener_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::unique_ptr<Seat>> seats_;
  std::vector<std::size_t> toReplace_;         // seats lost, replacement not yet submitted
  std::vector<std::string> toCancel_;          // their jobs
  std::size_t lost_ = 0;                       // workers lost so far
  std::atomic<bool> stopping_{false};
  bool started_ = false;
  std::mutex submitMutex_;                     // one sbatch at a time
  std::thread acceptThread_, watchThread_;
};

// A request as the service runs it with Slurm workers: sent whole (endpoint and body) to a worker, which
// answers with its outcome. `deadline` bounds the wait for that answer.
RewardWork slurmWork(std::string endpoint, protocol::json body, std::chrono::milliseconds deadline);

}  // namespace stitch::server
