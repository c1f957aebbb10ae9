// The stand-in provider; see FakeProvider.h. Wire formats as the providers document them:
// OpenAI `chat.completion.chunk` events ending in `data: [DONE]` with usage in a last chunk whose
// choices are empty; Anthropic message_start / content_block_* / ping / message_delta / message_stop.
#include "FakeProvider.h"

#include <cctype>

namespace stitch::fake {
namespace {

using nlohmann::json;

std::vector<std::string> pieces(const std::string& text, std::size_t n) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < text.size(); i += n) out.push_back(text.substr(i, n));
  if (out.empty()) out.push_back("");
  return out;
}

ScriptedReply sse(std::string body) {
  ScriptedReply r;
  r.contentType = "text/event-stream";
  r.body = std::move(body);
  r.chunked = true;
  return r;
}

}  // namespace

FakeProvider::FakeProvider() {
  auto handler = [this](const httplib::Request& req, httplib::Response& res) { handle(req, res); };
  server_.Post("/v1/chat/completions", handler);
  server_.Post("/v1/messages", handler);
  port_ = server_.bind_to_any_port("127.0.0.1");
  thread_ = std::thread([this] { server_.listen_after_bind(); });
  while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

FakeProvider::~FakeProvider() {
  stopping_ = true;
  server_.stop();
  thread_.join();
}

void FakeProvider::push(ScriptedReply reply) {
  std::lock_guard lock(mutex_);
  replies_.push_back(std::move(reply));
}

std::vector<RecordedRequest> FakeProvider::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

std::size_t FakeProvider::pending() const {
  std::lock_guard lock(mutex_);
  return replies_.size();
}

void FakeProvider::handle(const httplib::Request& req, httplib::Response& res) {
  ScriptedReply reply;
  {
    std::lock_guard lock(mutex_);
    RecordedRequest r{req.path, {}, json::parse(req.body, nullptr, false)};
    for (const auto& [k, v] : req.headers) {
      std::string name = k;
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      r.headers[name] = v;
    }
    requests_.push_back(std::move(r));
    if (replies_.empty()) {
      res.status = 500;
      res.set_content(R"({"error":{"type":"test_error","message":"no scripted reply left"}})", "application/json");
      return;
    }
    reply = std::move(replies_.front());
    replies_.pop_front();
  }
  res.status = reply.status;
  for (const auto& [k, v] : reply.headers) res.set_header(k, v);
  if (!reply.chunked && !reply.dropAfter && reply.stall.count() == 0) {
    res.set_content(reply.body, reply.contentType);
    return;
  }
  res.set_chunked_content_provider(reply.contentType, [this, reply](std::size_t offset, httplib::DataSink& sink) {
    if (offset == 0 && reply.stall.count() > 0) {
      const auto until = std::chrono::steady_clock::now() + reply.stall;
      while (std::chrono::steady_clock::now() < until && !stopping_)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::size_t sent = offset;
    for (const auto& p : pieces(reply.body.substr(offset), reply.pieceBytes)) {
      if (reply.dropAfter && sent + p.size() > *reply.dropAfter) {
        sink.write(p.data(), *reply.dropAfter - sent);
        return false;  // httplib closes the socket: the client sees the stream cut off
      }
      if (!sink.write(p.data(), p.size())) return false;
      sent += p.size();
    }
    sink.done();
    return true;
  });
}

ScriptedReply openAiStream(const std::string& text, int inputTokens, int outputTokens, const std::string& finish) {
  std::string body;
  auto chunk = [&](const json& choices, const json& usage) {
    json j{{"id", "chatcmpl-test"}, {"object", "chat.completion.chunk"}, {"created", 1732240000},
           {"model", "test-model"}, {"system_fingerprint", "fp_test"}, {"choices", choices}};
    if (!usage.is_null()) j["usage"] = usage;
    body += "data: " + j.dump() + "\n\n";
  };
  chunk(json::array({{{"index", 0}, {"delta", {{"role", "assistant"}, {"content", ""}}}, {"logprobs", nullptr}, {"finish_reason", nullptr}}}),
        nullptr);
  for (const auto& p : pieces(text, 23))
    chunk(json::array({{{"index", 0}, {"delta", {{"content", p}}}, {"logprobs", nullptr}, {"finish_reason", nullptr}}}), nullptr);
  chunk(json::array({{{"index", 0}, {"delta", json::object()}, {"logprobs", nullptr}, {"finish_reason", finish}}}), nullptr);
  chunk(json::array(), {{"prompt_tokens", inputTokens}, {"completion_tokens", outputTokens},
                        {"total_tokens", inputTokens + outputTokens}});
  body += "data: [DONE]\n\n";
  return sse(body);
}

ScriptedReply openAiWhole(const std::string& text, int inputTokens, int outputTokens) {
  json j{{"id", "chatcmpl-test"},
         {"object", "chat.completion"},
         {"created", 1732240000},
         {"model", "test-model"},
         {"choices", json::array({{{"index", 0},
                                   {"message", {{"role", "assistant"}, {"content", text}, {"refusal", nullptr}}},
                                   {"logprobs", nullptr},
                                   {"finish_reason", "stop"}}})},
         {"usage", {{"prompt_tokens", inputTokens}, {"completion_tokens", outputTokens}, {"total_tokens", inputTokens + outputTokens}}}};
  ScriptedReply r;
  r.body = j.dump();
  return r;
}

ScriptedReply anthropicStream(const std::string& text, int inputTokens, int outputTokens, const std::string& stop) {
  std::string body;
  auto event = [&](const std::string& type, const json& data) { body += "event: " + type + "\ndata: " + data.dump() + "\n\n"; };
  event("message_start", {{"type", "message_start"},
                          {"message", {{"id", "msg_test"}, {"type", "message"}, {"role", "assistant"}, {"content", json::array()},
                                       {"model", "test-model"}, {"stop_reason", nullptr}, {"stop_sequence", nullptr},
                                       {"usage", {{"input_tokens", inputTokens}, {"output_tokens", 1}}}}}});
  event("content_block_start", {{"type", "content_block_start"}, {"index", 0}, {"content_block", {{"type", "text"}, {"text", ""}}}});
  event("ping", {{"type", "ping"}});
  for (const auto& p : pieces(text, 23))
    event("content_block_delta", {{"type", "content_block_delta"}, {"index", 0}, {"delta", {{"type", "text_delta"}, {"text", p}}}});
  event("content_block_stop", {{"type", "content_block_stop"}, {"index", 0}});
  event("message_delta", {{"type", "message_delta"}, {"delta", {{"stop_reason", stop}, {"stop_sequence", nullptr}}},
                          {"usage", {{"output_tokens", outputTokens}}}});
  event("message_stop", {{"type", "message_stop"}});
  return sse(body);
}

ScriptedReply anthropicWhole(const std::string& text, int inputTokens, int outputTokens) {
  json j{{"id", "msg_test"}, {"type", "message"}, {"role", "assistant"}, {"model", "test-model"},
         {"content", json::array({{{"type", "text"}, {"text", text}}})}, {"stop_reason", "end_turn"},
         {"stop_sequence", nullptr}, {"usage", {{"input_tokens", inputTokens}, {"output_tokens", outputTokens}}}};
  ScriptedReply r;
  r.body = j.dump();
  return r;
}

ScriptedReply errorReply(int status, const std::string& body, std::optional<std::string> retryAfter) {
  ScriptedReply r;
  r.status = status;
  r.body = body;
  if (retryAfter) r.headers.push_back({"Retry-After", *retryAfter});
  return r;
}

}  // namespace stitch::fake
