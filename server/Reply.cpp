// Reply-exactly-once; see Reply.h.
#include "server/Reply.h"

#include "server/Logger.h"

namespace stitch::server {

Reply::Reply(protocol::RequestId id, std::string method, Sink sink)
    : id_(std::move(id)), method_(std::move(method)), sink_(std::move(sink)) {}

Reply::Reply(Reply&& other) noexcept
    : id_(std::move(other.id_)),
      method_(std::move(other.method_)),
      sink_(std::move(other.sink_)),
      used_(other.used_) {
  other.used_ = true;  // the moved-from husk owes nothing
}

Reply::~Reply() {
  if (used_) return;
  logError("no reply to " + method_ + " (id " + id_.dump() + "); answering with an internal error");
  error(protocol::ErrorCode::InternalError, "the server dropped the reply to " + method_);
}

bool Reply::claim() {
  if (used_) {
    logError("second reply to " + method_ + " (id " + id_.dump() + ") refused");
    return false;
  }
  used_ = true;
  return true;
}

void Reply::operator()(protocol::json result) {
  if (claim()) sink_(id_, protocol::makeResponse(id_, std::move(result)));
}

void Reply::error(protocol::ErrorCode code, std::string message) {
  error(protocol::RpcError{code, std::move(message), std::nullopt});
}

void Reply::error(const protocol::RpcError& e) {
  if (claim()) sink_(id_, protocol::makeError(id_, e));
}

}  // namespace stitch::server
