// Method binding and protocol-wide rules; see Dispatcher.h.
#include "server/Dispatcher.h"

#include "server/Logger.h"

namespace stitch::server {

using protocol::ErrorCode;
using protocol::Incoming;

void logInvalidNotification(const std::string& method, const std::string& why) {
  logError("invalid params for notification " + method + ": " + why);
}

void Dispatcher::addRequest(const std::string& method, RequestHandler handler) {
  requests_[method] = std::move(handler);
}

void Dispatcher::addNotification(const std::string& method, NotificationHandler handler) {
  notifications_[method] = std::move(handler);
}

std::size_t Dispatcher::inflight() const {
  std::lock_guard lock(inflightMutex_);
  return inflight_.size();
}

void Dispatcher::handleFrameProblem(const std::string& description, bool refusedMessage) {
  logWarning(description);
  // The refused message may have been a request; it cannot be identified, so the client
  // is told once with a null id rather than left waiting silently.
  if (refusedMessage)
    output_.send(protocol::makeError(nullptr, {ErrorCode::InvalidRequest, description, std::nullopt}));
}

void Dispatcher::handleBody(std::string_view body) {
  if (auto why = protocol::exceedsShape(body)) {
    logWarning("message refused: " + *why);
    output_.send(protocol::makeError(nullptr, {ErrorCode::InvalidRequest, "message refused: " + *why, std::nullopt}));
    return;
  }
  json message;
  try {
    message = json::parse(body);
  } catch (const json::exception& e) {
    logWarning(std::string("unparseable message: ") + e.what());
    output_.send(protocol::makeError(
        nullptr, {ErrorCode::ParseError, std::string("invalid JSON: ") + e.what(), std::nullopt}));
    return;
  }
  Incoming in = protocol::classify(std::move(message));
  switch (in.kind) {
    case Incoming::Kind::Invalid:
      output_.send(protocol::makeError(in.id, *in.error));
      return;
    case Incoming::Kind::Response:
      if (!outgoing_.resolve(in)) logWarning("response to an unknown request id " + in.id.dump());
      return;
    case Incoming::Kind::Notification:
      dispatchNotification(in);
      return;
    case Incoming::Kind::Request:
      dispatchRequest(std::move(in));
      return;
  }
}

void Dispatcher::dispatchNotification(const Incoming& in) {
  if (in.method == "$/cancelRequest") {
    cancelRequest(in.params);
    return;
  }
  if (lifecycle_ == Lifecycle::Uninitialized && in.method != "exit") {
    logWarning("notification " + in.method + " before initialize dropped");
    return;
  }
  auto it = notifications_.find(in.method);
  if (it == notifications_.end()) {
    // "$/" notifications are optional by the LSP spec; others are worth a log line.
    if (in.method.rfind("$/", 0) != 0) logInfo("unhandled notification " + in.method);
    return;
  }
  try {
    it->second(in.params);
  } catch (const std::exception& e) {
    logError("notification " + in.method + " failed: " + e.what());
  }
}

void Dispatcher::dispatchRequest(Incoming in) {
  auto refuse = [this, &in](ErrorCode code, std::string why) {
    output_.send(protocol::makeError(in.id, {code, std::move(why), std::nullopt}));
  };
  if (lifecycle_ == Lifecycle::Uninitialized && in.method != "initialize")
    return refuse(ErrorCode::ServerNotInitialized, in.method + " before initialize");
  if (lifecycle_ == Lifecycle::Running && in.method == "initialize")
    return refuse(ErrorCode::InvalidRequest, "initialize was already received");
  if (lifecycle_ == Lifecycle::ShutDown)
    return refuse(ErrorCode::InvalidRequest, in.method + " after shutdown");
  auto it = requests_.find(in.method);
  if (it == requests_.end()) return refuse(ErrorCode::MethodNotFound, "unknown method " + in.method);

  agents::CancelSource source;
  {
    std::lock_guard lock(inflightMutex_);
    // Re-using a live id would make cancellation and replies ambiguous.
    if (!inflight_.emplace(in.id.dump(), source).second)
      return refuse(ErrorCode::InvalidRequest, "request id " + in.id.dump() + " is already in use");
  }
  Reply reply(in.id, in.method, [this](const protocol::RequestId& id, json m) {
    sendReply(id, std::move(m));
  });
  try {
    it->second(in.params, std::move(reply), source.token());
  } catch (const std::exception& e) {
    // The handler's Reply already answered (or its destructor will): only log here.
    logError("request " + in.method + " failed: " + e.what());
  }
}

void Dispatcher::cancelRequest(const json& params) {
  protocol::CancelParams p;
  try {
    p = params.get<protocol::CancelParams>();
  } catch (const std::exception& e) {
    logWarning(std::string("bad $/cancelRequest: ") + e.what());
    return;
  }
  agents::CancelSource source;
  {
    std::lock_guard lock(inflightMutex_);
    auto it = inflight_.find(p.id.dump());
    if (it == inflight_.end()) return;  // already answered: nothing to do
    source = it->second;
  }
  logDebug("cancelling request " + p.id.dump());
  source.cancel();
}

void Dispatcher::sendReply(const protocol::RequestId& id, json message) {
  {
    std::lock_guard lock(inflightMutex_);
    inflight_.erase(id.dump());
  }
  output_.send(message);
}

}  // namespace stitch::server
