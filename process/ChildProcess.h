// Child processes as the host starts them: arguments and environment prepared before fork (a
// threaded parent's child may only make async-signal-safe calls before exec), pipes for the streams
// the caller reads or writes, a process group of the child's own, PR_SET_PDEATHSIG so the kernel
// kills it when the starting thread dies, and a listing in ChildGroups until it is reaped.
// `runChild` adds a whole run with a deadline and a cancel check, line by line.
#pragma once

#include "protocol/Result.h"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace stitch::process {

struct ChildSpec {
  std::vector<std::string> argv;       // argv[0] is looked up on PATH
  std::vector<std::string> setEnv;     // "NAME=value"; replaces an inherited NAME
  bool pipeStdin = false;              // otherwise stdin is /dev/null (never the host's: it may be the LSP stream)
  bool pipeStderr = false;             // otherwise the child shares the parent's stderr
  // runChild's stop at the deadline or a cancel: SIGTERM to the group first and this long to exit (a
  // `stitchcuda optimize` then writes its report and stops its worker), then SIGKILL; 0: SIGKILL at once.
  std::chrono::milliseconds stopGrace{0};
};

// The running child and the parent's ends of its pipes (-1 where not piped); all O_CLOEXEC.
struct ChildPipes {
  pid_t pid = -1;
  int stdinFd = -1;
  int stdoutFd = -1;
  int stderrFd = -1;
};

// Starts the child and returns once it runs its program. The error says what failed: pipe, fork, or
// "cannot run PROGRAM: reason" when the program cannot be executed (nothing is left running then).
// The child dies with the thread that calls this (PR_SET_PDEATHSIG): call it from a thread that
// outlives the child.
protocol::Result<ChildPipes, std::string> spawnChild(const ChildSpec& spec);

// Waits for the child (or only checks, with `block` false) and, once it is reaped, takes its group off
// the table. Returns its wait status when reaped now.
std::optional<int> reapChild(pid_t pid, bool block);
// Kills the child's whole process group (SIGKILL) and reaps the child.
void killChild(pid_t pid);

// How a run through `runChild` ended.
struct ChildOutcome {
  std::string startError;          // set when the child could not be started at all
  bool timedOut = false;           // stopped at the deadline
  bool cancelled = false;          // stopped because the caller's cancel check said so
  std::optional<int> exitCode;     // when it exited (also after a stop's SIGTERM)
  std::optional<int> signal;       // when a signal ended it
  std::string stderrTail;          // the last few KB of its stderr (when piped)
  double seconds = 0;

  bool exitedWith(int code) const { return exitCode && *exitCode == code; }
  // "exited with status 1", "was killed by signal 11 (Segmentation fault)", "timed out after 30 s and was stopped"...
  std::string describe() const;
};

// Runs the child to the end, calling `onStdoutLine` (on this thread) with each line of its stdout
// and `onStderr` (when set) with each chunk of its stderr. At `timeout`, or when `cancelled` (checked
// every 100 ms) returns true, the child's process group is stopped (spec.stopGrace). The stdout pipe is
// read to its end; stderr only while the child lives (a grandchild may hold it open). Requires
// spec.pipeStdin == false.
ChildOutcome runChild(const ChildSpec& spec, std::chrono::milliseconds timeout,
                      const std::function<void(std::string_view line)>& onStdoutLine,
                      const std::function<void(std::string_view chunk)>& onStderr = {},
                      const std::function<bool()>& cancelled = {});

}  // namespace stitch::process
