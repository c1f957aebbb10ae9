// Running a profiler (ncu, nsys) as a child process with a deadline: output captured to files
// (no pipe can fill and stall it), its own process group killed on timeout, and a program that
// cannot be started reported as such rather than as an exit code.
#pragma once

#include "profiling/ProfileResult.h"

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace stitch::profiling {

struct ProcessSpec {
  std::vector<std::string> argv;             // argv[0] is looked up on PATH when it has no '/'
  std::map<std::string, std::string> env;    // added to (or replacing in) the current environment
  std::filesystem::path workDir;             // cwd; empty: the current one
  std::chrono::milliseconds timeout{600000};
};

struct ProcessOutcome {
  int exitCode = -1;      // -1 when killed by a signal
  int signal = 0;
  bool timedOut = false;
  std::string out;
  std::string err;
};

// Errors: spawn_failed (the program does not exist or cannot be executed; message says which).
ProfileResult<ProcessOutcome> runProcess(const ProcessSpec& spec);

}  // namespace stitch::profiling
