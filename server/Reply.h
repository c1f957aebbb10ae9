// The answer to one request, as a type: it can be used once; a second use is refused and
// logged, and dropping it unused sends an internal error naming the method, so a missing
// reply is a visible bug rather than a client that hangs.
#pragma once

#include "protocol/JsonRpc.h"

#include <functional>
#include <memory>
#include <string>

namespace stitch::server {

class Reply {
public:
  using Sink = std::function<void(const protocol::RequestId&, protocol::json message)>;

  Reply(protocol::RequestId id, std::string method, Sink sink);
  Reply(Reply&& other) noexcept;
  Reply& operator=(Reply&&) = delete;
  Reply(const Reply&) = delete;
  Reply& operator=(const Reply&) = delete;
  ~Reply();

  void operator()(protocol::json result);
  void error(protocol::ErrorCode code, std::string message);
  void error(const protocol::RpcError& error);

  const protocol::RequestId& id() const { return id_; }
  const std::string& method() const { return method_; }

private:
  bool claim();

  protocol::RequestId id_;
  std::string method_;
  Sink sink_;
  bool used_ = false;
};

}  // namespace stitch::server
