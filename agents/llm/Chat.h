// A chat exchange as the brain sees it, whatever the provider: the request (system prompt and
// turns), the answer with its token usage and stop reason, or an error value saying what failed
// and whether trying again may help.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace stitch::agents::llm {

struct ChatMessage {
  std::string role;  // user | assistant
  std::string content;
};

struct ChatRequest {
  std::string system;
  std::vector<ChatMessage> messages;
};

struct TokenUsage {
  long long input = 0;
  long long output = 0;
};

struct ChatAnswer {
  std::string text;
  TokenUsage usage;
  std::string stopReason;  // the provider's word: stop, end_turn, length, max_tokens, ...
  bool truncated() const { return stopReason == "length" || stopReason == "max_tokens"; }
};

struct ChatError {
  enum class Kind { Connection, Timeout, Http, Protocol, Cancelled };
  Kind kind = Kind::Protocol;
  int httpStatus = 0;
  std::string message;  // already scrubbed of the API key
  bool retryable = false;
  std::optional<std::chrono::milliseconds> retryAfter;  // what the server asked for
};

struct ChatResult {
  std::optional<ChatAnswer> answer;
  std::optional<ChatError> error;
  int attempts = 0;
  bool ok() const { return answer.has_value(); }
};

}  // namespace stitch::agents::llm
