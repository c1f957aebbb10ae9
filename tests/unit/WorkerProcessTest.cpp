// Pins worker supervision against a real child process: replies, events, stale and garbage
// lines, deadlines (the hung worker is killed), crashes, sticky errors and restarts.
#include "server/WorkerProcess.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>

using namespace stitch;
using namespace std::chrono_literals;

namespace {

server::WorkerSettings fakeWorker() {
  return {"python3", std::filesystem::path(STITCH_SOURCE_DIR) / "tests/fixtures/fake_harness", {}, std::nullopt};
}

bool alive(int pid) { return ::kill(pid, 0) == 0; }

}  // namespace

TEST(WorkerProcess, AnswersAndForwardsEventsSkippingNoise) {
  std::vector<protocol::json> events;
  server::WorkerProcess w(fakeWorker(), [&](const protocol::json& e) { events.push_back(e); });
  agents::CancelToken never;
  auto r = w.call("echo", {{"x", 1}}, 20s, never);
  ASSERT_TRUE(r.ok()) << r.error->message;
  EXPECT_EQ((*r.result)["x"], 1);
  r = w.call("noisy", {}, 20s, never);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r.result, "ok");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["message"], "working");
  EXPECT_EQ(w.starts(), 1);
}

// A worker is pinned to its GPU and, where several share the host, to its share of the cores: its
// PyTorch would otherwise size its thread pool to every core (OMP_NUM_THREADS), unless the user set it.
TEST(WorkerProcess, SeesItsGpuAndItsShareOfTheCores) {
  auto settings = fakeWorker();
  settings.gpu = 1;
  settings.cpuThreads = server::cpuShare(4);
  ASSERT_TRUE(settings.cpuThreads);
  server::WorkerProcess w(settings, nullptr);
  auto r = w.call("env", {{"names", {"CUDA_VISIBLE_DEVICES", "OMP_NUM_THREADS"}}}, 20s, agents::CancelToken());
  ASSERT_TRUE(r.ok()) << r.error->message;
  EXPECT_EQ((*r.result)["CUDA_VISIBLE_DEVICES"], "1");
  const char* own = std::getenv("OMP_NUM_THREADS");
  EXPECT_EQ((*r.result)["OMP_NUM_THREADS"], own ? std::string(own) : std::to_string(*settings.cpuThreads));
  EXPECT_FALSE(server::cpuShare(1)) << "a worker alone keeps PyTorch's own choice";
  EXPECT_EQ(server::cpuShare(1 << 20), 1u) << "never fewer than one thread";
}

TEST(WorkerProcess, StructuredErrorsKeepFileAndLine) {
  server::WorkerProcess w(fakeWorker(), nullptr);
  auto r = w.call("fail", {}, 20s, agents::CancelToken());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error->code, "task_syntax_error");
  EXPECT_EQ(r.error->file, "/tmp/m.py");
  EXPECT_EQ(r.error->line, 3);
  EXPECT_TRUE(w.call("echo", {}, 20s, agents::CancelToken()).ok());  // the same process carries on
  EXPECT_EQ(w.starts(), 1);
}

TEST(WorkerProcess, HungWorkerIsKilledAtTheDeadlineAndReplaced) {
  server::WorkerProcess w(fakeWorker(), nullptr);
  agents::CancelToken never;
  int pid = (*w.call("pid", {}, 20s, never).result)["pid"];
  auto start = std::chrono::steady_clock::now();
  auto r = w.call("hang", {}, 500ms, never);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error->code, "deadline_exceeded");
  EXPECT_FALSE(alive(pid));
  auto again = w.call("pid", {}, 20s, never);
  ASSERT_TRUE(again.ok());
  EXPECT_NE((*again.result)["pid"], pid);
  EXPECT_EQ(w.starts(), 2);
}

TEST(WorkerProcess, CrashIsReportedWithItsStatus) {
  server::WorkerProcess w(fakeWorker(), nullptr);
  auto r = w.call("crash", {}, 20s, agents::CancelToken());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error->code, "worker_crashed");
  EXPECT_NE(r.error->message.find("status 3"), std::string::npos) << r.error->message;
  EXPECT_TRUE(w.call("echo", {}, 20s, agents::CancelToken()).ok());
}

TEST(WorkerProcess, StickyCudaErrorRestartsTheWorker) {
  server::WorkerProcess w(fakeWorker(), nullptr);
  agents::CancelToken never;
  int pid = (*w.call("pid", {}, 20s, never).result)["pid"];
  auto r = w.call("sticky", {}, 20s, never);
  EXPECT_EQ(r.error->code, "cuda_sticky_error");
  EXPECT_NE((*w.call("pid", {}, 20s, never).result)["pid"], pid);
}

TEST(WorkerProcess, CancelStopsAHungCall) {
  server::WorkerProcess w(fakeWorker(), nullptr);
  agents::CancelSource source;
  std::thread canceller([&] {
    std::this_thread::sleep_for(300ms);
    source.cancel();
  });
  auto r = w.call("hang", {}, 60s, source.token());
  canceller.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error->code, "cancelled");
}

TEST(WorkerProcess, MissingInterpreterIsAClearError) {
  auto settings = fakeWorker();
  settings.python = "/no/such/python";
  server::WorkerProcess w(settings, nullptr);
  auto r = w.call("echo", {}, 20s, agents::CancelToken());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error->message.find("could not start"), std::string::npos) << r.error->message;
}
