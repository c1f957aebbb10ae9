// The two providers' wire formats behind one interface: how a chat request becomes an HTTP
// request, and how a response (a whole JSON body, or a stream of server-sent events) becomes
// an answer. Pure functions of text: the transport lives in HttpPost, the retries in ChatClient.
#pragma once

#include "agents/llm/Chat.h"
#include "agents/llm/LlmSettings.h"
#include "agents/llm/SseParser.h"

#include <memory>
#include <vector>

namespace stitch::agents::llm {

struct WireRequest {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"; the key's header is among them
  std::string body;
};

// Reads a stream's events into an answer. An error stops the stream; done() says the
// provider's end marker arrived (a stream that ends without it was cut off). Each provider's
// decoder parses its own event format into the answer and the end marker kept here.
class StreamDecoder {
public:
  virtual ~StreamDecoder() = default;
  virtual std::optional<ChatError> onEvent(const SseEvent& event) = 0;
  bool done() const { return done_; }
  ChatAnswer answer() const { return answer_; }

protected:
  ChatAnswer answer_;
  bool done_ = false;
};

class ProviderWire {
public:
  virtual ~ProviderWire() = default;
  virtual WireRequest request(const ProviderSettings& settings, const ChatRequest& chat) const = 0;
  virtual std::unique_ptr<StreamDecoder> decoder() const = 0;
  // A non-streamed 2xx body.
  virtual ChatResult parseBody(const std::string& body) const = 0;
  // A non-2xx answer: the provider's error message and whether a retry may help (429, 5xx,
  // Anthropic's overloaded_error).
  virtual ChatError httpError(int status, const std::string& body) const = 0;
};

std::unique_ptr<ProviderWire> makeWire(ProviderKind kind);
std::unique_ptr<ProviderWire> makeOpenAiWire();     // OpenAiWire.cpp
std::unique_ptr<ProviderWire> makeAnthropicWire();  // AnthropicWire.cpp

// Shared by both wires: a retryable status, and a JSON error body's message (or the body's
// first characters when it is not JSON).
bool retryableStatus(int status);
std::string errorBodyMessage(const std::string& body);

}  // namespace stitch::agents::llm
