// LSP base-protocol framing and the delimited transcript style; see Framing.h.
#include "protocol/Framing.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

namespace stitch::protocol {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

Frame problem(std::string text) {
  return Frame{Frame::Kind::Problem, std::move(text), 0};
}

std::string printable(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 60)) out += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  if (s.size() > 60) out += "...";
  return out;
}

}  // namespace

void ContentLengthDecoder::feed(std::string_view bytes) { buffer_.append(bytes); }

bool ContentLengthDecoder::midMessage() const {
  return state_ != State::Headers || sawHeaderLine_ || !buffer_.empty();
}

std::optional<Frame> ContentLengthDecoder::next() {
  switch (state_) {
    case State::Headers: return parseHeaders();
    case State::Body: return takeBody();
    case State::Skipping: return skipBody();
  }
  return std::nullopt;
}

std::optional<Frame> ContentLengthDecoder::parseHeaders() {
  while (true) {
    std::size_t eol = buffer_.find('\n');
    if (eol == std::string::npos) {
      // An endless header line must not grow the buffer without bound.
      if (buffer_.size() > limits_.maxHeaderLine) {
        buffer_.clear();
        bool first = !droppingLongLine_;
        droppingLongLine_ = true;
        if (first) return problem("header line longer than " + std::to_string(limits_.maxHeaderLine) +
                                  " bytes skipped");
      }
      return std::nullopt;
    }
    std::string line = buffer_.substr(0, eol);
    buffer_.erase(0, eol + 1);
    if (droppingLongLine_) {  // the tail of a line already reported
      droppingLongLine_ = false;
      continue;
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();

    if (line.empty()) {
      if (!sawHeaderLine_) continue;  // stray blank line between messages
      sawHeaderLine_ = false;
      if (!contentLength_) return problem("message header without Content-Length skipped");
      std::size_t length = *contentLength_;
      contentLength_.reset();
      if (length > limits_.maxContentLength) {
        // Refused without allocating: the declared body is skipped as it streams past.
        state_ = State::Skipping;
        remaining_ = length;
        Frame f = problem("message of " + std::to_string(length) + " bytes refused (limit " +
                          std::to_string(limits_.maxContentLength) + ")");
        f.refusedLength = length;
        return f;
      }
      state_ = State::Body;
      remaining_ = length;
      return takeBody();
    }

    std::size_t colon = line.find(':');
    if (colon == std::string::npos) return problem("garbage header line skipped: " + printable(line));
    sawHeaderLine_ = true;
    std::string_view name = trim(std::string_view(line).substr(0, colon));
    std::string_view value = trim(std::string_view(line).substr(colon + 1));
    if (!iequals(name, "Content-Length")) continue;  // Content-Type and others are ignored
    std::size_t length = 0;
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), length);
    if (ec != std::errc() || ptr != value.data() + value.size()) {
      // An overflowing or malformed length is treated as the largest possible one.
      if (ec == std::errc::result_out_of_range) {
        contentLength_ = std::numeric_limits<std::size_t>::max();
        continue;
      }
      return problem("bad Content-Length header skipped: " + printable(line));
    }
    contentLength_ = length;
  }
}

std::optional<Frame> ContentLengthDecoder::takeBody() {
  if (buffer_.size() < remaining_) return std::nullopt;
  Frame f{Frame::Kind::Message, buffer_.substr(0, remaining_), 0};
  buffer_.erase(0, remaining_);
  remaining_ = 0;
  state_ = State::Headers;
  return f;
}

std::optional<Frame> ContentLengthDecoder::skipBody() {
  std::size_t n = std::min(remaining_, buffer_.size());
  buffer_.erase(0, n);
  remaining_ -= n;
  if (remaining_ != 0) return std::nullopt;
  state_ = State::Headers;
  return parseHeaders();
}

void DelimitedDecoder::feed(std::string_view bytes) { pending_.append(bytes); }

bool DelimitedDecoder::midMessage() const {
  return !trim(message_).empty() || !trim(pending_).empty();
}

void DelimitedDecoder::finish() {
  if (!pending_.empty() && pending_.back() != '\n') pending_ += '\n';
  finished_ = true;
}

std::optional<Frame> DelimitedDecoder::takeMessage() {
  std::string body = std::move(message_);
  message_.clear();
  bool overflowed = overflowed_;
  overflowed_ = false;
  if (overflowed) return problem("delimited message over the size limit refused");
  if (trim(body).empty()) return std::nullopt;
  return Frame{Frame::Kind::Message, std::move(body), 0};
}

std::optional<Frame> DelimitedDecoder::next() {
  while (true) {
    std::size_t eol = pending_.find('\n');
    if (eol == std::string::npos) {
      if (finished_ && !message_.empty()) {
        finished_ = false;  // flush once
        return takeMessage();
      }
      return std::nullopt;
    }
    std::string line = pending_.substr(0, eol);
    pending_.erase(0, eol + 1);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (trim(line) == "---") {
      if (auto f = takeMessage()) return f;
      continue;
    }
    if (!line.empty() && line.front() == '#') continue;  // transcript comment
    if (message_.size() + line.size() > limits_.maxContentLength) {
      overflowed_ = true;
      continue;
    }
    message_ += line;
    message_ += '\n';
  }
}

std::string encodeFrame(std::string_view body) {
  std::string out = "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  out.append(body);
  return out;
}

}  // namespace stitch::protocol
