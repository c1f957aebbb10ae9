// Every way the host ends stops the children it started (harness workers, nvcc under them, ncu):
// SIGTERM, SIGINT and SIGHUP are taken by one watcher thread that first asks the running command to
// stop cooperatively (an optimize job is cancelled, so its report keeps the best verified candidate and
// its log closes as cancelled), and stops every child group and exits if the process is still there a
// grace period later or at a second signal; std::terminate and exit stop the child groups too. A
// host killed outright takes its children with it through PR_SET_PDEATHSIG (process/ChildProcess.h).
#pragma once

#include <chrono>
#include <functional>

namespace stitch::server {

// First thing in main, before any thread starts: the termination signals are blocked in every thread
// (threads inherit the mask; children get it cleared), so only the watcher takes them.
void installHostShutdown();

// Starts the watcher thread. At the first signal it runs the StopOnSignal in place, if any, and waits
// `grace` (or for a second signal); then, or at once when nothing was in place, it stops every child
// group (SIGTERM, then SIGKILL) and exits with 128 + the signal.
void watchTerminationSignals(std::chrono::seconds grace);

// What the first termination signal asks of the command that runs now (cancel its jobs), for as long
// as this object lives: its destructor takes it away, waiting for a call in progress, so the call never
// reaches objects that are gone.
class StopOnSignal {
public:
  explicit StopOnSignal(std::function<void(int signal)> stop);
  ~StopOnSignal();
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;
};

// The signal that asked this process to end, or 0.
int terminationSignal();

}  // namespace stitch::server
