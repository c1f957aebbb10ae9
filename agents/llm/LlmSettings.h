// What an LLM brain is configured with: the provider endpoint and how to talk to it, and the
// job's token/money budget. Plain structs, filled by the host from its command line, the
// request and the environment.
#pragma once

#include "agents/ir/Outcome.h"
#include "agents/llm/Secret.h"

#include <chrono>
#include <optional>
#include <string>

namespace stitch::agents::llm {

enum class ProviderKind { OpenAi, Anthropic };

std::string providerName(ProviderKind kind);  // "openai" | "anthropic"

struct ProviderSettings {
  ProviderKind kind = ProviderKind::OpenAi;
  std::string baseUrl;  // up to and including /v1: https://api.openai.com/v1, http://localhost:8000/v1
  std::string model;
  Secret apiKey;        // empty: no authentication header (local servers)
  double temperature = 0.2;
  int maxTokens = 8192;  // per answer
  bool stream = true;
  std::chrono::milliseconds connectTimeout{10000};
  std::chrono::milliseconds totalTimeout{600000};  // one request, first byte to last
  int maxAttempts = 5;                             // per request, the first included
  std::chrono::milliseconds backoffBase{1000};     // doubled per retry, with jitter
  std::chrono::milliseconds backoffCap{60000};     // also caps a server's Retry-After
};

struct Pricing {
  double inputUsdPerMTok = 0;
  double outputUsdPerMTok = 0;
};

struct LlmBudget {
  std::optional<long long> tokens = 1000000;  // input + output over the job; a guard against runaway loops
  std::optional<double> usd;        // needs pricing
  Pricing pricing;
};

struct LlmSettings {
  ProviderSettings provider;
  LlmBudget budget;
  int answerRepairs = 2;  // an invalid answer is sent back with its error at most this many times
};

// What the host knows before a job: the variable that holds the key, and the settings it was
// started with (command line). The request adds the provider, the model and the base URL.
struct LlmHostOptions {
  std::string apiKeyEnv;  // "": STITCHCUDA_API_KEY, then OPENAI_API_KEY or ANTHROPIC_API_KEY
  LlmSettings settings;   // provider kind, model, base URL and key are filled in per job
};

// The settings for a job of `brain` ("openai" | "anthropic"), or what is missing: an unknown
// brain, no model, a named key variable that is not set, a cost budget without prices.
builtin::Outcome<LlmSettings> resolveSettings(const std::string& brain, const std::optional<std::string>& model,
                                              const std::optional<std::string>& baseUrl, const LlmHostOptions& host);

}  // namespace stitch::agents::llm
