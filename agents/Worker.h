// A harness worker as the agents see it: a call with a deadline that returns a result or a
// structured error. The process behind it (spawn, pipes, kill, restart) lives in server/.
#pragma once

#include "agents/Cancellation.h"
#include "protocol/JsonRpc.h"

#include <chrono>
#include <optional>
#include <string>

namespace stitch::agents {

struct WorkerError {
  std::string code;     // snake_case name from the harness, or one of the host's own:
                        // worker_start_failed, worker_crashed, deadline_exceeded, cancelled
  std::string message;
  std::optional<std::string> file;
  std::optional<int> line;
};

struct WorkerReply {
  std::optional<protocol::json> result;
  std::optional<WorkerError> error;
  bool ok() const { return result.has_value(); }
};

class Worker {
public:
  virtual ~Worker() = default;
  // Blocks until the reply, the deadline or a cancel. After deadline_exceeded, cancelled or
  // worker_crashed the process is gone and the next call starts a fresh one.
  virtual WorkerReply call(const std::string& method, const protocol::json& params,
                           std::chrono::milliseconds deadline, const CancelToken& cancel) = 0;
};

}  // namespace stitch::agents
