// The candidate's one host entry point (design §6, §8): `stitch_forward` checks every tensor
// against the captured layout, then runs the launchers in order on the caller's stream — or,
// for a program of several steps, replays them as one CUDA graph.
#pragma once

#include <string>
#include <vector>

namespace stitch::agents::builtin {

// `checks`: the C++ that validates `t[0..n)` (returns cudaErrorInvalidValue on a mismatch).
// `replay`: capture the launchers into a CUDA graph per set of data pointers and replay it.
std::string emitHostEntry(const std::vector<std::string>& launchers, std::size_t slots, const std::string& checks,
                          bool replay);

}  // namespace stitch::agents::builtin
