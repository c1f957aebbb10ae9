// `stitchcuda score --judge openai|anthropic`: the LLM rubric judgment (agents/llm/RubricJudge)
// of a scored candidate, put beside the deterministic score as "judge" — never changing the reward
// or the guards. The one place the score command knows whether this build has the providers.
#pragma once

#include "server/Config.h"
#include "server/Scoring.h"

#include <optional>
#include <string>

namespace stitch::server {

struct JudgeOptions {
  std::string provider;  // openai | anthropic
  std::optional<std::string> model;
  std::optional<std::string> baseUrl;
};

// The judge's JSON, or {"error": "what failed"} (a missing key, an unreachable provider, answers
// that stay invalid): a judge that fails leaves the deterministic score standing.
protocol::json judgeScore(const JudgeOptions& options, const HostConfig& config, const ScoreInputs& inputs,
                          const protocol::json& score);

}  // namespace stitch::server
