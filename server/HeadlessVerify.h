// `stitchcuda verify --reference TASK.py --candidate CAND [--json]`: verifies any candidate
// (ours or a KernelBench-style ModelNew written by anyone) through a supervised harness
// worker, and prints the verdict with every failed check named. Exit: 0 passed, 1 failed,
// 2 usage or harness error, 3 the candidate left the GPU in a sticky error state.
#pragma once

#include "server/Config.h"

#include <string>
#include <vector>

namespace stitch::server {

int runHeadlessVerify(const HostConfig& config, const std::vector<std::string>& args);

}  // namespace stitch::server
