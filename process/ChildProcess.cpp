// Starting, running, stopping and reaping child processes; see ChildProcess.h.
#include "process/ChildProcess.h"

#include "process/ChildGroups.h"
#include "protocol/NumberText.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace stitch::process {
namespace {

using Clock = std::chrono::steady_clock;

std::string nameOf(const std::string& assignment) { return assignment.substr(0, assignment.find('=')); }

void closeFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

void closeBoth(int fds[2]) {
  closeFd(fds[0]);
  closeFd(fds[1]);
}

// The child's side, between fork and exec: async-signal-safe calls only. Returns only on failure,
// with the errno to report.
int execChild(char** argv, char** envp, pid_t parent, int in, int out, int err) {
  ::setpgid(0, 0);
  // Dies with the host even when the host is killed outright; if the host died before this line,
  // the check after it sees the reparenting.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) return ESRCH;
  // The host blocks its termination signals in every thread (a watcher thread takes them) and
  // ignores SIGPIPE; a mask and an ignored disposition survive exec, so the program gets defaults.
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(SIGPIPE, &dfl, nullptr);
  if (::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || (err >= 0 && ::dup2(err, 2) < 0)) return errno;
  ::execvpe(argv[0], argv, envp);
  return errno;
}

}  // namespace

protocol::Result<ChildPipes, std::string> spawnChild(const ChildSpec& spec) {
  if (spec.argv.empty()) return std::string("no program to start");
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1}, report[2] = {-1, -1};
  auto fail = [&](const std::string& what) {
    std::string message = what + ": " + std::strerror(errno);
    closeBoth(in);
    closeBoth(out);
    closeBoth(err);
    closeBoth(report);
    return message;
  };
  if (spec.pipeStdin) {
    if (::pipe2(in, O_CLOEXEC) != 0) return fail("pipe");
  } else if ((in[0] = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
    return fail("/dev/null");
  }
  // `report` carries the exec's errno back; close-on-exec closes it when the program starts.
  if (::pipe2(out, O_CLOEXEC) != 0 || (spec.pipeStderr && ::pipe2(err, O_CLOEXEC) != 0) ||
      ::pipe2(report, O_CLOEXEC) != 0)
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
  const pid_t parent = ::getpid();

  pid_t pid;
  {
    std::lock_guard lock(childTableMutex());
    pid = ::fork();
    if (pid < 0) return fail("fork");
    if (pid == 0) {
      int error = execChild(argv.data(), envp.data(), parent, in[0], out[1], err[1]);
      [[maybe_unused]] auto ignored = ::write(report[1], &error, sizeof error);
      ::_exit(127);
    }
    addChildGroup(pid);
    ::setpgid(pid, pid);  // also from the parent, so kill(-pid) works whoever runs first
  }
  closeFd(in[0]);
  closeFd(out[1]);
  closeFd(err[1]);
  closeFd(report[1]);
  int execErrno = 0;
  ssize_t got;
  do got = ::read(report[0], &execErrno, sizeof execErrno);
  while (got < 0 && errno == EINTR);
  closeFd(report[0]);
  if (got == sizeof execErrno) {
    reapChild(pid, true);
    closeFd(in[1]);
    closeFd(out[0]);
    closeFd(err[0]);
    return "cannot run " + spec.argv[0] + ": " + std::strerror(execErrno);
  }
  return ChildPipes{pid, in[1], out[0], err[0]};
}

std::optional<int> reapChild(pid_t pid, bool block) {
  int status = 0;
  pid_t r;
  do r = ::waitpid(pid, &status, block ? 0 : WNOHANG);
  while (r < 0 && errno == EINTR);
  if (r == pid) {
    removeChildGroup(pid);
    return status;
  }
  if (r < 0) removeChildGroup(pid);  // not our child any more: nothing left to wait for
  return std::nullopt;
}

void killChild(pid_t pid) {
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
  reapChild(pid, true);
}

std::string ChildOutcome::describe() const {
  if (!startError.empty()) return "could not be started: " + startError;
  if (timedOut) return "timed out after " + protocol::fixed(seconds, 0) + " s and was stopped";
  if (cancelled) return "was cancelled and stopped";
  if (signal) return "was killed by signal " + std::to_string(*signal) + " (" + ::strsignal(*signal) + ")";
  if (exitCode) return "exited with status " + std::to_string(*exitCode);
  return "ended";
}

ChildOutcome runChild(const ChildSpec& spec, std::chrono::milliseconds timeout,
                      const std::function<void(std::string_view line)>& onStdoutLine,
                      const std::function<void(std::string_view chunk)>& onStderr,
                      const std::function<bool()>& cancelled) {
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
  closeFd(child.stdinFd);
  for (int fd : {child.stdoutFd, child.stderrFd})
    if (fd >= 0) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);

  std::string pending;
  bool outOpen = true, errOpen = child.stderrFd >= 0;
  std::optional<int> status;
  std::optional<Clock::time_point> killAt, drainUntil;
  auto emitLines = [&] {
    std::size_t eol;
    while ((eol = pending.find('\n')) != std::string::npos) {
      onStdoutLine(std::string_view(pending).substr(0, eol));
      pending.erase(0, eol + 1);
    }
  };
  while (true) {
    if (!status) status = reapChild(child.pid, false);
    auto now = Clock::now();
    if (!status && !killAt && (now - start >= timeout || (cancelled && cancelled()))) {
      (now - start >= timeout ? outcome.timedOut : outcome.cancelled) = true;
      killAt = now + spec.stopGrace;
      if (spec.stopGrace.count() > 0) ::kill(-child.pid, SIGTERM);
    }
    if (!status && killAt && now >= *killAt) {
      ::kill(-child.pid, SIGKILL);
      status = reapChild(child.pid, true);
      if (!status) status = SIGKILL;  // reaped elsewhere: the wait status of the kill itself
    }
    if (status) {
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
  closeFd(child.stdoutFd);
  closeFd(child.stderrFd);
  if (WIFEXITED(*status)) outcome.exitCode = WEXITSTATUS(*status);
  else if (WIFSIGNALED(*status)) outcome.signal = WTERMSIG(*status);
  outcome.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return outcome;
}

}  // namespace stitch::process
