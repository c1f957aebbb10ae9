// Binds method names to handlers and enforces the JSON-RPC and LSP rules that hold for
// every method: parse errors, invalid messages, unknown methods, params that do not parse
// (-32602), requests before `initialize` (-32002) or after `shutdown`, and $/cancelRequest.
// It knows no transport: bodies come in as text, messages go out through Output.
#pragma once

#include "agents/Cancellation.h"
#include "protocol/LspTypes.h"
#include "server/OutgoingRequests.h"
#include "server/Output.h"
#include "server/Reply.h"

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>

namespace stitch::server {

using agents::CancelToken;

// Notifications have no reply; a bad one is logged.
void logInvalidNotification(const std::string& method, const std::string& why);
using protocol::json;

class Dispatcher {
public:
  using RequestHandler = std::function<void(const json& params, Reply reply, CancelToken cancel)>;
  using NotificationHandler = std::function<void(const json& params)>;
  enum class Lifecycle { Uninitialized, Running, ShutDown };

  Dispatcher(Output& output, OutgoingRequests& outgoing) : output_(output), outgoing_(outgoing) {}

  void addRequest(const std::string& method, RequestHandler handler);
  void addNotification(const std::string& method, NotificationHandler handler);

  // Typed handlers: params are parsed at the edge; a shape error answers -32602.
  template <typename Params>
  void request(const std::string& method, std::function<void(Params, Reply, CancelToken)> handler) {
    addRequest(method, [method, handler = std::move(handler)](const json& raw, Reply reply,
                                                              CancelToken cancel) {
      Params params;
      try {
        params = raw.get<Params>();
      } catch (const std::exception& e) {
        reply.error(protocol::ErrorCode::InvalidParams, "invalid params for " + method + ": " + e.what());
        return;
      }
      handler(std::move(params), std::move(reply), std::move(cancel));
    });
  }
  template <typename Params>
  void notification(const std::string& method, std::function<void(Params)> handler);

  // One message body from the transport.
  void handleBody(std::string_view body);
  // A framing problem the transport recovered from; an oversized message is answered.
  void handleFrameProblem(const std::string& description, bool refusedMessage);

  void setLifecycle(Lifecycle state) { lifecycle_ = state; }
  Lifecycle lifecycle() const { return lifecycle_; }
  std::size_t inflight() const;

private:
  void dispatchRequest(protocol::Incoming in);
  void dispatchNotification(const protocol::Incoming& in);
  void cancelRequest(const json& params);
  void sendReply(const protocol::RequestId& id, json message);

  Output& output_;
  OutgoingRequests& outgoing_;
  std::map<std::string, RequestHandler> requests_;
  std::map<std::string, NotificationHandler> notifications_;
  std::atomic<Lifecycle> lifecycle_ = Lifecycle::Uninitialized;
  mutable std::mutex inflightMutex_;
  std::map<std::string, agents::CancelSource> inflight_;  // by id.dump()
};

template <typename Params>
void Dispatcher::notification(const std::string& method, std::function<void(Params)> handler) {
  addNotification(method, [method, handler = std::move(handler)](const json& raw) {
    Params params;
    try {
      params = raw.get<Params>();
    } catch (const std::exception& e) {
      // Notifications have no reply; the client learns of it through the log.
      logInvalidNotification(method, e.what());
      return;
    }
    handler(std::move(params));
  });
}

}  // namespace stitch::server
