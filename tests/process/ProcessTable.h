// What the process tests read about other processes from /proc: every process's state and parent, and
// whether one still runs (a zombie does not: it ended, and only waits for its reaper).
#pragma once

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <sys/types.h>
#include <utility>

namespace stitch::testing {

// pid → (state, ppid) of every process.
inline std::map<pid_t, std::pair<char, pid_t>> processTable() {
  std::map<pid_t, std::pair<char, pid_t>> table;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string text;
    std::getline(stat, text);
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ')'.
    const auto close = text.rfind(')');
    char state = 0;
    long ppid = 0;
    if (close == std::string::npos || std::sscanf(text.c_str() + close + 1, " %c %ld", &state, &ppid) != 2) continue;
    table[static_cast<pid_t>(std::stol(name))] = {state, static_cast<pid_t>(ppid)};
  }
  return table;
}

inline bool running(pid_t pid) {
  const auto table = processTable();
  const auto it = table.find(pid);
  return it != table.end() && it->second.first != 'Z';
}

}  // namespace stitch::testing
