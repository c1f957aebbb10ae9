// Tokens and money a job has spent on its model, against the job's budget. The brain asks
// before each call whether the budget allows another, and the loop then stops cleanly with the
// best candidate it has.
#pragma once

#include "agents/llm/Chat.h"
#include "agents/llm/LlmSettings.h"

#include <optional>
#include <string>

namespace stitch::agents::llm {

class UsageMeter {
public:
  explicit UsageMeter(LlmBudget budget) : budget_(std::move(budget)) {}

  void add(const TokenUsage& usage);
  // Why no further call may be made, or nullopt while the budget lasts.
  std::optional<std::string> exhausted() const;
  double costUsd() const;
  long long tokens() const { return total_.input + total_.output; }
  int calls() const { return calls_; }
  // "3 calls, 1200 input + 800 output tokens, $0.0123" (the cost only when prices are known).
  std::string summary() const;

private:
  LlmBudget budget_;
  TokenUsage total_;
  int calls_ = 0;
};

}  // namespace stitch::agents::llm
