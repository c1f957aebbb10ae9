// The Anthropic Messages format: `POST {base}/messages` with `x-api-key` and
// `anthropic-version`; streamed as message_start (input usage), content_block_delta (text),
// message_delta (stop reason, output usage) and message_stop; errors as `error` events, and
// `overloaded_error` (HTTP 529) is worth a retry.
#include "agents/llm/ProviderWire.h"

#include <nlohmann/json.hpp>

namespace stitch::agents::llm {
namespace {

using nlohmann::json;

ChatError protocolError(std::string message) { return {ChatError::Kind::Protocol, 0, std::move(message), true, {}}; }

void readUsage(const json& usage, TokenUsage& into) {
  if (!usage.is_object()) return;
  // Cached prompt tokens are billed as input too; count them so the budget sees them.
  into.input = usage.value("input_tokens", into.input) + usage.value("cache_read_input_tokens", 0LL) +
               usage.value("cache_creation_input_tokens", 0LL);
  into.output = usage.value("output_tokens", into.output);
}

class AnthropicDecoder final : public StreamDecoder {
public:
  std::optional<ChatError> onEvent(const SseEvent& event) override {
    json j = json::parse(event.data, nullptr, false);
    if (!j.is_object()) return protocolError("a stream event is not JSON: " + event.data.substr(0, 120));
    const std::string type = j.value("type", event.event);
    if (type == "message_start") {
      if (j.contains("message") && j["message"].is_object()) readUsage(j["message"].value("usage", json()), answer_.usage);
    } else if (type == "content_block_delta") {
      const json d = j.value("delta", json::object());
      if (d.value("type", "") == "text_delta") answer_.text += d.value("text", "");
    } else if (type == "message_delta") {
      const json d = j.value("delta", json::object());
      if (d.contains("stop_reason") && d["stop_reason"].is_string()) answer_.stopReason = d["stop_reason"];
      if (j.contains("usage") && j["usage"].is_object()) answer_.usage.output = j["usage"].value("output_tokens", answer_.usage.output);
    } else if (type == "message_stop") {
      done_ = true;
    } else if (type == "error") {
      const std::string kind = j.contains("error") && j["error"].is_object() ? j["error"].value("type", "") : "";
      ChatError e = protocolError("the server reported an error mid-stream: " + errorBodyMessage(event.data));
      e.retryable = kind == "overloaded_error" || kind == "api_error" || kind == "rate_limit_error";
      return e;
    }
    // ping, content_block_start/stop and event types added later carry nothing we need.
    return std::nullopt;
  }
};

class AnthropicWire final : public ProviderWire {
public:
  WireRequest request(const ProviderSettings& s, const ChatRequest& chat) const override {
    json messages = json::array();
    for (const auto& m : chat.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
    json body{{"model", s.model}, {"messages", messages}, {"max_tokens", s.maxTokens},
              {"temperature", s.temperature}, {"stream", s.stream}};
    if (!chat.system.empty()) body["system"] = chat.system;
    WireRequest r{s.baseUrl + "/messages", {"Content-Type: application/json", "anthropic-version: 2023-06-01"}, body.dump()};
    if (s.stream) r.headers.push_back("Accept: text/event-stream");
    if (!s.apiKey.empty()) r.headers.push_back("x-api-key: " + s.apiKey.reveal());
    return r;
  }

  std::unique_ptr<StreamDecoder> decoder() const override { return std::make_unique<AnthropicDecoder>(); }

  ChatResult parseBody(const std::string& body) const override {
    ChatResult r;
    json j = json::parse(body, nullptr, false);
    if (!j.is_object()) {
      r.error = protocolError("the answer is not JSON (" + std::to_string(body.size()) + " bytes): " + body.substr(0, 120));
      return r;
    }
    if (!j.contains("content") || !j["content"].is_array()) {
      r.error = protocolError("the answer has no \"content\" array");
      return r;
    }
    ChatAnswer a;
    for (const json& block : j["content"])
      if (block.is_object() && block.value("type", "") == "text") a.text += block.value("text", "");
    if (j.contains("stop_reason") && j["stop_reason"].is_string()) a.stopReason = j["stop_reason"];
    readUsage(j.value("usage", json()), a.usage);
    r.answer = std::move(a);
    return r;
  }

  ChatError httpError(int status, const std::string& body) const override {
    json j = json::parse(body, nullptr, false);
    const bool overloaded = j.is_object() && j.contains("error") && j["error"].is_object() &&
                            j["error"].value("type", "") == "overloaded_error";
    return {ChatError::Kind::Http, status, "HTTP " + std::to_string(status) + ": " + errorBodyMessage(body),
            overloaded || retryableStatus(status), {}};
  }
};

}  // namespace

std::unique_ptr<ProviderWire> makeAnthropicWire() { return std::make_unique<AnthropicWire>(); }

}  // namespace stitch::agents::llm
