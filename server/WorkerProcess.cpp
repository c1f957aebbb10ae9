// Harness worker supervision; see WorkerProcess.h.
#include "server/WorkerProcess.h"

#include "process/ChildProcess.h"
#include "server/Logger.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <poll.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace stitch::server {
namespace {

using Clock = std::chrono::steady_clock;

agents::WorkerReply failure(std::string code, std::string message) {
  return agents::WorkerReply{std::nullopt, agents::WorkerError{std::move(code), std::move(message), {}, {}}};
}

bool writeAll(int fd, const std::string& data) {
  std::size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

std::chrono::milliseconds callDeadline(std::chrono::milliseconds configured, std::optional<double> loadTimeoutSeconds) {
  constexpr double kAnswerSeconds = 60;  // for the worker to answer once a stage's deadline passed
  if (!loadTimeoutSeconds) return configured;
  const auto stage = std::chrono::milliseconds(static_cast<long long>((*loadTimeoutSeconds + kAnswerSeconds) * 1000));
  return std::max(configured, stage);
}

std::optional<unsigned> cpuShare(int workers) {
  if (workers <= 1) return std::nullopt;
  return std::max(1u, std::thread::hardware_concurrency() / static_cast<unsigned>(workers));
}

WorkerProcess::WorkerProcess(WorkerSettings settings, std::function<void(const protocol::json&)> onEvent)
    : settings_(std::move(settings)), onEvent_(std::move(onEvent)) {
  // A worker that died (or never started: a missing interpreter) closes its stdin; writing to it
  // must be a failed write the supervisor reports, not a SIGPIPE that kills whatever process
  // embeds this class — the host, a test, a benchmark.
  static std::once_flag ignorePipe;
  std::call_once(ignorePipe, [] { std::signal(SIGPIPE, SIG_IGN); });
}

WorkerProcess::~WorkerProcess() {
  if (pid_ > 0) {
    // Ask politely first: a worker that exits by itself releases the GPU cleanly.
    writeAll(toWorker_, protocol::json{{"id", 0}, {"method", "shutdown"}, {"params", protocol::json::object()}}.dump() + "\n");
    for (int i = 0; i < 20; ++i) {
      if (process::reapChild(pid_, false)) {
        pid_ = -1;
        break;
      }
      ::usleep(50 * 1000);
    }
  }
  kill();
}

std::optional<agents::WorkerError> WorkerProcess::spawn() {
  std::string pythonPath = settings_.harnessDir.string();
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) pythonPath += ":" + std::string(old);
  process::ChildSpec spec;
  spec.argv = {settings_.python, "-m", "stitchcuda_harness", "worker"};
  spec.argv.insert(spec.argv.end(), settings_.extraArgs.begin(), settings_.extraArgs.end());
  if (settings_.loadTimeoutSeconds) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g", *settings_.loadTimeoutSeconds);
    spec.argv.insert(spec.argv.end(), {"--load-timeout", seconds});
  }
  spec.setEnv = {"PYTHONPATH=" + pythonPath, "PYTHONUNBUFFERED=1"};
  if (settings_.gpu) spec.setEnv.push_back("CUDA_VISIBLE_DEVICES=" + std::to_string(*settings_.gpu));
  if (settings_.cpuThreads && !std::getenv("OMP_NUM_THREADS"))
    spec.setEnv.push_back("OMP_NUM_THREADS=" + std::to_string(*settings_.cpuThreads));
  spec.pipeStdin = true;
  auto child = process::spawnChild(spec);
  if (!child)
    return agents::WorkerError{"worker_start_failed", "the harness worker could not start (" + child.error() + ")", {}, {}};
  pid_ = child.value().pid;
  toWorker_ = child.value().stdinFd;
  fromWorker_ = child.value().stdoutFd;
  pending_.clear();
  ++starts_;
  logInfo("harness worker started (pid " + std::to_string(pid_) + ", " + settings_.python + ")");
  return std::nullopt;
}

