// Retry delays; see Backoff.h.
#include "agents/llm/Backoff.h"

#include <algorithm>

namespace stitch::agents::llm {

std::chrono::milliseconds backoffDelay(int retry, std::optional<std::chrono::milliseconds> retryAfter,
                                       std::chrono::milliseconds base, std::chrono::milliseconds cap, double jitter) {
  if (retryAfter) return std::min(*retryAfter, cap);
  const int doublings = std::clamp(retry - 1, 0, 30);
  const double step = std::min<double>(static_cast<double>(cap.count()), static_cast<double>(base.count()) * (1LL << doublings));
  return std::chrono::milliseconds(static_cast<long long>(step / 2 + step / 2 * std::clamp(jitter, 0.0, 1.0)));
}

}  // namespace stitch::agents::llm
