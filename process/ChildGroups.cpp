// The table of live child process groups and the ways to stop them; see ChildGroups.h.
#include "process/ChildGroups.h"

#include <array>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace stitch::process {
namespace {

// A host has a worker per job and one nvcc, ncu or probe at a time beside each: far below this.
// A child that finds no free slot still dies with the host through PR_SET_PDEATHSIG.
std::array<std::atomic<pid_t>, 256> groups{};

bool listed(pid_t pid) {
  for (const auto& slot : groups)
    if (slot.load() == pid) return true;
  return false;
}

// Whether the group's leader has exited (a zombie counts), without reaping it: its owner does.
bool leaderExited(pid_t pid) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) return true;  // reaped already
  return info.si_pid == pid;
}

}  // namespace

std::mutex& childTableMutex() {
  static std::mutex m;
  return m;
}

void addChildGroup(pid_t pgid) {
  for (auto& slot : groups) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, pgid)) return;
  }
}

void removeChildGroup(pid_t pgid) {
  for (auto& slot : groups) {
    pid_t expected = pgid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

int childGroupCount() {
  int n = 0;
  for (const auto& slot : groups)
    if (slot.load() > 0) ++n;
  return n;
}

int signalChildGroups(int signal) {
  int n = 0;
  for (const auto& slot : groups)
    if (pid_t pgid = slot.load(); pgid > 0) {
      ::kill(-pgid, signal);
      ++n;
    }
  return n;
}

int stopChildGroups(std::chrono::milliseconds grace) {
  const int n = signalChildGroups(SIGTERM);
  if (n == 0) return 0;
  const auto until = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < until) {
    bool allExited = true;
    for (const auto& slot : groups)
      if (pid_t pgid = slot.load(); pgid > 0 && !leaderExited(pgid)) allExited = false;
    if (allExited) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  signalChildGroups(SIGKILL);
  return n;
}

void adoptOrphans() { ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); }

int stopAdoptedGroupLeaders() {
  const pid_t self = ::getpid();
  std::vector<pid_t> leaders;
  std::lock_guard lock(childTableMutex());
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
    // This process's own children lead groups too; only those it did not start were adopted.
    if (ppid == self && pgrp == pid && !listed(pid)) leaders.push_back(pid);
  }
  for (pid_t pid : leaders) {
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  return static_cast<int>(leaders.size());
}

}  // namespace stitch::process
