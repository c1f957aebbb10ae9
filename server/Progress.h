// LSP work-done progress for one job: uses the client's token when the request carried one,
// otherwise creates a server token (window/workDoneProgress/create) and holds back
// begin/report/end until the client has accepted it, as the spec requires.
#pragma once

#include "server/OutgoingRequests.h"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace stitch::server {

class Progress : public std::enable_shared_from_this<Progress> {
public:
  // `clientToken` from the request's workDoneToken; without it and without client support
  // for window.workDoneProgress, progress is silently not reported.
  static std::shared_ptr<Progress> start(Output& output, OutgoingRequests& outgoing,
                                         std::optional<protocol::json> clientToken,
                                         bool clientSupportsCreate, const std::string& serverToken,
                                         const std::string& title);
  void report(const std::string& message, std::optional<int> percentage);
  void end(const std::string& message);

private:
  Progress(Output& output, protocol::json token) : output_(output), token_(std::move(token)) {}
  void send(protocol::json value);
  void ready(bool accepted);

  Output& output_;
  protocol::json token_;
  std::mutex mutex_;
  bool ready_ = false;
  bool refused_ = false;
  bool ended_ = false;
  std::vector<protocol::json> held_;  // sent once the token is accepted
};

}  // namespace stitch::server
