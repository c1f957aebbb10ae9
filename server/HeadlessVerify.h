// `stitchcuda verify --reference TASK.py --candidate CAND [--json]`: verifies any candidate
// (ours or a KernelBench-style ModelNew written by anyone) through a supervised harness
// worker, and prints the verdict with every failed check named. `--kernelbench` prints instead
// the count of KernelBench's own protocol (seeded construction, no state copy, 5 trials, allclose
// at 1e-4 and 1e-2). Exit: 0 passed, 1 failed, 2 usage or harness error or the verifier's own
// failure (verdict status verifier_error), 3 the candidate left the GPU in a sticky error state,
// 4 the candidate needs a GPU and none is visible.
#pragma once

#include "server/Config.h"

#include <string>
#include <vector>

namespace stitch::server {

int runHeadlessVerify(const HostConfig& config, const std::vector<std::string>& args);

}  // namespace stitch::server
