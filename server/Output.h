// Where outgoing messages go. The one implementation on stdio serializes writers; tests and
// the fuzzer plug in their own. Handlers never see stdio, only this.
#pragma once

#include "protocol/JsonRpc.h"

namespace stitch::server {

class Output {
public:
  virtual ~Output() = default;
  // Thread-safe; one message is written whole before the next begins.
  virtual void send(const protocol::json& message) = 0;
};

}  // namespace stitch::server
