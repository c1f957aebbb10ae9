// The OpenAI-compatible chat-completions format (OpenAI, vLLM, SGLang, Ollama, llama.cpp
// server): `POST {base}/chat/completions`; streamed as `chat.completion.chunk` events ending in
// `data: [DONE]`, usage in the last chunk when asked for with stream_options.include_usage.
#include "agents/llm/ProviderWire.h"

#include <nlohmann/json.hpp>

namespace stitch::agents::llm {
namespace {

using nlohmann::json;

void readUsage(const json& j, TokenUsage& usage) {
  if (!j.contains("usage") || !j["usage"].is_object()) return;
  usage.input = j["usage"].value("prompt_tokens", usage.input);
  usage.output = j["usage"].value("completion_tokens", usage.output);
}

ChatError protocolError(std::string message) { return {ChatError::Kind::Protocol, 0, std::move(message), true, {}}; }

class OpenAiDecoder final : public StreamDecoder {
public:
  std::optional<ChatError> onEvent(const SseEvent& event) override {
    if (event.data == "[DONE]") {
      done_ = true;
      return std::nullopt;
    }
    json j = json::parse(event.data, nullptr, false);
    if (!j.is_object()) return protocolError("a stream chunk is not JSON: " + event.data.substr(0, 120));
    if (j.contains("error")) return protocolError("the server reported an error mid-stream: " + errorBodyMessage(event.data));
    readUsage(j, answer_.usage);
    if (!j.contains("choices") || !j["choices"].is_array())
      return protocolError("a stream chunk has no \"choices\" array: " + event.data.substr(0, 120));
    for (const json& choice : j["choices"]) {
      if (!choice.is_object()) continue;
      if (auto d = choice.find("delta"); d != choice.end() && d->is_object()) {
        if (auto c = d->find("content"); c != d->end() && c->is_string()) answer_.text += c->get<std::string>();
      }
      if (auto f = choice.find("finish_reason"); f != choice.end() && f->is_string()) answer_.stopReason = *f;
    }
    return std::nullopt;
  }
};

class OpenAiWire final : public ProviderWire {
public:
  WireRequest request(const ProviderSettings& s, const ChatRequest& chat) const override {
    json messages = json::array();
    if (!chat.system.empty()) messages.push_back({{"role", "system"}, {"content", chat.system}});
    for (const auto& m : chat.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
    json body{{"model", s.model}, {"messages", messages}, {"temperature", s.temperature},
              {"max_tokens", s.maxTokens}, {"stream", s.stream}};
    if (s.stream) body["stream_options"] = {{"include_usage", true}};
    WireRequest r{s.baseUrl + "/chat/completions", {"Content-Type: application/json"}, body.dump()};
    if (s.stream) r.headers.push_back("Accept: text/event-stream");
    if (!s.apiKey.empty()) r.headers.push_back("Authorization: Bearer " + s.apiKey.reveal());
    return r;
  }

  std::unique_ptr<StreamDecoder> decoder() const override { return std::make_unique<OpenAiDecoder>(); }

  ChatResult parseBody(const std::string& body) const override {
    ChatResult r;
    json j = json::parse(body, nullptr, false);
    if (!j.is_object()) {
      r.error = protocolError("the answer is not JSON (" + std::to_string(body.size()) + " bytes): " + body.substr(0, 120));
      return r;
    }
    const json* choice = j.contains("choices") && j["choices"].is_array() && !j["choices"].empty() ? &j["choices"][0] : nullptr;
    if (!choice || !choice->contains("message") || !(*choice)["message"].is_object()) {
      r.error = protocolError("the answer has no choices[0].message");
      return r;
    }
    ChatAnswer a;
    const json& content = (*choice)["message"].value("content", json());
    if (content.is_string()) a.text = content.get<std::string>();
    a.stopReason = choice->value("finish_reason", json()).is_string() ? (*choice)["finish_reason"].get<std::string>() : "";
    readUsage(j, a.usage);
    r.answer = std::move(a);
    return r;
  }

  ChatError httpError(int status, const std::string& body) const override {
    return {ChatError::Kind::Http, status, "HTTP " + std::to_string(status) + ": " + errorBodyMessage(body),
            retryableStatus(status), {}};
  }
};

}  // namespace

std::unique_ptr<ProviderWire> makeOpenAiWire() { return std::make_unique<OpenAiWire>(); }

}  // namespace stitch::agents::llm
