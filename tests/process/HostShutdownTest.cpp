// The real binary stopped while its harness worker is busy in a slow CPU forward
// (tests/fixtures/tasks/slow_cpu_forward.py): `optimize` at SIGTERM, SIGINT and SIGHUP writes its
// report and closes the job log as cancelled, `verify` stops its worker at SIGINT, `serve` stops when
// its client closes stdin or at SIGTERM, `bench` stops its optimize runs at SIGINT, and a host killed
// outright takes its worker with it. In every case no process the host started
// (its descendants, watched from the start) outlives it.
#include "process/ChildProcess.h"
#include "tests/process/ProcessTable.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <poll.h>
#include <set>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;
using stitch::testing::processTable;
using stitch::testing::running;

namespace {

const fs::path kTask = fs::path(STITCH_SOURCE_DIR) / "tests/fixtures/tasks/slow_cpu_forward.py";

// The host as a child of the test: its output so far and every process seen below it.
class Host {
public:
  Host(const std::vector<std::string>& args, bool pipeStdin, const fs::path& dir) : dir_(dir) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    stitch::process::ChildSpec spec;
    spec.argv = {STITCHCUDA_BIN};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.argv.insert(spec.argv.end(), {"--python", STITCH_TEST_PYTHON, "--jobs-dir", (dir / "jobs").string()});
    spec.pipeStdin = pipeStdin;
    spec.pipeStderr = true;
    auto child = stitch::process::spawnChild(spec);
    if (!child) throw std::runtime_error(child.error());
    pipes_ = child.value();
  }
  ~Host() {
    if (pid() > 0 && !status_) stitch::process::killChild(pid());
    for (int fd : {pipes_.stdinFd, pipes_.stdoutFd, pipes_.stderrFd})
      if (fd >= 0) ::close(fd);
  }

  pid_t pid() const { return pipes_.pid; }
  const std::string& err() const { return err_; }
  const std::set<pid_t>& descendants() const { return descendants_; }

  void send(const json& message) {
    const std::string body = message.dump();
    const std::string frame = "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    ASSERT_EQ(::write(pipes_.stdinFd, frame.data(), frame.size()), static_cast<ssize_t>(frame.size()));
  }
  void closeStdin() {
    ::close(pipes_.stdinFd);
    pipes_.stdinFd = -1;
  }

  // Reads output and records descendants until `done` holds or `limit` passes; false then.
  bool pumpUntil(const std::function<bool()>& done, std::chrono::milliseconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < until) {
      pump();
      if (done()) return true;
    }
    return false;
  }

  // Waits for the host to exit by itself; its wait status, or nothing after `limit`.
  std::optional<int> waitExit(std::chrono::milliseconds limit) {
    pumpUntil([&] { return (status_ = stitch::process::reapChild(pid(), false)).has_value(); }, limit);
    return status_;
  }

  // The descendants still running `limit` after the host ended (none, when it cleaned up).
  std::vector<pid_t> survivors(std::chrono::milliseconds limit) const {
    std::vector<pid_t> left;
    const auto until = std::chrono::steady_clock::now() + limit;
    do {
      left.clear();
      for (pid_t p : descendants_)
        if (running(p)) left.push_back(p);
      if (left.empty()) break;
      std::this_thread::sleep_for(50ms);
    } while (std::chrono::steady_clock::now() < until);
    return left;
  }

  // The job's log: the one job folder under --jobs-dir.
  std::vector<json> jobLog() const {
    std::vector<json> lines;
    for (const auto& entry : fs::directory_iterator(dir_ / "jobs")) {
      std::ifstream in(entry.path() / "log.jsonl");
      for (std::string line; std::getline(in, line);)
        if (!line.empty()) lines.push_back(json::parse(line));
    }
    return lines;
  }

