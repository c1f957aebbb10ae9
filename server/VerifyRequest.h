// verify's options read from a JSON object, with the same names and checks wherever a request comes
// as JSON: a `verify --batch` row, the reward service's POST /v1/verify body (protocol/REWARD_SERVICE.md).
#pragma once

#include "protocol/JsonRpc.h"

#include <string>

namespace stitch::server {

struct VerifyCall {
  protocol::json params = protocol::json::object();  // atol, rtol, trials, seed, allowPrecision, precision, timing
  bool kernelbench = false;                          // the harness's verifyKernelBench instead of verify
  const char* method() const { return kernelbench ? "verifyKernelBench" : "verify"; }
};

// Reads atol, rtol, trials, seed, allowPrecision, precision, timing and kernelbench from `body`, over
// `defaults` (the command line's); reference, candidate and id are left to the caller. Any other field
// throws std::invalid_argument, which names it and ends with `fields` (what the body may hold).
VerifyCall verifyCallFrom(const protocol::json& body, const std::string& fields, VerifyCall defaults = {});

}  // namespace stitch::server
