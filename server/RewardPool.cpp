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
                       std::chrono::milliseconds helloDeadline, int lostRetries)
    : makeWorker_(std::move(makeWorker)), capacity_(queueCapacity), lostRetries_(lostRetries) {
  for (const auto& gpu : slotGpus) slots_.push_back(SlotState{gpu, true, false, 0, nullptr});
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
  for (const auto& s : slots_) idle += s.ready && !s.busy ? 1 : 0;
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

void RewardPool::greet(std::size_t index, agents::Worker& worker, std::chrono::milliseconds deadline) {
  std::optional<int> gpu;
  {
    std::lock_guard lock(mutex_);
    gpu = slots_[index].gpu;
  }
  const auto cancel = cancel_.token();
  auto hello = worker.call("hello", protocol::json::object(), deadline, cancel);
  const std::string name = "serve-reward: worker " + std::to_string(index) + (gpu ? " (GPU " + std::to_string(*gpu) + ")" : "");
  if (!hello.ok() && !cancel.cancelled())
    logWarning(name + " did not start: " + hello.error->message + " [" + hello.error->code +
               "]; it is started again for each request");
  else if (hello.ok())
    logInfo(name + ": " + (hello.result->value("cudaAvailable", false) ? hello.result->value("gpu", "a GPU") : "no GPU"));
  std::lock_guard lock(mutex_);
  slots_[index].hello = hello.ok() ? *hello.result : protocol::json{{"error", hello.error->message}};
}

std::optional<RewardPool::Job> RewardPool::take(std::size_t index) {
  std::unique_lock lock(mutex_);
  ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
  if (stopping_) return std::nullopt;  // stop() answered the waiting requests
  Job job = std::move(queue_.front());
  queue_.pop_front();
  slots_[index].busy = true;
  return job;
}

bool RewardPool::requeueLost(Job& job, const RewardFailure& failure, double waited, double ran) {
  bool stopped = false;
  {
    std::lock_guard lock(mutex_);
    if (failure.loss == WorkerLoss::whileRunning) ++job.lostRuns;
    stopped = stopping_;
    if (!stopped && job.lostRuns <= lostRetries_) {
      logWarning("serve-reward: " + failure.message + "; the request runs again on another worker");
      queue_.push_front(std::move(job));
      ready_.notify_one();
      return true;
    }
  }
  job.answer.set_value(RewardAnswer{stopped ? shuttingDown() : failure, waited, ran});
  return false;
}

void RewardPool::runSlot(std::size_t index, std::chrono::milliseconds helloDeadline) {
  std::optional<int> gpu;
  {
    std::lock_guard lock(mutex_);
    gpu = slots_[index].gpu;
  }
  // Made and first called on this thread: the worker dies with the thread that started it
  // (PR_SET_PDEATHSIG), and this thread lives as long as the slot.
  std::unique_ptr<agents::Worker> worker = makeWorker_(index, gpu);
  auto* intermittent = dynamic_cast<IntermittentWorker*>(worker.get());
  const auto cancel = cancel_.token();
  bool greeted = false;
  for (;;) {
    if (intermittent && !greeted) {
      {
        std::lock_guard lock(mutex_);
        slots_[index].ready = false;
        slots_[index].hello = nullptr;
      }
      if (!intermittent->awaitReady(cancel)) return;
      std::lock_guard lock(mutex_);
      slots_[index].ready = true;
    }
    if (!greeted) greet(index, *worker, helloDeadline);
    greeted = true;
    std::optional<Job> job = take(index);
    if (!job) return;
    const auto started = Clock::now();
    // Errors are values here: a work that throws is a bug of the service, answered as such.
    std::optional<RewardOutcome> outcome;
    try {
      outcome.emplace(job->work(*worker, cancel));
    } catch (const std::exception& e) {
      outcome.emplace(RewardFailure{500, "internal_error", std::string("the reward service failed: ") + e.what()});
    }
    const auto finished = Clock::now();
    const bool lost = !outcome->ok() && outcome->error().loss != WorkerLoss::none;
    {
      std::lock_guard lock(mutex_);
      slots_[index].busy = false;
      if (!lost) ++slots_[index].served;
    }
    const double waited = secondsSince(job->submitted, started), ran = secondsSince(started, finished);
    if (lost) {
      greeted = false;  // wait for the worker's replacement
      requeueLost(*job, outcome->error(), waited, ran);
      continue;
    }
    job->answer.set_value(RewardAnswer{std::move(*outcome), waited, ran});
  }
}

}  // namespace stitch::server
