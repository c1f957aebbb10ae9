// `stitchcuda score --judge openai|anthropic`: the rubric's four dimensions as a model scores them
// (prompts/Judge.cpp), through the same providers and retry policy as the LLM brain, the answer read
// strictly (an invalid one is sent back with its error). Reported beside the deterministic scores;
// it never changes the reward or the guards.
#pragma once

#include "agents/ir/Outcome.h"
#include "agents/llm/ChatClient.h"
#include "agents/llm/prompts/Prompts.h"

#include <map>
#include <optional>
#include <string>

namespace stitch::agents::llm {

inline constexpr const char* kJudgeDimensions[] = {"anti_hacking", "cuda_engineering", "operator_coverage",
                                                   "skill_compliance"};

struct JudgeScore {
  std::optional<double> score;  // null: the dimension does not apply (skill_compliance of a generation)
  std::string reason;
};

struct Judgement {
  std::map<std::string, JudgeScore> scores;
  std::string summary;
  TokenUsage usage;  // over every answer, repairs included
  int answers = 0;
};

// The answer's fenced JSON block: every dimension with a score in [0, 1] (or null) and a reason.
builtin::Outcome<Judgement> parseJudgement(const std::string& answer);

// Asks, reads, sends an invalid answer back at most `repairs` times.
builtin::Outcome<Judgement> judgeCandidate(ChatClient& client, const prompts::JudgeInput& input,
                                           const CancelToken& cancel, int repairs = 1);

// {"provider", "model", "scores": {dimension: {"score", "reason"}}, "summary", "usage": {input, output}, "answers"}
nlohmann::json judgementToJson(const Judgement& j, const ProviderSettings& provider);

}  // namespace stitch::agents::llm
