// `stitchcuda score`: the rubric reward of a candidate (protocol/SCORE.md) — the rule reward,
// anti-hacking, CUDA engineering, operator coverage and skill compliance, each with its evidence,
// and the combined reward — from a recorded verdict (--verdict) or the verifier run now.
// `--batch FILE.jsonl` scores many rows, one JSON line out per row into --out, resumable (rows
// already scored there are kept and skipped), one worker per GPU (--gpus N).
// Exit: 0 scored (every row, in a batch), 1 some batch row failed, 2 usage or harness error.
#pragma once

#include "server/Config.h"

#include <string>
#include <vector>

namespace stitch::server {

int runScore(const HostConfig& config, const std::vector<std::string>& args);

}  // namespace stitch::server
