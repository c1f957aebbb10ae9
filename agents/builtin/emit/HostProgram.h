// The candidate's host entry points (design §6, §8). A candidate is one or more compiled
// segments: the whole forward, or, in a partial candidate, the runs of planned steps between the
// operators left in PyTorch. `stitch_segment(s, ...)` checks segment s's tensors against the
// captured layout, then runs its launchers in order on the caller's stream — or, for a segment of
// several steps or a library call, replays them as one CUDA graph. A single-segment candidate
// also exports `stitch_forward`.
#pragma once

#include <string>
#include <vector>

namespace stitch::agents::builtin {

struct SegmentEntry {
  std::vector<std::string> launchers;
  std::size_t slots = 0;
  // C++ that validates `t[0..n)` (returns cudaErrorInvalidValue on a mismatch) and, where the
  // rows are the call's, sets `rows` from them.
  std::string checks;
  bool replay = false;  // capture the launchers into a CUDA graph per set of data pointers and replay it
};

std::string emitHostEntry(const std::vector<SegmentEntry>& segments);

}  // namespace stitch::agents::builtin
