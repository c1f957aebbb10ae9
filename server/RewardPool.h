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

// Why a request got no result: the HTTP status it is answered with, a snake_case code, and what to do.
struct RewardFailure {
  int status = 500;
  std::string code;
  std::string message;
  protocol::json detail = protocol::json::object();  // e.g. the file and line a worker error names
};
using RewardOutcome = protocol::Result<protocol::json, RewardFailure>;

// What a slot runs for one request, given the slot's harness worker and the service's cancel.
using RewardWork = std::function<RewardOutcome(agents::Worker&, const agents::CancelToken&)>;

struct RewardAnswer {
  RewardOutcome outcome;
  double waitedSeconds = 0;  // in the queue
  double ranSeconds = 0;     // on its worker
};

class RewardPool {
public:
  // Makes a slot's worker; `gpu` is its CUDA_VISIBLE_DEVICES (none: the environment's).
  using WorkerFactory = std::function<std::unique_ptr<agents::Worker>(std::optional<int> gpu)>;

  // One slot per entry of `slotGpus`; the slots start their workers at once (a `hello` each), so
  // the first requests do not pay for Python and PyTorch starting.
  RewardPool(std::vector<std::optional<int>> slotGpus, std::size_t queueCapacity, WorkerFactory makeWorker,
             std::chrono::milliseconds helloDeadline);
  ~RewardPool();  // stop(), then waits for the slots
  RewardPool(const RewardPool&) = delete;
  RewardPool& operator=(const RewardPool&) = delete;

  // The answer to come, or nothing when the queue is full or the pool stopped (the request was not taken).
  std::optional<std::future<RewardAnswer>> submit(RewardWork work);
  // Cancels the work running, answers the waiting requests 503 and takes no more. Idempotent.
  void stop();

  struct SlotState {
    std::optional<int> gpu;
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
  };
  void runSlot(std::size_t index, std::chrono::milliseconds helloDeadline);

  WorkerFactory makeWorker_;
  std::size_t capacity_;
  agents::CancelSource cancel_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Job> queue_;
  std::vector<SlotState> slots_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace stitch::server
