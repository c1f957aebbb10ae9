// Pins how serve-reward's pool treats workers that come and go (Slurm worker jobs, RewardSlurmWorkers):
// a slot whose worker is away takes no request and does not count as free; a request whose worker was
// lost while running it runs again on another worker and is answered once; past its retries it is
// answered 503 worker_lost. The requests are slurmWork's, so the mapping of a lost call is pinned too.
#include "server/RewardPool.h"
#include "server/RewardSlurmWorkers.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

using namespace stitch;
using namespace std::chrono_literals;
using protocol::json;
using server::RewardAnswer;
using server::RewardPool;

namespace {

// A worker job stand-in: answers {"result": {"ranOn": name}}, or, `losses` times, is lost under the
// request (worker_lost, setting `lostFlag`) and stays away until `back` is set; `away` from the start.
class JobStandIn final : public server::IntermittentWorker {
public:
  JobStandIn(std::string name, int losses, std::atomic<bool>* back, std::atomic<bool>* lostFlag = nullptr,
             bool away = false)
      : name_(std::move(name)), losses_(losses), back_(back), lostFlag_(lostFlag), away_(away) {}

  bool awaitReady(const agents::CancelToken& cancel) override {
    while (away_ && !(back_ && *back_)) {
      if (cancel.cancelled()) return false;
      std::this_thread::sleep_for(5ms);
    }
    away_ = false;
    return true;
  }
  agents::WorkerReply call(const std::string& method, const json&, std::chrono::milliseconds,
                           const agents::CancelToken&) override {
    if (method == "hello") return {json{{"cudaAvailable", false}}, std::nullopt};
    if (losses_ > 0) {
      --losses_;
      away_ = true;
      if (lostFlag_) *lostFlag_ = true;
      return {std::nullopt, agents::WorkerError{"worker_lost", name_ + " was lost", std::nullopt, std::nullopt}};
    }
    return {json{{"result", {{"ranOn", name_}}}}, std::nullopt};
  }

private:
  std::string name_;
  int losses_;
  std::atomic<bool>* back_;
  std::atomic<bool>* lostFlag_;
  bool away_;
};

RewardAnswer answerOf(std::future<RewardAnswer>& f) {
  EXPECT_EQ(f.wait_for(20s), std::future_status::ready);
  return f.get();
}

server::RewardWork request() { return server::slurmWork("score", json::object(), 10s); }

}  // namespace

TEST(RewardLostWorker, ARequestWhoseWorkerIsLostRunsOnAnotherAndIsAnsweredOnce) {
  // The steady worker connects only once the other was lost under the first request.
  std::atomic<bool> lost{false};
  RewardPool pool({std::nullopt, std::nullopt}, 4, [&](std::size_t slot, std::optional<int>) {
    return slot == 0 ? std::make_unique<JobStandIn>("lost", 1, nullptr, &lost)
                     : std::make_unique<JobStandIn>("steady", 0, &lost, nullptr, true);
  }, 10s, 1);
  std::vector<std::future<RewardAnswer>> answers;
  for (int i = 0; i < 4; ++i) answers.push_back(*pool.submit(request()));
  int steady = 0;
  for (auto& f : answers) {
    auto a = answerOf(f);
    ASSERT_TRUE(a.outcome.ok()) << a.outcome.error().message;
    steady += a.outcome.value()["ranOn"] == "steady" ? 1 : 0;
  }
  EXPECT_EQ(steady, 4) << "the lost worker stays away: every request, the lost one too, ran on the other";
  const auto s = pool.snapshot();
  EXPECT_FALSE(s.slots[0].ready);
  EXPECT_EQ(s.slots[0].served + s.slots[1].served, 4u) << "a lost run is not a served request";
}

TEST(RewardLostWorker, ARequestLostPastItsRetriesIsAnswered503WorkerLost) {
  std::atomic<bool> back{true};  // each comes back at once, and is lost again
  RewardPool pool({std::nullopt}, 1, [&](std::size_t, std::optional<int>) {
    return std::make_unique<JobStandIn>("flaky", 100, &back);
  }, 10s, 2);
  auto f = pool.submit(request());
  ASSERT_TRUE(f);
  auto a = answerOf(*f);
  ASSERT_FALSE(a.outcome.ok());
  EXPECT_EQ(a.outcome.error().status, 503);
  EXPECT_EQ(a.outcome.error().code, "worker_lost");
}

TEST(RewardLostWorker, ASlotWhoseWorkerIsAwayIsNotFreeAndTakesNothing) {
  std::atomic<bool> back{false};
  RewardPool pool({std::nullopt}, 1, [&](std::size_t, std::optional<int>) {
    return std::make_unique<JobStandIn>("away", 1, &back);
  }, 10s, 0);
  // The first request loses the worker (no retries: answered worker_lost); then the slot waits for it.
  auto first = pool.submit(request());
  ASSERT_TRUE(first);
  EXPECT_EQ(answerOf(*first).outcome.error().code, "worker_lost");
  while (pool.snapshot().slots[0].ready) std::this_thread::sleep_for(5ms);
  auto waiting = pool.submit(request());
  ASSERT_TRUE(waiting) << "the queue of 1 takes a request";
  EXPECT_FALSE(pool.submit(request())) << "a slot whose worker is away counted as free";
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(pool.snapshot().queued, 1u);
  back = true;
  auto a = answerOf(*waiting);
  ASSERT_TRUE(a.outcome.ok());
  EXPECT_EQ(a.outcome.value()["ranOn"], "away");
}
