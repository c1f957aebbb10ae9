// `stitchcuda verify --reference TASK.py --candidate CAND [--json]`: verifies any candidate
// (ours or a KernelBench-style ModelNew written by anyone) through a supervised harness
// worker, and prints the verdict with every failed check named. `--kernelbench` prints instead
// the count of KernelBench's own protocol (seeded construction, no state copy, 5 trials, allclose
// at 1e-4 and 1e-2). Exit: 0 passed, 1 failed, 2 usage or harness error or the verifier's own
// failure (verdict status verifier_error), 3 the candidate left the GPU in a sticky error state,
// 4 the candidate needs a GPU and none is visible. `--batch ROWS.jsonl --out VERDICTS.jsonl` verifies
// many (VerifyBatch.h), on local GPUs (--gpus N) or as a Slurm job array (--slurm).
#pragma once

#include "server/CommandLine.h"
#include "server/Config.h"
#include "server/SlurmArray.h"
#include "server/VerifyRequest.h"

#include <optional>
#include <string>
#include <vector>

namespace stitch::server {

// What `verify` was asked, as its command line said it; unset values are the harness's defaults.
struct VerifyArgs {
  std::string reference;
  std::string candidate;
  bool json = false;
  bool kernelbench = false;  // KernelBench's protocol count instead of the verdict
  std::optional<double> atol, rtol;
  std::optional<int> trials;
  std::optional<int> seed;
  std::vector<std::string> allowPrecision;
  std::optional<std::string> precision;
  bool noTiming = false;
  // Many candidates: the rows, where their verdicts go, and how they are spread.
  std::string batch, out;
  int gpus = 1;
  SlurmOptions slurm;
};

// Adds the `verify` command and its own options to `app`, filling `args` as it parses.
CLI::App* addVerifyCommand(CLI::App& app, VerifyArgs& args);
int runHeadlessVerify(const HostConfig& config, const VerifyArgs& args);
// The options the command line gave, as the harness call's parameters (a batch row's defaults).
VerifyCall verifyCallOf(const VerifyArgs& args);

}  // namespace stitch::server
