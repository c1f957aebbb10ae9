// Pins how the bench runs a task's process: stdout line by line (a last line without a newline
// too), stderr's tail, the environment it is given, a kill at the deadline, a program that cannot be
// started, and the orphans a killed child leaves (adopted, then stopped with their groups).
#include "server/ChildProcess.h"

#include <gtest/gtest.h>

#include <csignal>
#include <thread>

using namespace stitch::server;
using namespace std::chrono_literals;

namespace {

ChildSpec shell(const std::string& script) {
  ChildSpec spec;
  spec.argv = {"sh", "-c", script};
  spec.pipeStderr = true;
  return spec;
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

TEST(ChildProcess, IsKilledAtTheDeadline) {
  std::vector<std::string> lines;
  auto start = std::chrono::steady_clock::now();
  ChildOutcome o = runChild(shell("echo started; exec sleep 30"), 500ms,
                            [&](std::string_view l) { lines.emplace_back(l); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  EXPECT_TRUE(o.timedOut);
  EXPECT_EQ(o.signal, SIGKILL);
  EXPECT_EQ(lines, (std::vector<std::string>{"started"}));
  EXPECT_NE(o.describe().find("timed out after"), std::string::npos);
}

TEST(ChildProcess, AProgramThatCannotStartExits127WithTheMessage) {
  ChildSpec spec;
  spec.argv = {"/nonexistent/stitch-no-such-program"};
  spec.pipeStderr = true;
  spec.execFailedMessage = "cannot execute it\n";
  ChildOutcome o = runChild(spec, 20s, [](std::string_view) {});
  EXPECT_TRUE(o.exitedWith(127));
  EXPECT_EQ(o.stderrTail, "cannot execute it\n");
}

TEST(ChildProcess, OrphansThatLeadTheirOwnGroupAreAdoptedAndStopped) {
  adoptOrphans();
  // The child starts a process in a session of its own (as the host starts harness workers in a group
  // of their own) and exits, leaving it behind.
  std::vector<std::string> lines;
  ChildSpec spec;
  spec.argv = {"python3", "-c",
               "import subprocess; p = subprocess.Popen(['sleep', '60'], start_new_session=True, "
               "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(p.pid)"};
  ChildOutcome o = runChild(spec, 20s, [&](std::string_view l) { lines.emplace_back(l); });
  ASSERT_TRUE(o.exitedWith(0)) << o.describe();
  ASSERT_EQ(lines.size(), 1u);
  const pid_t orphan = std::stoi(lines[0]);
  for (int i = 0; i < 50 && ::getpgid(orphan) != orphan; ++i) std::this_thread::sleep_for(20ms);
  ASSERT_EQ(::kill(orphan, 0), 0) << "the orphan should still run";
  EXPECT_EQ(stopAdoptedGroupLeaders(), 1);
  EXPECT_NE(::kill(orphan, 0), 0) << "the orphan should be gone, and reaped";
  EXPECT_EQ(stopAdoptedGroupLeaders(), 0);
}
