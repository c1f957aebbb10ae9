// fork/exec with files for output and a polled deadline (see Subprocess.h).
#include "profiling/Subprocess.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace stitch::profiling {
namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

ProfileResult<ProcessOutcome> runProcess(const ProcessSpec& spec) {
  if (spec.argv.empty()) return ProfileError{"spawn_failed", "no program to run"};
  char tmpl[] = "/tmp/stitch-profile-XXXXXX";
  if (!::mkdtemp(tmpl)) return ProfileError{"spawn_failed", std::string("cannot make a temporary folder: ") + std::strerror(errno)};
  const std::filesystem::path dir = tmpl, outPath = dir / "stdout", errPath = dir / "stderr";

  // Everything the child needs is built before fork.
  std::vector<std::string> envStrings;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    if (!spec.env.count(kv.substr(0, kv.find('=')))) envStrings.push_back(std::move(kv));
  }
  for (const auto& [k, v] : spec.env) envStrings.push_back(k + "=" + v);
  std::vector<char*> envp, argv;
  for (auto& s : envStrings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = spec.argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  int report[2];  // the child writes errno here if exec fails; close-on-exec closes it on success
  if (::pipe2(report, O_CLOEXEC) != 0) return ProfileError{"spawn_failed", std::strerror(errno)};

  pid_t pid = ::fork();
  if (pid < 0) {
    int e = errno;
    ::close(report[0]);
    ::close(report[1]);
    std::filesystem::remove_all(dir);
    return ProfileError{"spawn_failed", std::string("fork: ") + std::strerror(e)};
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    int out = ::open(outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int err = ::open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int in = ::open("/dev/null", O_RDONLY);
    if (out < 0 || err < 0 || in < 0 || ::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) ::_exit(127);
    if (!spec.workDir.empty() && ::chdir(spec.workDir.c_str()) != 0) {
      int e = errno;
      (void)!::write(report[1], &e, sizeof e);
      ::_exit(127);
    }
    ::execvpe(argv[0], argv.data(), envp.data());
    int e = errno;
    (void)!::write(report[1], &e, sizeof e);
    ::_exit(127);
  }
  ::close(report[1]);
  int execErrno = 0;
  bool execFailed = ::read(report[0], &execErrno, sizeof execErrno) == sizeof execErrno;
  ::close(report[0]);

  ProcessOutcome o;
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + spec.timeout;
  while (true) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      o.timedOut = true;
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  o.out = slurp(outPath);
  o.err = slurp(errPath);
  std::filesystem::remove_all(dir);
  if (execFailed)
    return ProfileError{"spawn_failed", "cannot run " + spec.argv[0] + ": " + std::strerror(execErrno)};
  if (WIFEXITED(status)) o.exitCode = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
  return o;
}

}  // namespace stitch::profiling
