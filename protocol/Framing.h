// Incremental decoders for the two input styles of the host: LSP base protocol
// (Content-Length framing) and the delimited transcript style (messages separated by
// "---" lines, "#" comments). Bytes are pushed in and frames pulled out; no I/O happens
// here, so stdio, the tests and the fuzzer all drive the same code.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace stitch::protocol {

struct FrameLimits {
  // A Content-Length above this is refused before anything is allocated for it. Messages are
  // dispatched one at a time, so this also bounds how long one message holds up the next; it
  // holds the largest model file the host reads (4 MiB) escaped for JSON (PROTOCOL.md).
  std::size_t maxContentLength = 8u << 20;
  // A header line longer than this is garbage; it is dropped as it streams in.
  std::size_t maxHeaderLine = 8192;
};

// One thing the decoder found: a complete message body, or a problem worth reporting
// (the decoder has already recovered from it and keeps going).
struct Frame {
  enum class Kind { Message, Problem };
  Kind kind = Kind::Message;
  std::string text;  // the body for Message, a human-readable description for Problem
  // For a refused oversized message: its declared length (so the caller can answer it).
  std::size_t refusedLength = 0;
};

class FrameDecoder {
public:
  virtual ~FrameDecoder() = default;
  virtual void feed(std::string_view bytes) = 0;
  // The next complete frame, if any.
  virtual std::optional<Frame> next() = 0;
  // Called once the input has ended: flushes what can still be decoded.
  virtual void finish() = 0;
  // True when the input ended (or would end now) inside a message.
  virtual bool midMessage() const = 0;
};

class ContentLengthDecoder final : public FrameDecoder {
public:
  explicit ContentLengthDecoder(FrameLimits limits = {}) : limits_(limits) {}
  void feed(std::string_view bytes) override;
  std::optional<Frame> next() override;
  void finish() override {}
  bool midMessage() const override;

private:
  enum class State { Headers, Body, Skipping };
  std::optional<Frame> parseHeaders();
  std::optional<Frame> takeBody();
  std::optional<Frame> skipBody();

  FrameLimits limits_;
  State state_ = State::Headers;
  std::string buffer_;
  std::optional<std::size_t> contentLength_;
  bool sawHeaderLine_ = false;
  bool droppingLongLine_ = false;
  std::size_t remaining_ = 0;  // body bytes still to read or to skip
};

class DelimitedDecoder final : public FrameDecoder {
public:
  explicit DelimitedDecoder(FrameLimits limits = {}) : limits_(limits) {}
  void feed(std::string_view bytes) override;
  std::optional<Frame> next() override;
  void finish() override;
  bool midMessage() const override;

private:
  std::optional<Frame> takeMessage();

  FrameLimits limits_;
  std::string pending_;  // bytes not yet split into lines
  std::string message_;  // lines of the message being collected
  bool finished_ = false;
  bool overflowed_ = false;
};

// The frame for one outgoing message body.
std::string encodeFrame(std::string_view body);

}  // namespace stitch::protocol
