// Errors as values for both brains: parsing, planning and code generation return a
// value or a Failure saying what failed and where, so nothing throws across the job thread.
#pragma once

#include "protocol/Result.h"

#include <string>

namespace stitch::agents::ir {

struct Failure {
  std::string message;  // what failed, where (file:line or graph node when known), what to do
};

template <typename T>
using Outcome = protocol::Result<T, Failure>;

}  // namespace stitch::agents::ir

namespace stitch::agents::builtin {
using namespace ir;
}  // namespace stitch::agents::builtin
