// Work-done progress reporting; see Progress.h.
#include "server/Progress.h"

namespace stitch::server {

std::shared_ptr<Progress> Progress::start(Output& output, OutgoingRequests& outgoing,
                                          std::optional<protocol::json> clientToken,
                                          bool clientSupportsCreate, const std::string& serverToken,
                                          const std::string& title) {
  if (!clientToken && !clientSupportsCreate) return nullptr;
  std::shared_ptr<Progress> p(new Progress(output, clientToken ? *clientToken : protocol::json(serverToken)));
  p->send(protocol::json{{"kind", "begin"}, {"title", title}, {"cancellable", true}});
  if (clientToken) {
    p->ready(true);
  } else {
    outgoing.send("window/workDoneProgress/create", protocol::json{{"token", serverToken}},
                  [p](std::optional<protocol::json>, std::optional<protocol::RpcError> error) {
                    p->ready(!error);
                  });
  }
  return p;
}

void Progress::ready(bool accepted) {
  std::vector<protocol::json> held;
  {
    std::lock_guard lock(mutex_);
    ready_ = true;
    refused_ = !accepted;
    held.swap(held_);
  }
  if (!accepted) return;
  for (auto& value : held)
    output_.send(protocol::makeNotification("$/progress", {{"token", token_}, {"value", value}}));
}

void Progress::send(protocol::json value) {
  {
    std::lock_guard lock(mutex_);
    if (refused_ || (ended_ && value["kind"] != "end")) return;
    if (value["kind"] == "end") ended_ = true;
    if (!ready_) {
      held_.push_back(std::move(value));
      return;
    }
  }
  output_.send(protocol::makeNotification("$/progress", {{"token", token_}, {"value", value}}));
}

void Progress::report(const std::string& message, std::optional<int> percentage) {
  protocol::json value{{"kind", "report"}, {"message", message}};
  if (percentage) value["percentage"] = *percentage;
  send(std::move(value));
}

void Progress::end(const std::string& message) { send({{"kind", "end"}, {"message", message}}); }

}  // namespace stitch::server
