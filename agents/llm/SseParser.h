// Server-sent events, parsed incrementally as bytes arrive (both providers stream this way):
// lines split across reads are joined, `data:` lines of one event are concatenated, comments
// are skipped. Strict: a line that is not a known field or a comment is an error naming it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace stitch::agents::llm {

struct SseEvent {
  std::string event;  // empty when the server sent no `event:` line
  std::string data;
};

class SseParser {
public:
  // Called for each complete event; returns an error to stop the stream.
  using Sink = std::function<std::optional<std::string>(const SseEvent&)>;
  explicit SseParser(Sink sink) : sink_(std::move(sink)) {}

  // Feeds the next bytes; an error (a malformed line, or the sink's) stops parsing for good.
  std::optional<std::string> feed(std::string_view bytes);
  // The stream ended: an event not yet terminated by a blank line is dispatched.
  std::optional<std::string> finish();

private:
  std::optional<std::string> line(std::string_view text);
  std::optional<std::string> dispatch();

  Sink sink_;
  std::string pending_;  // an incomplete line
  SseEvent current_;
  bool hasData_ = false;
  int lineNumber_ = 0;
  std::optional<std::string> failed_;
};

}  // namespace stitch::agents::llm