private:
  void pump() {
    pollfd fds[2] = {{pipes_.stdoutFd, POLLIN, 0}, {pipes_.stderrFd, POLLIN, 0}};
    if (::poll(fds, 2, 50) > 0)
      for (auto& f : fds)
        if (f.revents & POLLIN) {
          char buffer[4096];
          const ssize_t n = ::read(f.fd, buffer, sizeof buffer);
          if (n > 0) (f.fd == pipes_.stdoutFd ? out_ : err_).append(buffer, static_cast<std::size_t>(n));
        }
    if (status_) return;
    const auto table = processTable();
    std::set<pid_t> below = {pid()};
    for (bool grew = true; grew;) {
      grew = false;
      for (const auto& [p, info] : table)
        if (below.count(info.second) && below.insert(p).second) grew = true;
    }
    below.erase(pid());
    descendants_.insert(below.begin(), below.end());
  }

  fs::path dir_;
  stitch::process::ChildPipes pipes_;
  std::string out_, err_;
  std::set<pid_t> descendants_;
  std::optional<int> status_;
};

// A folder of the test's own (runs of the suite side by side do not share one).
fs::path scratch(const std::string& name) {
  return fs::temp_directory_path() / ("stitch-shutdown-" + std::to_string(::getpid()) + "-" + name);
}

bool forwardStarted(const Host& host) { return host.err().find("slow forward: started") != std::string::npos; }

// The last event of a job log that was closed: jobFinished, and its state.
std::string closedAs(const std::vector<json>& log) {
  if (log.empty() || log.back().value("method", "") != "stitchcuda/jobFinished") return "(not closed)";
  return log.back()["params"].value("state", "");
}

// A client's session with `serve` up to one optimize job on the slow task.
void startJob(Host& host) {
  host.send({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"}, {"params", {{"capabilities", json::object()}}}});
  host.send({{"jsonrpc", "2.0"}, {"method", "initialized"}, {"params", json::object()}});
  host.send({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "stitchcuda/optimize"},
             {"params", {{"textDocument", {{"uri", "file://" + kTask.string()}}}}}});
}

class OptimizeStopsAtSignal : public ::testing::TestWithParam<int> {};

}  // namespace

TEST_P(OptimizeStopsAtSignal, WritesTheReportClosesTheLogAndLeavesNoChild) {
  const int signal = GetParam();
  const fs::path dir = scratch(sigabbrev_np(signal));
  Host host({"optimize", kTask.string(), "--out", (dir / "report").string()}, false, dir);
  ASSERT_TRUE(host.pumpUntil([&] { return forwardStarted(host); }, 180s)) << host.err();
  ASSERT_FALSE(host.descendants().empty());
  ::kill(host.pid(), signal);
  const auto status = host.waitExit(20s);
  ASSERT_TRUE(status) << "the host did not exit 20 s after SIG" << sigabbrev_np(signal) << "\n" << host.err();
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 128 + signal) << "wait status " << *status;
  EXPECT_EQ(host.survivors(2s), std::vector<pid_t>{}) << host.err();

  std::ifstream reportFile(dir / "report" / "report.json");
  ASSERT_TRUE(reportFile) << "no report";
  const json report = json::parse(reportFile);
  EXPECT_EQ(report["finished"]["state"], "cancelled");
  EXPECT_EQ(closedAs(host.jobLog()), "cancelled");
}

INSTANTIATE_TEST_SUITE_P(TerminationSignals, OptimizeStopsAtSignal, ::testing::Values(SIGTERM, SIGINT, SIGHUP),
                         [](const auto& info) { return std::string(sigabbrev_np(info.param)); });

TEST(HostShutdown, VerifyStopsItsWorkerAtSigint) {
  const fs::path dir = scratch("verify");
  fs::create_directories(dir);
  // The candidate is the slow task itself under the name verify looks for.
  std::ifstream task(kTask);
  std::string text((std::istreambuf_iterator<char>(task)), std::istreambuf_iterator<char>());
  text.replace(text.find("class Model("), 12, "class ModelNew(");
  std::ofstream(dir / "candidate.py") << text;
  Host host({"verify", "--reference", kTask.string(), "--candidate", (dir / "candidate.py").string(), "--no-timing"},
            false, dir / "run");
  ASSERT_TRUE(host.pumpUntil([&] { return forwardStarted(host); }, 180s)) << host.err();
  ::kill(host.pid(), SIGINT);
  const auto status = host.waitExit(20s);
  ASSERT_TRUE(status) << host.err();
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 128 + SIGINT) << "wait status " << *status << "\n" << host.err();
  EXPECT_NE(host.err().find("stopped by SIGINT before a verdict"), std::string::npos) << host.err();
  EXPECT_EQ(host.survivors(2s), std::vector<pid_t>{});
}

