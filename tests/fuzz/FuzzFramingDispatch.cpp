// libFuzzer target over the whole input path: bytes -> Content-Length framing -> JSON-RPC
// classification -> dispatch into a real Server. Any crash, sanitizer report or hang is a
// bug; the host must answer garbage with errors and carry on. Jobs are not started (no
// runner), so the fuzzer exercises the protocol, not the harness. An input that starts with
// "#joblog\n" is a job log's text instead, for the reader openJobLog uses (a log is a file
// from anyone); both kinds share one corpus, so the fuzzer mixes them.
#include "agents/JobLog.h"
#include "protocol/Framing.h"
#include "server/Logger.h"
#include "server/Server.h"

#include <boost/asio/thread_pool.hpp>

#include <cstdint>

namespace {

class DiscardOutput final : public stitch::server::Output {
public:
  void send(const stitch::protocol::json& message) override { (void)stitch::protocol::serialize(message); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static bool quiet = [] {
    stitch::server::Logger::instance().setLevel(stitch::server::LogLevel::Error);
    stitch::server::Logger::instance().openFile("/dev/null");
    return true;
  }();
  (void)quiet;
  constexpr std::string_view kJobLog = "#joblog\n";
  std::string_view input(reinterpret_cast<const char*>(data), size);
  if (input.substr(0, kJobLog.size()) == kJobLog) {
    (void)stitch::agents::parseJobLog(input.substr(kJobLog.size()), "fuzz.jsonl");
    return 0;
  }
  static boost::asio::thread_pool pool(1);
  DiscardOutput output;
  stitch::server::HostConfig config;
  config.jobsDir = "/tmp/stitch-fuzz-jobs";
  stitch::server::Server server(output, pool, config,
                                [](const stitch::protocol::OptimizeParams&, const stitch::server::HostConfig&) {
                                  return std::unique_ptr<stitch::agents::JobRunner>();
                                });
  stitch::protocol::FrameLimits limits;
  limits.maxContentLength = 1 << 16;
  stitch::protocol::ContentLengthDecoder decoder(limits);
  // Feed in two pieces so that split reads are covered too.
  std::size_t half = size / 2;
  for (auto piece : {input.substr(0, half), input.substr(half)}) {
    decoder.feed(piece);
    while (auto frame = decoder.next()) {
      if (server.finished()) return 0;
      if (frame->kind == stitch::protocol::Frame::Kind::Message) server.handleBody(frame->text);
      else server.handleFrameProblem(frame->text, frame->refusedLength > 0);
    }
  }
  return 0;
}
