// Token and cost accounting; see UsageMeter.h.
#include "agents/llm/UsageMeter.h"

#include <cstdio>

namespace stitch::agents::llm {
namespace {

std::string usd(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "$%.4f", v);
  return buf;
}

bool priced(const Pricing& p) { return p.inputUsdPerMTok > 0 || p.outputUsdPerMTok > 0; }

}  // namespace

void UsageMeter::add(const TokenUsage& usage) {
  total_.input += usage.input;
  total_.output += usage.output;
  ++calls_;
}

double UsageMeter::costUsd() const {
  return (total_.input * budget_.pricing.inputUsdPerMTok + total_.output * budget_.pricing.outputUsdPerMTok) / 1e6;
}

std::optional<std::string> UsageMeter::exhausted() const {
  if (budget_.tokens && tokens() >= *budget_.tokens)
    return "the job's token budget is spent (" + std::to_string(tokens()) + " of " + std::to_string(*budget_.tokens) +
           " tokens)";
  if (budget_.usd && costUsd() >= *budget_.usd)
    return "the job's cost budget is spent (" + usd(costUsd()) + " of " + usd(*budget_.usd) + ")";
  return std::nullopt;
}

std::string UsageMeter::summary() const {
  std::string s = std::to_string(calls_) + " call(s), " + std::to_string(total_.input) + " input + " +
                  std::to_string(total_.output) + " output tokens";
  if (priced(budget_.pricing)) s += ", " + usd(costUsd());
  return s;
}

}  // namespace stitch::agents::llm
