// How long to wait before retrying a provider request: the server's Retry-After when it sent
// one, else exponential backoff with jitter, both capped (so a misbehaving server cannot park
// a job for hours).
#pragma once

#include <chrono>
#include <optional>

namespace stitch::agents::llm {

// `retry` counts from 1; `jitter` in [0, 1) picks a point in the upper half of the step, so
// clients that failed together do not retry together, yet no wait collapses to nothing.
std::chrono::milliseconds backoffDelay(int retry, std::optional<std::chrono::milliseconds> retryAfter,
                                       std::chrono::milliseconds base, std::chrono::milliseconds cap, double jitter);

}  // namespace stitch::agents::llm
