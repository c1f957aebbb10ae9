// The process groups of this process's live children, in a fixed table of atomics: the host's ways
// of ending (a termination signal, std::terminate, atexit, a stuck shutdown) must stop every worker,
// nvcc and ncu it started, and some of those run where no lock may be taken.
#pragma once

#include <chrono>
#include <mutex>
#include <sys/types.h>

namespace stitch::process {

// Listed by spawnChild, taken off by reapChild; a child leads a group of its own (pgid == pid).
void addChildGroup(pid_t pgid);
void removeChildGroup(pid_t pgid);
// Held by spawnChild from fork until the child is listed, and by stopAdoptedGroupLeaders while it
// decides: a child that was just started must not be taken for an adopted orphan.
std::mutex& childTableMutex();
// How many groups are listed now.
int childGroupCount();

// Sends `signal` to every listed group; returns how many. Async-signal-safe.
int signalChildGroups(int signal);
// SIGTERM to every listed group, up to `grace` for their leaders to exit, then SIGKILL to every group
// that is still listed (stragglers that ignored SIGTERM, a leader's children). Returns how many groups
// there were. Reaps nothing: the owners reap their children.
int stopChildGroups(std::chrono::milliseconds grace);

// Makes this process the reaper of its descendants' orphans (Linux's child subreaper), so that a
// child killed at its deadline does not leave its own children running unseen: a killed
// `stitchcuda optimize` leaves its harness worker, which may hold the GPU the next task times on.
void adoptOrphans();
// Kills, with everything in their process groups, the adopted orphans that lead a process group of
// their own (every child of a host does), and reaps them. Returns how many there were.
int stopAdoptedGroupLeaders();

}  // namespace stitch::process
