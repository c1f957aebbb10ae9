// Requests the server sends to the client (workspace/applyEdit, window/workDoneProgress/
// create, ...), tracked in a bounded table so a client that never answers cannot grow it:
// past the bound the oldest entry is dropped and its callback told so.
#pragma once

#include "protocol/JsonRpc.h"
#include "server/Output.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>

namespace stitch::server {

class OutgoingRequests {
public:
  // Receives the result, or the error (the client's, or ours when the entry was dropped).
  using Callback = std::function<void(std::optional<protocol::json> result,
                                      std::optional<protocol::RpcError> error)>;

  OutgoingRequests(Output& output, std::size_t capacity = 100) : output_(output), capacity_(capacity) {}

  // Sends the request; the callback runs on the thread that delivers the answer.
  void send(const std::string& method, protocol::json params, Callback callback);
  // Delivers a response from the client; false when no entry had that id.
  bool resolve(const protocol::Incoming& response);
  std::size_t pending() const;

private:
  struct Entry {
    std::int64_t id;
    std::string method;
    Callback callback;
  };
  Output& output_;
  std::size_t capacity_;
  mutable std::mutex mutex_;
  std::deque<Entry> entries_;
  std::int64_t nextId_ = 1;
};

}  // namespace stitch::server
