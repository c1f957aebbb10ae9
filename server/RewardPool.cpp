// The reward service's workers and queue; see RewardPool.h.
#include "server/RewardPool.h"

#include "server/Logger.h"

namespace stitch::server {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration<double>(end - start).count();
}

RewardFailure shuttingDown() {
  return {503, "shutting_down", "the reward service is stopping; send the request to another instance or later"};
}

}  // namespace

RewardPool::RewardPool(std::vector<std::optional<int>> slotGpus, std::size_t queueCapacity, WorkerFactory makeWorker,
                       std::chrono::milliseconds helloDeadline)
    : makeWorker_(std::move(makeWorker)), capacity_(queueCapacity) {
  for (const auto& gpu : slotGpus) slots_.push_back(SlotState{gpu, false, 0, nullptr});
  for (std::size_t i = 0; i < slots_.size(); ++i) threads_.emplace_back(&RewardPool::runSlot, this, i, helloDeadline);
}

RewardPool::~RewardPool() {
  stop();
  for (auto& t : threads_) t.join();
}

std::optional<std::future<RewardAnswer>> RewardPool::submit(RewardWork work) {
  std::lock_guard lock(mutex_);
  if (stopping_) return std::nullopt;
  // The queue holds requests a free slot is about to take as well as those that wait: only the
  // latter count against its capacity, so with a slot free even a queue of 0 takes a request.
  std::size_t idle = 0;
  for (const auto& s : slots_) idle += s.busy ? 0 : 1;
  if (queue_.size() >= capacity_ + idle) return std::nullopt;
  queue_.push_back(Job{std::move(work), {}, Clock::now()});
  auto future = queue_.back().answer.get_future();
  ready_.notify_one();
  return future;
}

void RewardPool::stop() {
  std::deque<Job> waiting;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    waiting.swap(queue_);
  }
  ready_.notify_all();
  cancel_.cancel();
  for (auto& job : waiting) job.answer.set_value(RewardAnswer{shuttingDown(), secondsSince(job.submitted, Clock::now()), 0});
}

RewardPool::Snapshot RewardPool::snapshot() const {
  std::lock_guard lock(mutex_);
  Snapshot s{queue_.size(), capacity_, 0, stopping_, slots_};
  for (const auto& slot : slots_) s.busy += slot.busy ? 1 : 0;
  return s;
}

void RewardPool::runSlot(std::size_t index, std::chrono::milliseconds helloDeadline) {
  std::optional<int> gpu;
  {
    std::lock_guard lock(mutex_);
    gpu = slots_[index].gpu;
  }
  // Made and first called on this thread: the worker dies with the thread that started it
  // (PR_SET_PDEATHSIG), and this thread lives as long as the slot.
  std::unique_ptr<agents::Worker> worker = makeWorker_(gpu);
  const auto cancel = cancel_.token();
  auto hello = worker->call("hello", protocol::json::object(), helloDeadline, cancel);
  const std::string name = "serve-reward: worker " + std::to_string(index) + (gpu ? " (GPU " + std::to_string(*gpu) + ")" : "");
  if (!hello.ok() && !cancel.cancelled())
    logWarning(name + " did not start: " + hello.error->message + " [" + hello.error->code +
               "]; it is started again for each request");
  else if (hello.ok())
    logInfo(name + ": " + (hello.result->value("cudaAvailable", false) ? hello.result->value("gpu", "a GPU") : "no GPU"));
  {
    std::lock_guard lock(mutex_);
    slots_[index].hello = hello.ok() ? *hello.result : protocol::json{{"error", hello.error->message}};
  }
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;  // stop() answered the waiting requests
      job = std::move(queue_.front());
      queue_.pop_front();
      slots_[index].busy = true;
    }
    const auto started = Clock::now();
    // Errors are values here: a work that throws is a bug of the service, answered as such.
    std::optional<RewardOutcome> outcome;
    try {
      outcome.emplace(job.work(*worker, cancel));
    } catch (const std::exception& e) {
      outcome.emplace(RewardFailure{500, "internal_error", std::string("the reward service failed: ") + e.what()});
    }
    const auto finished = Clock::now();
    {
      std::lock_guard lock(mutex_);
      slots_[index].busy = false;
      ++slots_[index].served;
    }
    job.answer.set_value(
        RewardAnswer{std::move(*outcome), secondsSince(job.submitted, started), secondsSince(started, finished)});
  }
}

}  // namespace stitch::server
