// One provider conversation turn with the policy around it: streamed or whole answers,
// retries of what may succeed next time (429, 5xx, overloaded, dropped or stalled connections,
// garbled streams) with backoff honouring Retry-After, cancellation between and during
// attempts. Every message it produces is scrubbed of the API key.
#pragma once

#include "agents/Cancellation.h"
#include "agents/llm/Chat.h"
#include "agents/llm/LlmSettings.h"
#include "agents/llm/ProviderWire.h"

#include <functional>
#include <memory>
#include <random>

namespace stitch::agents::llm {

class ChatClient {
public:
  // Where retries are reported: level (info | warning) and message.
  using Log = std::function<void(const std::string& level, const std::string& message)>;

  ChatClient(ProviderSettings settings, Log log);
  ChatResult complete(const ChatRequest& chat, const CancelToken& cancel);

private:
  ChatResult attempt(const ChatRequest& chat, const CancelToken& cancel);
  ChatResult streamed(const WireRequest& request, const CancelToken& cancel);
  ChatResult whole(const WireRequest& request, const CancelToken& cancel);
  // Sleeps unless cancelled first; false when cancelled.
  bool wait(std::chrono::milliseconds delay, const CancelToken& cancel);

  ProviderSettings settings_;
  std::unique_ptr<ProviderWire> wire_;
  Log log_;
  std::mt19937 rng_{std::random_device{}()};
};

}  // namespace stitch::agents::llm
