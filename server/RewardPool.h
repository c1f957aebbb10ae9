// The reward service's workers: one slot per GPU (or per CPU slot where there is none), each with
// its own harness worker started from the slot's own thread, so a candidate always has a whole GPU
// to itself; and a bounded queue in front of them. A request is taken or refused at once (the queue
// is full); one taken is answered exactly once, through its future, with a result or a failure.
#pragma once

#include "agents/Worker.h"
#include "protocol/JsonRpc.h"
#include "protocol/Result.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace stitch::server {

// Where a worker was lost under a request (its Slurm job ended): the request is not at fault and runs
// again on another worker, as long as its retries last where it had reached the lost one.
enum class WorkerLoss { none, beforeSending, whileRunning };

// Why a request got no result: the HTTP status it is answered with, a snake_case code, and what to do.
struct RewardFailure {
  int status = 500;
  std::string code;
  std::string message;
  protocol::json detail = protocol::json::object();  // e.g. the file and line a worker error names
  WorkerLoss loss = WorkerLoss::none;
};
using RewardOutcome = protocol::Result<protocol::json, RewardFailure>;

// What a slot runs for one request, given the slot's harness worker and the service's cancel.
using RewardWork = std::function<RewardOutcome(agents::Worker&, const agents::CancelToken&)>;

struct RewardAnswer {
  RewardOutcome outcome;
  double waitedSeconds = 0;  // in the queue
  double ranSeconds = 0;     // on its worker
};

// A worker that is not always there: a Slurm worker job still pending, or lost and being replaced. A slot
// whose worker is one takes requests only while it is ready; a local harness worker is always ready (it
// starts itself again after a crash).
class IntermittentWorker : public agents::Worker {
public:
  // Blocks until a worker can take a request (true), or `cancel` ended the wait (false).
  virtual bool awaitReady(const agents::CancelToken& cancel) = 0;
};

class RewardPool {
public:
  // Makes slot `slot`'s worker; `gpu` is its CUDA_VISIBLE_DEVICES (none: the environment's).
  using WorkerFactory = std::function<std::unique_ptr<agents::Worker>(std::size_t slot, std::optional<int> gpu)>;

  // One slot per entry of `slotGpus`; the slots start their workers at once (a `hello` each), so
  // the first requests do not pay for Python and PyTorch starting. A request whose worker was lost
  // while running it runs again at most `lostRetries` times, then is answered with the loss.
  RewardPool(std::vector<std::optional<int>> slotGpus, std::size_t queueCapacity, WorkerFactory makeWorker,
             std::chrono::milliseconds helloDeadline, int lostRetries = 2);
  ~RewardPool();  // stop(), then waits for the slots
  RewardPool(const RewardPool&) = delete;
  RewardPool& operator=(const RewardPool&) = delete;

  // The answer to come, or nothing when the queue is full or the pool stopped (the request was not taken).
  std::optional<std::future<RewardAnswer>> submit(RewardWork work);
  // Cancels the work running, answers the waiting requests 503 and takes no more. Idempotent.
  void stop();

  struct SlotState {
    std::optional<int> gpu;
    bool ready = true;  // false while an intermittent worker is away
    bool busy = false;
    std::uint64_t served = 0;
    protocol::json hello;  // the worker's hello (its device), or {"error": ...}; null while starting
  };
  struct Snapshot {
    std::size_t queued = 0, capacity = 0, busy = 0;
    bool stopping = false;
    std::vector<SlotState> slots;
  };
  Snapshot snapshot() const;

private:
  struct Job {
    RewardWork work;
    std::promise<RewardAnswer> answer;
    std::chrono::steady_clock::time_point submitted;
    int lostRuns = 0;  // times a worker was lost while running it
  };
  void runSlot(std::size_t index, std::chrono::milliseconds helloDeadline);
  // Says hello to the slot's (new) worker and records what it answered.
  void greet(std::size_t index, agents::Worker& worker, std::chrono::milliseconds deadline);
  // The next request for slot `index`, marked busy; nothing when the pool stops.
  std::optional<Job> take(std::size_t index);
  // Puts a request whose worker was lost back at the queue's front, or answers it when its retries are spent.
  bool requeueLost(Job& job, const RewardFailure& failure, double waited, double ran);

  WorkerFactory makeWorker_;
  std::size_t capacity_;
  int lostRetries_;
  agents::CancelSource cancel_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Job> queue_;
  std::vector<SlotState> slots_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace stitch::server