TEST(HostShutdown, BenchStopsItsOptimizeRunsAtSigintAndLeavesTheTaskToResume) {
  const fs::path dir = scratch("bench");
  fs::remove_all(dir);
  fs::create_directories(dir / "tasks" / "level1");
  fs::copy_file(kTask, dir / "tasks" / "level1" / "slow.py");
  Host host({"bench", (dir / "tasks").string(), "--out", (dir / "out").string()}, false, dir / "run");
  // The optimize run's stderr (the worker's with it) goes to the task's log.
  const fs::path taskLog = dir / "out" / "logs" / "level1" / "slow.stderr.log";
  ASSERT_TRUE(host.pumpUntil(
      [&] {
        std::ifstream in(taskLog);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        return text.find("slow forward: started") != std::string::npos;
      },
      180s))
      << host.err();
  ::kill(host.pid(), SIGINT);
  const auto status = host.waitExit(20s);
  ASSERT_TRUE(status) << host.err();
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 128 + SIGINT) << "wait status " << *status;
  EXPECT_EQ(host.survivors(2s), std::vector<pid_t>{});
  std::ifstream resultsFile(dir / "out" / "results.json");
  ASSERT_TRUE(resultsFile) << host.err();
  const json results = json::parse(resultsFile);
  EXPECT_EQ(results["notRun"], json::array({"level1/slow"}));
  EXPECT_EQ(results["results"], json::array());
  std::ifstream reportFile(dir / "out" / "reports" / "level1" / "slow" / "report.json");
  ASSERT_TRUE(reportFile) << "the stopped optimize wrote no report";
  EXPECT_EQ(json::parse(reportFile)["finished"]["state"], "cancelled");
}

TEST(HostShutdown, AHostKilledOutrightTakesItsWorkerWithIt) {
  const fs::path dir = scratch("KILL");
  Host host({"optimize", kTask.string()}, false, dir);
  ASSERT_TRUE(host.pumpUntil([&] { return forwardStarted(host); }, 180s)) << host.err();
  ASSERT_FALSE(host.descendants().empty());
  ::kill(host.pid(), SIGKILL);
  ASSERT_TRUE(host.waitExit(10s));
  EXPECT_EQ(host.survivors(5s), std::vector<pid_t>{});
}

TEST(HostShutdown, ServeStopsItsJobsWhenTheClientClosesStdin) {
  const fs::path dir = scratch("serve-eof");
  Host host({"serve"}, true, dir);
  startJob(host);
  ASSERT_TRUE(host.pumpUntil([&] { return forwardStarted(host); }, 180s)) << host.err();
  ASSERT_FALSE(host.descendants().empty());
  host.closeStdin();
  const auto status = host.waitExit(20s);
  ASSERT_TRUE(status) << "serve did not exit 20 s after its input ended\n" << host.err();
  EXPECT_TRUE(WIFEXITED(*status)) << "wait status " << *status;
  EXPECT_EQ(host.survivors(2s), std::vector<pid_t>{}) << host.err();
  EXPECT_EQ(closedAs(host.jobLog()), "cancelled");
}

TEST(HostShutdown, ServeStopsItsJobsAtSigterm) {
  const fs::path dir = scratch("serve-term");
  Host host({"serve"}, true, dir);
  startJob(host);
  ASSERT_TRUE(host.pumpUntil([&] { return forwardStarted(host); }, 180s)) << host.err();
  ::kill(host.pid(), SIGTERM);
  const auto status = host.waitExit(20s);
  ASSERT_TRUE(status) << "serve did not exit 20 s after SIGTERM\n" << host.err();
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 128 + SIGTERM) << "wait status " << *status;
  EXPECT_EQ(host.survivors(2s), std::vector<pid_t>{}) << host.err();
  EXPECT_EQ(closedAs(host.jobLog()), "cancelled");
}
