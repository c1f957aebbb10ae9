// An API key as a type that cannot be printed by accident: no stream operator, no JSON
// conversion, only an explicit reveal() for the one header that carries it, and a scrubber
// for text that came back from a server (some echo the key in their error bodies).
#pragma once

#include <algorithm>
#include <string>
#include <utility>

namespace stitch::agents::llm {

class Secret {
public:
  Secret() = default;
  explicit Secret(std::string value) : value_(std::move(value)) {}
  bool empty() const { return value_.empty(); }
  // Only for building the request's authentication header.
  const std::string& reveal() const { return value_; }
  // `text` with every occurrence of the key (and of its first 8+ characters, which servers
  // quote when they shorten it) replaced by "[redacted]".
  std::string scrub(std::string text) const {
    if (value_.size() < 4) return text;
    for (const std::string& needle : {value_, value_.substr(0, std::min<std::size_t>(value_.size(), 12))})
      for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at))
        text.replace(at, needle.size(), "[redacted]");
    return text;
  }

private:
  std::string value_;
};

}  // namespace stitch::agents::llm
