// Pins the table of live child groups and the stops the host's endings use: SIGTERM first, SIGKILL
// for what ignores it; and the orphans a killed child leaves (adopted, then stopped with their groups).
#include "process/ChildGroups.h"
#include "process/ChildProcess.h"

#include <gtest/gtest.h>

#include <csignal>
#include <sys/wait.h>
#include <thread>

using namespace stitch::process;
using namespace std::chrono_literals;

namespace {

// A child that has said it is ready (its first line) before the test signals it.
ChildPipes started(const std::string& script) {
  ChildSpec spec;
  spec.argv = {"sh", "-c", script};
  auto spawned = spawnChild(spec);
  if (!spawned) throw std::runtime_error(spawned.error());
  char c;
  while (::read(spawned.value().stdoutFd, &c, 1) == 1 && c != '\n') {}
  return spawned.value();
}

}  // namespace

TEST(ChildGroups, StopAsksFirstThenKillsWhatIgnoresIt) {
  ChildPipes polite = started("echo ready; exec sleep 30");
  ChildPipes stubborn = started("trap '' TERM; echo ready; while :; do sleep 0.1; done");
  EXPECT_EQ(childGroupCount(), 2);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(stopChildGroups(1s), 2);
  const auto politeStatus = reapChild(polite.pid, true);
  const auto stubbornStatus = reapChild(stubborn.pid, true);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
  ASSERT_TRUE(politeStatus && stubbornStatus);
  EXPECT_TRUE(WIFSIGNALED(*politeStatus) && WTERMSIG(*politeStatus) == SIGTERM);
  EXPECT_TRUE(WIFSIGNALED(*stubbornStatus) && WTERMSIG(*stubbornStatus) == SIGKILL);
  EXPECT_EQ(childGroupCount(), 0);
  for (int fd : {polite.stdoutFd, stubborn.stdoutFd}) ::close(fd);
}

TEST(ChildGroups, OrphansThatLeadTheirOwnGroupAreAdoptedAndStopped) {
  adoptOrphans();
  // The child starts a process in a session of its own (as a host starts its workers in groups of
  // their own) and exits, leaving it behind.
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
  // A child this process started itself also leads its group; it is not an orphan.
  ChildPipes own = started("echo ready; exec sleep 30");
  EXPECT_EQ(stopAdoptedGroupLeaders(), 1);
  EXPECT_NE(::kill(orphan, 0), 0) << "the orphan should be gone, and reaped";
  EXPECT_EQ(::kill(own.pid, 0), 0) << "this process's own child should be left alone";
  EXPECT_EQ(stopAdoptedGroupLeaders(), 0);
  killChild(own.pid);
  ::close(own.stdoutFd);
}
