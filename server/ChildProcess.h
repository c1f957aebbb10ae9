// Child processes as the host starts them: arguments and environment prepared before fork (a
// threaded parent's child may only make async-signal-safe calls before exec), pipes for the streams
// the caller reads or writes. The harness worker (WorkerProcess) and `stitchcuda bench`'s task
// runs both start theirs here; `runChild` adds a whole run with a deadline, line by line.
#pragma once

#include "protocol/Result.h"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace stitch::server {

struct ChildSpec {
  std::vector<std::string> argv;       // argv[0] is looked up on PATH
  std::vector<std::string> setEnv;     // "NAME=value"; replaces an inherited NAME
  bool ownProcessGroup = false;        // so that kill(-pid) also stops what it starts
  bool pipeStdin = false;              // otherwise the child shares the parent's stdin
  bool pipeStderr = false;             // otherwise the child shares the parent's stderr
  std::string execFailedMessage;       // written to the child's stderr when exec fails (it exits 127)
};

// The running child and the parent's ends of its pipes (-1 where not piped); all O_CLOEXEC.
struct ChildPipes {
  pid_t pid = -1;
  int stdinFd = -1;
  int stdoutFd = -1;
  int stderrFd = -1;
};

// Starts the child; the error says what failed (pipe or fork). A program that cannot be executed
// is not an error here: the child exits with status 127 after writing `execFailedMessage`.
protocol::Result<ChildPipes, std::string> spawnChild(const ChildSpec& spec);

// How a run through `runChild` ended.
struct ChildOutcome {
  std::string startError;          // set when the child could not be started at all
  bool timedOut = false;           // killed at the deadline
  std::optional<int> exitCode;     // when it exited by itself
  std::optional<int> signal;       // when a signal ended it (also SIGKILL at the deadline)
  std::string stderrTail;          // the last few KB of its stderr (when piped)
  double seconds = 0;

  bool exitedWith(int code) const { return exitCode && *exitCode == code; }
  // "exited with status 1", "killed by signal 11 (Segmentation fault)", "timed out after 30 s (killed)"...
  std::string describe() const;
};

// Runs the child to the end, calling `onStdoutLine` (on this thread) with each line of its stdout
// and `onStderr` (when set) with each chunk of its stderr. At `timeout` the child (its process group
// when it has one) is killed with SIGKILL. The stdout pipe is read to its end; stderr only while
// the child lives (a grandchild may hold it open). Requires spec.pipeStdin == false.
ChildOutcome runChild(const ChildSpec& spec, std::chrono::milliseconds timeout,
                      const std::function<void(std::string_view line)>& onStdoutLine,
                      const std::function<void(std::string_view chunk)>& onStderr = {});

// Makes this process the reaper of its descendants' orphans (Linux's child subreaper), so that a
// child killed at its deadline does not leave its own children running unseen: a killed
// `stitchcuda optimize` leaves its harness worker, which may hold the GPU the next task times on.
void adoptOrphans();
// Kills, with everything in their process groups, the adopted orphans that lead a process group of
// their own (harness workers do; the children this process started itself share its group), and
// reaps them. Returns how many there were.
int stopAdoptedGroupLeaders();

}  // namespace stitch::server
