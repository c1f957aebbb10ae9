// A stand-in LLM provider inside the test process (cpp-httplib on 127.0.0.1, a free port): it
// replays scripted answers in the providers' exact wire formats, and their failures — error
// statuses with Retry-After, stalls, connections dropped mid-stream — and records each request.
#pragma once

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace stitch::fake {

struct ScriptedReply {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string contentType = "application/json";
  std::string body;
  bool chunked = false;                   // sent as a chunked stream in small pieces (SSE)
  std::size_t pieceBytes = 7;             // piece size: splits lines and events at odd places
  std::optional<std::size_t> dropAfter;   // close the connection after this many body bytes
  std::chrono::milliseconds stall{0};     // wait this long before the first byte of the body
};

struct RecordedRequest {
  std::string path;
  std::map<std::string, std::string> headers;  // names lower-cased
  nlohmann::json body;
};

class FakeProvider {
public:
  FakeProvider();
  ~FakeProvider();
  void push(ScriptedReply reply);
  std::string baseUrl() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  std::vector<RecordedRequest> requests() const;
  std::size_t pending() const;

private:
  void handle(const httplib::Request& req, httplib::Response& res);

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;
  std::deque<ScriptedReply> replies_;
  std::vector<RecordedRequest> requests_;
};

// Answers in the providers' wire formats. `text` is the model's answer.
ScriptedReply openAiStream(const std::string& text, int inputTokens = 100, int outputTokens = 50,
                           const std::string& finish = "stop");
ScriptedReply openAiWhole(const std::string& text, int inputTokens = 100, int outputTokens = 50);
ScriptedReply anthropicStream(const std::string& text, int inputTokens = 100, int outputTokens = 50,
                              const std::string& stop = "end_turn");
ScriptedReply anthropicWhole(const std::string& text, int inputTokens = 100, int outputTokens = 50);
ScriptedReply errorReply(int status, const std::string& body, std::optional<std::string> retryAfter = std::nullopt);

}  // namespace stitch::fake
