// The bodies of the reward service's POST /v1/score and POST /v1/verify, read into the work a slot
// runs. A score body has a `score --batch` row's fields; a verify body has `verify`'s options. Either
// may carry its files inline instead of as paths (referenceSource, candidateSource, candidateCuda):
// a trainer on another machine has the candidate as text. Paths must lie under the service's root.
#pragma once

#include "server/RewardPool.h"

#include <chrono>
#include <filesystem>

namespace stitch::server {

struct RewardSettings {
  std::filesystem::path root;      // canonical: every path a request names lies under it
  std::filesystem::path scratch;   // inline files go into a fresh folder here, removed after the answer
  std::filesystem::path cacheDir;  // the verifier's build cache, shared with `verify` and `score`
  std::chrono::milliseconds deadline{600000};  // per harness call
};

// Each throws std::invalid_argument saying which field is wrong and why (answered 400).
RewardWork scoreWork(const protocol::json& body, const RewardSettings& settings);
RewardWork verifyWork(const protocol::json& body, const RewardSettings& settings);

// A harness worker's error as the service answers it: the service's own trouble (no worker, stopping)
// is 503, anything about the request or its candidate is 422 with the worker's code.
RewardFailure failureOf(const agents::WorkerError& error);

}  // namespace stitch::server
