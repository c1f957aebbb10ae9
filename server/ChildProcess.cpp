// Starting and running child processes; see ChildProcess.h.
#include "server/ChildProcess.h"

#include "protocol/NumberText.h"

#include <cerrno>
#include <cstdio>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace stitch::server {
namespace {

using Clock = std::chrono::steady_clock;

std::string nameOf(const std::string& assignment) { return assignment.substr(0, assignment.find('=')); }

void closeBoth(int fds[2]) {
  if (fds[0] >= 0) ::close(fds[0]);
  if (fds[1] >= 0) ::close(fds[1]);
}

}  // namespace

protocol::Result<ChildPipes, std::string> spawnChild(const ChildSpec& spec) {
  if (spec.argv.empty()) return std::string("no program to start");
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
  auto fail = [&](const char* what) {
    std::string message = std::string(what) + ": " + std::strerror(errno);
    closeBoth(in);
    closeBoth(out);
    closeBoth(err);
    return message;
  };
  if ((spec.pipeStdin && ::pipe2(in, O_CLOEXEC) != 0) || ::pipe2(out, O_CLOEXEC) != 0 ||
      (spec.pipeStderr && ::pipe2(err, O_CLOEXEC) != 0))
    return fail("pipe");

  // Everything the child needs is prepared before fork: between fork and exec a multi-threaded
  // parent's child may only make async-signal-safe calls (no malloc).
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string_view kv(*e);
    bool replaced = false;
    for (const auto& s : spec.setEnv)
      if (kv.starts_with(nameOf(s) + "=")) replaced = true;
    if (!replaced) env.emplace_back(kv);
  }
  env.insert(env.end(), spec.setEnv.begin(), spec.setEnv.end());
  std::vector<std::string> args = spec.argv;
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const std::string& execFailed = spec.execFailedMessage;

  pid_t pid = ::fork();
  if (pid < 0) return fail("fork");
  if (pid == 0) {
    if (spec.ownProcessGroup) ::setpgid(0, 0);
    if (in[0] >= 0) ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    if (err[1] >= 0) ::dup2(err[1], 2);
    ::execvpe(argv[0], argv.data(), envp.data());
    [[maybe_unused]] auto ignored = ::write(2, execFailed.data(), execFailed.size());
    ::_exit(127);
  }
  if (spec.ownProcessGroup) ::setpgid(pid, pid);  // also from the parent, so kill(-pid) works whoever runs first
  if (in[0] >= 0) ::close(in[0]);
  ::close(out[1]);
  if (err[1] >= 0) ::close(err[1]);
  return ChildPipes{pid, in[1], out[0], err[0]};
}

std::string ChildOutcome::describe() const {
  if (!startError.empty()) return "could not be started: " + startError;
  if (timedOut) return "timed out after " + protocol::fixed(seconds, 0) + " s and was killed";
  if (signal) return "was killed by signal " + std::to_string(*signal) + " (" + ::strsignal(*signal) + ")";
  if (exitCode) return "exited with status " + std::to_string(*exitCode);
  return "ended";
}

ChildOutcome runChild(const ChildSpec& spec, std::chrono::milliseconds timeout,
                      const std::function<void(std::string_view line)>& onStdoutLine,
                      const std::function<void(std::string_view chunk)>& onStderr) {
  constexpr std::size_t kTail = 8192;
  constexpr auto kDrain = std::chrono::seconds(2);  // for stdout's end after the child was reaped
  const auto start = Clock::now();
  ChildOutcome outcome;
  auto spawned = spawnChild(spec);
  if (!spawned) {
    outcome.startError = spawned.error();
    return outcome;
  }
  ChildPipes child = spawned.value();
  if (child.stdinFd >= 0) ::close(child.stdinFd);
  for (int fd : {child.stdoutFd, child.stderrFd})
    if (fd >= 0) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);

  std::string pending;
  bool outOpen = true, errOpen = child.stderrFd >= 0, reaped = false;
  int status = 0;
  std::optional<Clock::time_point> drainUntil;
  auto emitLines = [&] {
    std::size_t eol;
    while ((eol = pending.find('\n')) != std::string::npos) {
      onStdoutLine(std::string_view(pending).substr(0, eol));
      pending.erase(0, eol + 1);
    }
  };
  while (true) {
    if (!reaped && ::waitpid(child.pid, &status, WNOHANG) == child.pid) reaped = true;
    auto now = Clock::now();
    if (!reaped && now - start >= timeout) {
      if (spec.ownProcessGroup) ::kill(-child.pid, SIGKILL);
      ::kill(child.pid, SIGKILL);
      ::waitpid(child.pid, &status, 0);
      reaped = true;
      outcome.timedOut = true;
    }
    if (reaped) {
      if (!outOpen) break;
      if (!drainUntil) drainUntil = now + kDrain;
      else if (now >= *drainUntil) break;
    }
    pollfd fds[2];
    nfds_t n = 0;
    if (outOpen) fds[n++] = {child.stdoutFd, POLLIN, 0};
    if (errOpen) fds[n++] = {child.stderrFd, POLLIN, 0};
    int ready = ::poll(n ? fds : nullptr, n, 100);
    if (ready <= 0) continue;
    char buffer[1 << 16];
    for (nfds_t i = 0; i < n; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = ::read(fds[i].fd, buffer, sizeof buffer);
      if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      const bool isOut = fds[i].fd == child.stdoutFd;
      if (got <= 0) {
        (isOut ? outOpen : errOpen) = false;
        continue;
      }
      if (isOut) {
        pending.append(buffer, static_cast<std::size_t>(got));
        emitLines();
      } else {
        outcome.stderrTail.append(buffer, static_cast<std::size_t>(got));
        if (outcome.stderrTail.size() > kTail) outcome.stderrTail.erase(0, outcome.stderrTail.size() - kTail);
        if (onStderr) onStderr(std::string_view(buffer, static_cast<std::size_t>(got)));
      }
    }
  }
  if (!pending.empty()) onStdoutLine(pending);
  ::close(child.stdoutFd);
  if (child.stderrFd >= 0) ::close(child.stderrFd);
  if (outcome.timedOut) outcome.signal = SIGKILL;
  else if (WIFEXITED(status)) outcome.exitCode = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
  outcome.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return outcome;
}

void adoptOrphans() { ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); }

int stopAdoptedGroupLeaders() {
  const pid_t self = ::getpid();
  const pid_t ownGroup = ::getpgrp();
  std::vector<pid_t> leaders;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string text;
    std::getline(stat, text);
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so read after the last ')'.
    const auto close = text.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    long ppid = 0, pgrp = 0;
    if (std::sscanf(text.c_str() + close + 1, " %c %ld %ld", &state, &ppid, &pgrp) != 3) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    if (ppid == self && pgrp == pid && pgrp != ownGroup) leaders.push_back(pid);
  }
  for (pid_t pid : leaders) {
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  return static_cast<int>(leaders.size());
}

}  // namespace stitch::server
