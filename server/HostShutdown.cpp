// The termination-signal watcher and the last-resort stops; see HostShutdown.h.
#include "server/HostShutdown.h"

#include "process/ChildGroups.h"
#include "server/Logger.h"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <pthread.h>
#include <thread>

namespace stitch::server {
namespace {

std::atomic<int> received{0};
std::mutex stopMutex;
std::function<void(int)> currentStop;  // guarded by stopMutex

// Children get SIGTERM first: an optimize run under `bench` writes its report then.
constexpr std::chrono::seconds kChildGrace{3};

sigset_t terminationSignals() {
  sigset_t set;
  ::sigemptyset(&set);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) ::sigaddset(&set, s);
  return set;
}

}  // namespace

void installHostShutdown() {
  const sigset_t set = terminationSignals();
  ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
  // An exception nobody caught, or an exit that left a child listed (a job stuck past the drain):
  // the children go first. Both only read the table's atomics.
  std::set_terminate([] {
    process::signalChildGroups(SIGKILL);
    std::abort();
  });
  std::atexit([] { process::signalChildGroups(SIGKILL); });
}

void watchTerminationSignals(std::chrono::seconds grace) {
  std::thread([grace] {
    const sigset_t set = terminationSignals();
    int signal = 0;
    if (::sigwait(&set, &signal) != 0) return;
    received = signal;
    logInfo(std::string("received SIG") + ::sigabbrev_np(signal) + "; stopping");
    bool asked = false;
    {
      std::lock_guard lock(stopMutex);
      if (currentStop) {
        currentStop(signal);
        asked = true;
      }
    }
    if (asked) {
      const timespec wait{static_cast<time_t>(grace.count()), 0};
      siginfo_t info;
      const bool again = ::sigtimedwait(&set, &info, &wait) > 0;
      logWarning(again ? "a second signal: stopping the children and exiting now"
                       : "still running " + std::to_string(grace.count()) +
                             " s after the signal; stopping the children and exiting");
    }
    process::stopChildGroups(kChildGrace);
    std::_Exit(128 + signal);
  }).detach();
}

StopOnSignal::StopOnSignal(std::function<void(int signal)> stop) {
  std::lock_guard lock(stopMutex);
  currentStop = std::move(stop);
}

StopOnSignal::~StopOnSignal() {
  std::lock_guard lock(stopMutex);
  currentStop = nullptr;
}

int terminationSignal() { return received.load(); }

}  // namespace stitch::server
