// `stitchcuda score`: the rubric reward of a candidate (protocol/SCORE.md) — the rule reward,
// anti-hacking, CUDA engineering, operator coverage and skill compliance, each with its evidence,
// and the combined reward — from a recorded verdict (--verdict) or the verifier run now.
// `--batch FILE.jsonl` scores many rows, one JSON line out per row into --out, resumable (rows
// already scored there are kept and skipped), one worker per GPU (--gpus N).
// Exit: 0 scored (every row, in a batch), 1 some batch row failed, 2 usage or harness error.
#pragma once

#include "server/CommandLine.h"
#include "server/Config.h"
#include "server/ScoreJudge.h"
#include "server/SlurmArray.h"

#include <optional>
#include <string>
#include <vector>

namespace stitch::server {

// What `score` was asked, as its command line said it.
struct ScoreArgs {
  protocol::json request = protocol::json::object();  // as a batch row or the protocol's params
  bool asJson = false;
  std::string batch;
  std::string jobs;   // --jobs: the rows are every candidate with a kept verdict in these jobs
  std::string table;  // --table FILE.md: the batch's table (ScoreTable.h), written at its end
  std::string out;
  int gpus = 1;
  SlurmOptions slurm;                 // --slurm: the rows as one job array (SlurmArray.h)
  std::optional<JudgeOptions> judge;  // --judge: an LLM's rubric beside the deterministic one
  // As given, before they are folded into `request` and `judge`:
  std::vector<std::string> allowPrecision;
  std::optional<std::string> precision;
  std::vector<std::string> weights;  // NAME=W
  std::optional<std::string> judgeProvider, judgeModel, judgeBaseUrl;
};

// Adds the `score` command and its own options to `app`, filling `args` as it parses.
CLI::App* addScoreCommand(CLI::App& app, ScoreArgs& args);
int runScore(const HostConfig& config, const ScoreArgs& args);

}  // namespace stitch::server
