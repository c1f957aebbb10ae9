// Pins how the host runs a child: stdout line by line (a last line without a newline too), stderr's
// tail, the environment it is given, stdin from /dev/null, a stop at the deadline or at a cancel that
// takes the child's own children with it (SIGKILL, or SIGTERM first with a grace), a program that cannot be started, the signal mask and
// dispositions it starts with, and its death with the thread that started it.
#include "process/ChildGroups.h"
#include "process/ChildProcess.h"
#include "tests/process/ProcessTable.h"

#include <gtest/gtest.h>

#include <csignal>
#include <sys/wait.h>
#include <thread>

using namespace stitch::process;
using namespace std::chrono_literals;

namespace {

ChildSpec shell(const std::string& script) {
  ChildSpec spec;
  spec.argv = {"sh", "-c", script};
  spec.pipeStderr = true;
  return spec;
}

using stitch::testing::running;

// Waits up to `limit` for a process that is not this one's child to end.
bool goneWithin(pid_t pid, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (running(pid) && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(20ms);
  return !running(pid);
}

}  // namespace

TEST(ChildProcess, StreamsStdoutLinesAndKeepsStderrsTail) {
  std::vector<std::string> lines;
  std::string err;
  ChildOutcome o = runChild(
      shell("echo one; echo two >&2; printf 'two\\nthree'; exit 4"), 20s,
      [&](std::string_view l) { lines.emplace_back(l); }, [&](std::string_view c) { err.append(c); });
  EXPECT_EQ(lines, (std::vector<std::string>{"one", "two", "three"}));
  EXPECT_EQ(err, "two\n");
  EXPECT_EQ(o.stderrTail, "two\n");
  EXPECT_TRUE(o.exitedWith(4));
  EXPECT_FALSE(o.timedOut);
  EXPECT_EQ(o.describe(), "exited with status 4");
}

TEST(ChildProcess, SetEnvReplacesTheInheritedValue) {
  ::setenv("STITCH_CHILD_TEST", "parent", 1);
  ChildSpec spec = shell("echo \"$STITCH_CHILD_TEST\"; env | grep -c '^STITCH_CHILD_TEST='");
  spec.setEnv = {"STITCH_CHILD_TEST=child"};
  std::vector<std::string> lines;
  runChild(spec, 20s, [&](std::string_view l) { lines.emplace_back(l); });
  ::unsetenv("STITCH_CHILD_TEST");
  EXPECT_EQ(lines, (std::vector<std::string>{"child", "1"}));
}

TEST(ChildProcess, StdinIsDevNullUnlessPiped) {
  // `cat` would wait forever on a terminal or a client's pipe; on /dev/null it ends at once.
  std::vector<std::string> lines;
  ChildOutcome o = runChild(shell("cat; echo done"), 10s, [&](std::string_view l) { lines.emplace_back(l); });
  EXPECT_TRUE(o.exitedWith(0)) << o.describe();
  EXPECT_EQ(lines, (std::vector<std::string>{"done"}));
}

TEST(ChildProcess, IsKilledAtTheDeadlineWithItsOwnChildren) {
  std::vector<std::string> lines;
  auto start = std::chrono::steady_clock::now();
  ChildOutcome o = runChild(shell("sleep 30 & echo $!; echo started; wait"), 500ms,
                            [&](std::string_view l) { lines.emplace_back(l); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  EXPECT_TRUE(o.timedOut);
  EXPECT_EQ(o.signal, SIGKILL);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1], "started");
  EXPECT_TRUE(goneWithin(std::stoi(lines[0]), 5s)) << "the child's own child outlived it";
  EXPECT_NE(o.describe().find("timed out after"), std::string::npos);
  EXPECT_EQ(childGroupCount(), 0);
}

TEST(ChildProcess, ACancelCheckStopsTheRun) {
  const auto start = std::chrono::steady_clock::now();
  ChildOutcome o = runChild(
      shell("exec sleep 30"), 60s, [](std::string_view) {}, {},
      [&] { return std::chrono::steady_clock::now() - start > 300ms; });
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  EXPECT_TRUE(o.cancelled);
  EXPECT_FALSE(o.timedOut);
  EXPECT_EQ(o.describe(), "was cancelled and stopped");
}

TEST(ChildProcess, AStopGraceLetsTheChildEndOnSigterm) {
  ChildSpec spec = shell("trap 'echo stopping; exit 3' TERM; echo started; while :; do sleep 0.1; done");
  spec.stopGrace = 5s;
  std::vector<std::string> lines;
  const auto start = std::chrono::steady_clock::now();
  ChildOutcome o = runChild(spec, 500ms, [&](std::string_view l) { lines.emplace_back(l); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, 4s) << "it was not given SIGTERM first";
  EXPECT_TRUE(o.timedOut);
  EXPECT_TRUE(o.exitedWith(3)) << o.describe();
  EXPECT_EQ(lines, (std::vector<std::string>{"started", "stopping"}));
}

TEST(ChildProcess, AStopGraceEndsInSigkillForAChildThatIgnoresSigterm) {
  ChildSpec spec = shell("trap '' TERM; while :; do sleep 0.1; done");
  spec.stopGrace = 500ms;
  ChildOutcome o = runChild(spec, 300ms, [](std::string_view) {});
  EXPECT_TRUE(o.timedOut);
  EXPECT_EQ(o.signal, SIGKILL);
}

TEST(ChildProcess, AProgramThatCannotStartIsAStartError) {
  ChildSpec spec;
  spec.argv = {"/nonexistent/stitch-no-such-program"};
  ChildOutcome o = runChild(spec, 20s, [](std::string_view) {});
  EXPECT_EQ(o.startError, "cannot run /nonexistent/stitch-no-such-program: No such file or directory");
  EXPECT_FALSE(o.exitCode);
  EXPECT_EQ(childGroupCount(), 0) << "nothing is left listed";
  auto spawned = spawnChild(spec);
  ASSERT_FALSE(spawned);
  EXPECT_NE(spawned.error().find("No such file or directory"), std::string::npos);
}

TEST(ChildProcess, LeadsItsOwnGroupAndIsListedUntilReaped) {
  auto spawned = spawnChild(shell("exec sleep 30"));
  ASSERT_TRUE(spawned) << spawned.error();
  const pid_t pid = spawned.value().pid;
  EXPECT_EQ(::getpgid(pid), pid);
  EXPECT_EQ(childGroupCount(), 1);
  killChild(pid);
  EXPECT_EQ(childGroupCount(), 0);
  EXPECT_FALSE(running(pid));
  ::close(spawned.value().stdoutFd);
  ::close(spawned.value().stderrFd);
}

TEST(ChildProcess, StartsWithTheSignalsTheHostBlocksOrIgnores) {
  // The host blocks SIGTERM in every thread and ignores SIGPIPE; its children must not inherit either.
  sigset_t term, old;
  ::sigemptyset(&term);
  ::sigaddset(&term, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &term, &old);
  auto previous = std::signal(SIGPIPE, SIG_IGN);
  std::vector<std::string> lines;
  // SigBlk and SigIgn are hexadecimal masks: bit 14 is SIGTERM (15), bit 12 is SIGPIPE (13).
  runChild(shell("grep -E '^Sig(Blk|Ign)' /proc/self/status"), 10s, [&](std::string_view l) { lines.emplace_back(l); });
  std::signal(SIGPIPE, previous);
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ASSERT_EQ(lines.size(), 2u);
  for (const auto& line : lines) {
    const unsigned long long mask = std::stoull(line.substr(line.find(':') + 1), nullptr, 16);
    EXPECT_EQ(mask & ((1ull << 14) | (1ull << 12)), 0u) << line;
  }
}

TEST(ChildProcess, DiesWithTheThreadThatStartedIt) {
  // PR_SET_PDEATHSIG: a host killed outright leaves no child behind. The thread is the parent the
  // kernel watches, so a thread that ends is enough to show it.
  pid_t pid = -1;
  int out = -1, err = -1;
  std::thread([&] {
    auto spawned = spawnChild(shell("exec sleep 30"));
    if (!spawned) return;
    pid = spawned.value().pid;
    out = spawned.value().stdoutFd;
    err = spawned.value().stderrFd;
  }).join();
  ASSERT_GT(pid, 0);
  const auto status = reapChild(pid, true);
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL);
  ::close(out);
  ::close(err);
}
