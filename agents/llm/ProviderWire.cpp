// What both wire formats share; see ProviderWire.h.
#include "agents/llm/ProviderWire.h"

#include <nlohmann/json.hpp>

namespace stitch::agents::llm {

std::unique_ptr<ProviderWire> makeWire(ProviderKind kind) {
  return kind == ProviderKind::Anthropic ? makeAnthropicWire() : makeOpenAiWire();
}

bool retryableStatus(int status) { return status == 408 || status == 409 || status == 429 || status >= 500; }

std::string errorBodyMessage(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("error")) {
    const auto& e = j["error"];
    if (e.is_string()) return e.get<std::string>();
    if (e.is_object()) {
      std::string type = e.value("type", "");
      std::string message = e.value("message", "");
      return type.empty() ? message : type + ": " + message;
    }
  }
  std::string text = body.substr(0, 200);
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  return text.empty() ? "(empty body)" : text;
}

}  // namespace stitch::agents::llm
