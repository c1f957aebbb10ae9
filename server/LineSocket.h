// JSON Lines over TCP, for serve-reward's Slurm workers: the service listens, each worker job connects
// back from its node (nodes reach the submitting host on a Slurm cluster; the other way round they need
// not). A socket owns its descriptor; a read waits with poll(), so a deadline or a cancel ends it, and
// shutdown() from another thread ends it as a closed peer.
#pragma once

#include "agents/Cancellation.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <variant>

namespace stitch::server {

class LineSocket {
public:
  explicit LineSocket(int fd) : fd_(fd) {}
  ~LineSocket();
  LineSocket(const LineSocket&) = delete;
  LineSocket& operator=(const LineSocket&) = delete;

  // A connection to host:port, or why there is none.
  static std::variant<std::unique_ptr<LineSocket>, std::string> connect(const std::string& host, int port);

  // Sends `line` and a newline; false when the peer is gone.
  bool send(const std::string& line);

  enum class Read { line, closed, timeout, cancelled };
  // The next line (without its newline) into `line`. `until` unset: no deadline.
  Read read(std::string& line, std::optional<std::chrono::steady_clock::time_point> until,
            const agents::CancelToken* cancel = nullptr);
  // Whether the peer closed (or sent something unasked) while nobody reads: a check that does not wait.
  bool readableNow() const;
  // Ends a read in progress in another thread (it returns closed); the descriptor stays open.
  void shutdown();

private:
  int fd_;
  std::string pending_;  // bytes read past the last complete line
};

// A listening TCP socket on every interface, on a port the system picks.
class LineListener {
public:
  ~LineListener();
  // Listening, or why not.
  static std::variant<std::unique_ptr<LineListener>, std::string> open();
  int port() const { return port_; }
  // A connection, or nothing after `wait`.
  std::unique_ptr<LineSocket> accept(std::chrono::milliseconds wait);

private:
  LineListener(int fd, int port) : fd_(fd), port_(port) {}
  int fd_;
  int port_;
};

}  // namespace stitch::server
