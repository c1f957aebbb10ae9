// Resolving a job's LLM settings; see LlmSettings.h.
#include "agents/llm/LlmSettings.h"

#include <cstdlib>

namespace stitch::agents::llm {

std::string providerName(ProviderKind kind) { return kind == ProviderKind::Anthropic ? "anthropic" : "openai"; }

builtin::Outcome<LlmSettings> resolveSettings(const std::string& brain, const std::optional<std::string>& model,
                                              const std::optional<std::string>& baseUrl, const LlmHostOptions& host) {
  using builtin::Failure;
  LlmSettings s = host.settings;
  if (brain == "openai") s.provider.kind = ProviderKind::OpenAi;
  else if (brain == "anthropic") s.provider.kind = ProviderKind::Anthropic;
  else return Failure{"no LLM brain is called \"" + brain + "\" (openai or anthropic)"};
  const std::string name = providerName(s.provider.kind);

  s.provider.model = model.value_or("");
  if (s.provider.model.empty())
    return Failure{"the " + name + " brain needs a model name: pass --model NAME (in the editor: the stitchcuda.model "
                   "setting); local servers accept the name they serve"};
  s.provider.baseUrl = baseUrl && !baseUrl->empty() ? *baseUrl
                       : s.provider.kind == ProviderKind::Anthropic ? "https://api.anthropic.com/v1"
                                                                    : "https://api.openai.com/v1";
  while (!s.provider.baseUrl.empty() && s.provider.baseUrl.back() == '/') s.provider.baseUrl.pop_back();
  if (s.provider.baseUrl.rfind("http://", 0) != 0 && s.provider.baseUrl.rfind("https://", 0) != 0)
    return Failure{"the base URL \"" + s.provider.baseUrl + "\" must start with http:// or https://"};

  auto env = [](const std::string& var) -> std::optional<std::string> {
    const char* v = std::getenv(var.c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  if (!host.apiKeyEnv.empty()) {
    auto key = env(host.apiKeyEnv);
    if (!key) return Failure{"the API key variable " + host.apiKeyEnv + " is not set"};
    s.provider.apiKey = Secret(*key);
  } else if (auto key = env("STITCHCUDA_API_KEY"); key && !key->empty()) {
    s.provider.apiKey = Secret(*key);
  } else if (auto key = env(s.provider.kind == ProviderKind::Anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY")) {
    s.provider.apiKey = Secret(*key);
  }
  if (s.budget.usd && s.budget.pricing.inputUsdPerMTok <= 0 && s.budget.pricing.outputUsdPerMTok <= 0)
    return Failure{"a cost budget needs the model's prices: pass --llm-price IN,OUT (USD per million tokens)"};
  return s;
}

}  // namespace stitch::agents::llm
