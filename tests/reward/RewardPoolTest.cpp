// Pins serve-reward's pool with stand-in workers: it takes as many requests as it has free workers
// plus its queue and refuses the rest at once; each taken request is answered exactly once (a work that
// throws too, as a 500); a stop cancels the running work, answers the waiting 503 and takes no more; each
// worker is made for its own GPU.
#include "server/RewardPool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <mutex>
#include <set>
#include <thread>

using namespace stitch;
using namespace std::chrono_literals;
using server::RewardAnswer;
using server::RewardOutcome;
using server::RewardPool;
using protocol::json;

namespace {

class StandInWorker final : public agents::Worker {
public:
  agents::WorkerReply call(const std::string& method, const json&, std::chrono::milliseconds,
                           const agents::CancelToken&) override {
    return {json{{"method", method}, {"cudaAvailable", false}}, std::nullopt};
  }
};

RewardPool::WorkerFactory standIns() {
  return [](std::size_t, std::optional<int>) { return std::make_unique<StandInWorker>(); };
}

// A work that answers {"n": n} once `gate` opens, or a cancelled failure if the pool stops first.
server::RewardWork gated(std::shared_future<void> gate, int n) {
  return [gate, n](agents::Worker&, const agents::CancelToken& cancel) -> RewardOutcome {
    while (gate.wait_for(10ms) != std::future_status::ready)
      if (cancel.cancelled()) return server::RewardFailure{503, "cancelled", "stopped"};
    return json{{"n", n}};
  };
}

RewardAnswer answerOf(std::future<RewardAnswer>& f) {
  EXPECT_EQ(f.wait_for(20s), std::future_status::ready);
  return f.get();
}

}  // namespace

TEST(RewardPool, TakesFreeWorkersPlusItsQueueAndRefusesTheRest) {
  RewardPool pool({std::nullopt, std::nullopt}, 2, standIns(), 10s);
  std::promise<void> open;
  std::shared_future<void> gate = open.get_future().share();
  std::vector<std::future<RewardAnswer>> taken;
  for (int n = 0; n < 4; ++n) {
    auto f = pool.submit(gated(gate, n));
    ASSERT_TRUE(f) << "request " << n << " refused";
    taken.push_back(std::move(*f));
  }
  EXPECT_FALSE(pool.submit(gated(gate, 4))) << "2 workers and a queue of 2 took a fifth request";
  open.set_value();
  std::set<int> answered;
  for (auto& f : taken) {
    auto a = answerOf(f);
    ASSERT_TRUE(a.outcome.ok());
    answered.insert(a.outcome.value()["n"].get<int>());
    EXPECT_GE(a.ranSeconds, 0);
  }
  EXPECT_EQ(answered, (std::set<int>{0, 1, 2, 3}));
  // Room again once they are done.
  auto again = pool.submit(gated(gate, 5));
  ASSERT_TRUE(again);
  EXPECT_EQ(answerOf(*again).outcome.value()["n"], 5);
  const auto snapshot = pool.snapshot();
  EXPECT_EQ(snapshot.queued, 0u);
  EXPECT_EQ(snapshot.busy, 0u);
  EXPECT_EQ(snapshot.slots[0].served + snapshot.slots[1].served, 5u);
}

TEST(RewardPool, AQueueOfZeroStillTakesARequestForAFreeWorker) {
  RewardPool pool({std::nullopt}, 0, standIns(), 10s);
  std::promise<void> open;
  auto first = pool.submit(gated(open.get_future().share(), 1));
  ASSERT_TRUE(first);
  std::promise<void> never;
  EXPECT_FALSE(pool.submit(gated(never.get_future().share(), 2)));
  open.set_value();
  EXPECT_TRUE(answerOf(*first).outcome.ok());
}

TEST(RewardPool, AWorkThatThrowsIsAnsweredAs500AndTheWorkerGoesOn) {
  RewardPool pool({std::nullopt}, 1, standIns(), 10s);
  auto thrown = pool.submit([](agents::Worker&, const agents::CancelToken&) -> RewardOutcome {
    throw std::runtime_error("boom");
  });
  ASSERT_TRUE(thrown);
  auto a = answerOf(*thrown);
  ASSERT_FALSE(a.outcome.ok());
  EXPECT_EQ(a.outcome.error().status, 500);
  EXPECT_NE(a.outcome.error().message.find("boom"), std::string::npos);
  auto next = pool.submit([](agents::Worker& w, const agents::CancelToken& c) -> RewardOutcome {
    return *w.call("score", json::object(), 1s, c).result;
  });
  ASSERT_TRUE(next);
  EXPECT_EQ(answerOf(*next).outcome.value()["method"], "score");
}

TEST(RewardPool, StopCancelsTheRunningAnswersTheWaitingAndTakesNoMore) {
  RewardPool pool({std::nullopt}, 3, standIns(), 10s);
  std::promise<void> never;
  std::shared_future<void> gate = never.get_future().share();
  auto running = pool.submit(gated(gate, 1));
  ASSERT_TRUE(running);
  while (pool.snapshot().busy == 0) std::this_thread::sleep_for(5ms);
  auto waiting = pool.submit(gated(gate, 2));
  ASSERT_TRUE(waiting);
  pool.stop();
  auto w = answerOf(*waiting);
  ASSERT_FALSE(w.outcome.ok());
  EXPECT_EQ(w.outcome.error().status, 503);
  EXPECT_EQ(w.outcome.error().code, "shutting_down");
  auto r = answerOf(*running);
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_EQ(r.outcome.error().code, "cancelled");
  EXPECT_FALSE(pool.submit(gated(gate, 3)));
  EXPECT_TRUE(pool.snapshot().stopping);
}

TEST(RewardPool, EachWorkerIsMadeForItsOwnGpuAndSaysHello) {
  std::mutex m;
  std::multiset<int> gpus;
  {
    RewardPool pool({0, 1, 2}, 0, [&](std::size_t, std::optional<int> gpu) {
      std::lock_guard lock(m);
      gpus.insert(gpu.value_or(-1));
      return std::make_unique<StandInWorker>();
    }, 10s);
    for (int i = 0; i < 500; ++i) {
      const auto s = pool.snapshot();
      if (std::all_of(s.slots.begin(), s.slots.end(), [](const auto& slot) { return slot.hello.is_object(); })) break;
      std::this_thread::sleep_for(10ms);
    }
    for (const auto& slot : pool.snapshot().slots) EXPECT_EQ(slot.hello["method"], "hello");
  }
  EXPECT_EQ(gpus, (std::multiset<int>{0, 1, 2}));
}