void WorkerProcess::kill() {
  if (pid_ > 0) {
    process::killChild(pid_);
    pid_ = -1;
  }
  if (toWorker_ >= 0) ::close(toWorker_);
  if (fromWorker_ >= 0) ::close(fromWorker_);
  toWorker_ = fromWorker_ = -1;
}

std::string WorkerProcess::exitDescription() {
  pid_t pid = pid_;
  const std::optional<int> reaped = process::reapChild(pid_, true);
  pid_ = -1;
  kill();  // close the pipes
  if (!reaped) return "the worker ended";
  const int status = *reaped;
  if (WIFEXITED(status)) {
    int code = WEXITSTATUS(status);
    return "the worker (pid " + std::to_string(pid) + ") exited with status " + std::to_string(code);
  }
  if (WIFSIGNALED(status))
    return "the worker (pid " + std::to_string(pid) + ") was killed by signal " + std::to_string(WTERMSIG(status)) +
           " (" + strsignal(WTERMSIG(status)) + ")";
  return "the worker ended";
}

agents::WorkerReply WorkerProcess::call(const std::string& method, const protocol::json& params,
                                        std::chrono::milliseconds deadline, const agents::CancelToken& cancel) {
  if (pid_ <= 0)
    if (auto error = spawn()) return agents::WorkerReply{std::nullopt, *error};
  std::int64_t id = nextId_++;
  std::string line = protocol::serialize(protocol::json{{"id", id}, {"method", method}, {"params", params}}) + "\n";
  if (!writeAll(toWorker_, line)) return failure("worker_crashed", exitDescription());

  auto until = Clock::now() + deadline;
  while (true) {
    // Complete lines first: the answer may already be buffered.
    std::size_t eol;
    while ((eol = pending_.find('\n')) != std::string::npos) {
      std::string text = pending_.substr(0, eol);
      pending_.erase(0, eol + 1);
      protocol::json message;
      try {
        message = protocol::json::parse(text);
      } catch (const std::exception&) {
        logWarning("worker wrote a line that is not JSON: " + text.substr(0, 200));
        continue;
      }
      if (message.contains("event")) {
        if (onEvent_) onEvent_(message);
        continue;
      }
      if (!message.contains("id") || message["id"] != id) continue;  // a stale answer
      if (message.contains("result")) return agents::WorkerReply{message["result"], std::nullopt};
      const protocol::json& e = message.value("error", protocol::json::object());
      agents::WorkerError error{e.value("code", "worker_error"), e.value("message", "(no message)"), {}, {}};
      if (e.contains("file") && e["file"].is_string()) error.file = e["file"].get<std::string>();
      if (e.contains("line") && e["line"].is_number_integer()) error.line = e["line"].get<int>();
      // A sticky CUDA error poisons the process, and after a stage_timeout it exits (the stage's code
      // cannot be stopped otherwise): the next call must get a fresh one.
      if (error.code == "cuda_sticky_error" || error.code == "stage_timeout") kill();
      return agents::WorkerReply{std::nullopt, error};
    }
    if (cancel.cancelled()) {
      kill();
      return failure("cancelled", method + " cancelled; the worker was stopped");
    }
    auto now = Clock::now();
    if (now >= until) {
      kill();
      return failure("deadline_exceeded", method + " took longer than " +
                                              std::to_string(deadline.count() / 1000) + " s; the worker was killed");
    }
    auto slice = std::min<long long>(100, std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count() + 1);
    pollfd pfd{fromWorker_, POLLIN, 0};
    int ready = ::poll(&pfd, 1, static_cast<int>(slice));
    if (ready < 0 && errno != EINTR) return failure("worker_crashed", std::strerror(errno));
    if (ready <= 0) continue;
    char buffer[1 << 16];
    ssize_t n = ::read(fromWorker_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return failure("worker_crashed", exitDescription() + " during " + method);
    pending_.append(buffer, static_cast<std::size_t>(n));
  }
}

}  // namespace stitch::server
