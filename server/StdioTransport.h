// The stdio end of the protocol: a blocking reader (on its own thread) that frames the input
// and mirrors it to a file when asked, and the one serialized writer of stdout.
#pragma once

#include "protocol/Framing.h"
#include "server/Output.h"

#include <functional>
#include <mutex>
#include <optional>
#include <string>

namespace stitch::server {

class StdioOutput final : public Output {
public:
  explicit StdioOutput(int fd = 1) : fd_(fd) {}
  void send(const protocol::json& message) override;

private:
  std::mutex mutex_;
  int fd_;
  bool broken_ = false;  // the client closed its end; further output is dropped
};

struct InputOptions {
  bool delimited = false;                // "---"-separated messages, for transcripts
  std::optional<std::string> mirrorFile; // every input byte is copied here (to record sessions)
  protocol::FrameLimits limits;
};

// Reads `fd` until end of input. Each frame goes to `onFrame` on the calling thread; at the
// end `onEnd(midMessage)` is called once.
void readInput(int fd, const InputOptions& options, const std::function<void(protocol::Frame)>& onFrame,
               const std::function<void(bool midMessage)>& onEnd);

}  // namespace stitch::server
