// stdio reader and writer; see StdioTransport.h.
#include "server/StdioTransport.h"

#include "server/Logger.h"

#include <cerrno>
#include <cstdio>
#include <memory>
#include <unistd.h>

namespace stitch::server {

void StdioOutput::send(const protocol::json& message) {
  std::string frame = protocol::encodeFrame(protocol::serialize(message));
  std::lock_guard lock(mutex_);
  if (broken_) return;
  const char* p = frame.data();
  std::size_t left = frame.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      broken_ = true;
      logError("cannot write to the client; dropping further output");
      return;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

void readInput(int fd, const InputOptions& options, const std::function<void(protocol::Frame)>& onFrame,
               const std::function<void(bool midMessage)>& onEnd) {
  std::unique_ptr<protocol::FrameDecoder> decoder;
  if (options.delimited) decoder = std::make_unique<protocol::DelimitedDecoder>(options.limits);
  else decoder = std::make_unique<protocol::ContentLengthDecoder>(options.limits);

  std::FILE* mirror = nullptr;
  if (options.mirrorFile) {
    mirror = std::fopen(options.mirrorFile->c_str(), "w");
    if (!mirror) logError("cannot open the input mirror file " + *options.mirrorFile);
  }
  char buffer[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (mirror) {
      std::fwrite(buffer, 1, static_cast<std::size_t>(n), mirror);
      std::fflush(mirror);
    }
    decoder->feed(std::string_view(buffer, static_cast<std::size_t>(n)));
    while (auto frame = decoder->next()) onFrame(std::move(*frame));
  }
  decoder->finish();
  while (auto frame = decoder->next()) onFrame(std::move(*frame));
  if (mirror) std::fclose(mirror);
  onEnd(decoder->midMessage());
}

}  // namespace stitch::server
