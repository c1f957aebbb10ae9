// Incremental SSE parsing; see SseParser.h.
#include "agents/llm/SseParser.h"

namespace stitch::agents::llm {

std::optional<std::string> SseParser::feed(std::string_view bytes) {
  if (failed_) return failed_;
  pending_.append(bytes);
  std::size_t start = 0;
  for (std::size_t nl = pending_.find('\n', start); nl != std::string::npos; nl = pending_.find('\n', start)) {
    std::string_view text(pending_.data() + start, nl - start);
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    start = nl + 1;
    if (auto error = line(text)) {
      failed_ = error;
      return failed_;
    }
  }
  pending_.erase(0, start);
  return std::nullopt;
}

std::optional<std::string> SseParser::finish() {
  if (failed_) return failed_;
  if (!pending_.empty()) {
    std::string last = std::move(pending_);
    pending_.clear();
    if (auto error = line(last)) return failed_ = error;
  }
  if (hasData_) return failed_ = dispatch();
  return std::nullopt;
}

std::optional<std::string> SseParser::line(std::string_view text) {
  ++lineNumber_;
  if (text.empty()) {
    if (hasData_) return dispatch();
    current_ = {};  // an event without data is dropped, its type with it
    return std::nullopt;
  }
  if (text.front() == ':') return std::nullopt;  // a comment (keep-alives look like this)
  const auto colon = text.find(':');
  const std::string_view field = text.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? std::string_view{} : text.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (colon == std::string_view::npos || (field != "data" && field != "event" && field != "id" && field != "retry"))
    return "malformed server-sent event at line " + std::to_string(lineNumber_) + ": \"" +
           std::string(text.substr(0, 120)) + "\"";
  if (field == "data") {
    if (hasData_) current_.data += '\n';
    current_.data.append(value);
    hasData_ = true;
  } else if (field == "event") {
    current_.event = std::string(value);
  }
  return std::nullopt;
}

std::optional<std::string> SseParser::dispatch() {
  SseEvent event = std::move(current_);
  current_ = {};
  hasData_ = false;
  return sink_(event);
}

}  // namespace stitch::agents::llm
