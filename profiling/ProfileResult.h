// Errors as values for the profiling layer: every runner and parser returns a value or a
// ProfileError that says what failed and what to do, so no exception leaves a worker thread.
#pragma once

#include "protocol/Result.h"

#include <string>

namespace stitch::profiling {

struct ProfileError {
  std::string code;     // stable snake_case: tool_missing, counters_permission, parse_error, ...
  std::string message;  // for people: what failed, where, and what to do
};

template <typename T>
using ProfileResult = protocol::Result<T, ProfileError>;

}  // namespace stitch::profiling
