// Pins the providers' wire formats and the client's failure policy against the stand-in
// provider: streamed and whole answers of both APIs, retries on 429 (Retry-After), 500, 529,
// dropped and garbled streams, no retry on 401, timeouts, cancellation, and a key that never
// shows up in an error.
#include "FakeProvider.h"
#include "agents/llm/ChatClient.h"

#include <gtest/gtest.h>

#include <thread>

using namespace stitch::agents;
using namespace stitch::agents::llm;
using stitch::fake::FakeProvider;
using Clock = std::chrono::steady_clock;

namespace {

const char* kKey = "sk-test-0123456789abcdef";

struct Fixture {
  FakeProvider server;
  std::vector<std::string> logs;

  ProviderSettings settings(ProviderKind kind, bool stream = true) {
    ProviderSettings s;
    s.kind = kind;
    s.baseUrl = server.baseUrl();
    s.model = "test-model";
    s.apiKey = Secret(kKey);
    s.stream = stream;
    s.backoffBase = std::chrono::milliseconds(10);
    s.connectTimeout = std::chrono::milliseconds(2000);
    s.totalTimeout = std::chrono::milliseconds(5000);
    return s;
  }
  ChatResult ask(const ProviderSettings& s, const CancelToken& cancel = CancelToken()) {
    ChatClient client(s, [this](const std::string& level, const std::string& m) { logs.push_back(level + ": " + m); });
    return client.complete({"be brief", {{"user", "say hello"}}}, cancel);
  }
};

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

const std::string kText = "Hello from the model. It writes CUDA:\n```cuda\n__global__ void k() {}\n```\n";

TEST(ChatClient, OpenAiStreamAssemblesTextUsageAndStopReason) {
  Fixture f;
  f.server.push(stitch::fake::openAiStream(kText, 120, 45));
  auto r = f.ask(f.settings(ProviderKind::OpenAi));
  ASSERT_TRUE(r.ok()) << r.error->message;
  EXPECT_EQ(r.answer->text, kText);
  EXPECT_EQ(r.answer->usage.input, 120);
  EXPECT_EQ(r.answer->usage.output, 45);
  EXPECT_EQ(r.answer->stopReason, "stop");
  auto req = f.server.requests().at(0);
  EXPECT_EQ(req.path, "/v1/chat/completions");
  EXPECT_EQ(req.headers["authorization"], std::string("Bearer ") + kKey);
  EXPECT_EQ(req.body["model"], "test-model");
  EXPECT_EQ(req.body["stream"], true);
  EXPECT_EQ(req.body["stream_options"]["include_usage"], true);
  EXPECT_EQ(req.body["messages"][0]["role"], "system");
  EXPECT_EQ(req.body["messages"][1]["content"], "say hello");
}

TEST(ChatClient, OpenAiWholeAnswer) {
  Fixture f;
  f.server.push(stitch::fake::openAiWhole(kText, 7, 3));
  auto r = f.ask(f.settings(ProviderKind::OpenAi, false));
  ASSERT_TRUE(r.ok()) << r.error->message;
  EXPECT_EQ(r.answer->text, kText);
  EXPECT_EQ(r.answer->usage.input, 7);
  EXPECT_EQ(f.server.requests().at(0).body["stream"], false);
}

TEST(ChatClient, AnthropicStreamReadsUsageFromStartAndDelta) {
  Fixture f;
  f.server.push(stitch::fake::anthropicStream(kText, 25, 15, "max_tokens"));
  auto r = f.ask(f.settings(ProviderKind::Anthropic));
  ASSERT_TRUE(r.ok()) << r.error->message;
  EXPECT_EQ(r.answer->text, kText);
  EXPECT_EQ(r.answer->usage.input, 25);
  EXPECT_EQ(r.answer->usage.output, 15);
  EXPECT_TRUE(r.answer->truncated());
  auto req = f.server.requests().at(0);
  EXPECT_EQ(req.path, "/v1/messages");
  EXPECT_EQ(req.headers["x-api-key"], kKey);
  EXPECT_EQ(req.headers["anthropic-version"], "2023-06-01");
  EXPECT_EQ(req.headers.count("authorization"), 0u);
  EXPECT_EQ(req.body["system"], "be brief");
  EXPECT_EQ(req.body["messages"].size(), 1u);
}

TEST(ChatClient, AnthropicWholeAnswer) {
  Fixture f;
  f.server.push(stitch::fake::anthropicWhole(kText, 9, 4));
  auto r = f.ask(f.settings(ProviderKind::Anthropic, false));
  ASSERT_TRUE(r.ok()) << r.error->message;
  EXPECT_EQ(r.answer->text, kText);
  EXPECT_EQ(r.answer->usage.output, 4);
}

TEST(ChatClient, RateLimitWaitsForRetryAfter) {
  Fixture f;
  f.server.push(stitch::fake::errorReply(429, R"({"error":{"type":"rate_limit_error","message":"slow down"}})", "1"));
  f.server.push(stitch::fake::openAiStream("ok"));
  const auto start = Clock::now();
  auto r = f.ask(f.settings(ProviderKind::OpenAi));
  ASSERT_TRUE(r.ok()) << r.error->message;
  EXPECT_GE(since(start), 0.95);
  EXPECT_LT(since(start), 5.0);
  EXPECT_EQ(r.attempts, 2);
  ASSERT_EQ(f.logs.size(), 1u);
  EXPECT_NE(f.logs[0].find("HTTP 429"), std::string::npos) << f.logs[0];
  EXPECT_NE(f.logs[0].find("retrying in 1.0 s as the server asked"), std::string::npos) << f.logs[0];
}

TEST(ChatClient, ServerErrorIsRetriedWithBackoff) {
  Fixture f;
  f.server.push(stitch::fake::errorReply(500, R"({"error":{"message":"internal"}})"));
  f.server.push(stitch::fake::errorReply(503, "<html>unavailable</html>"));
  f.server.push(stitch::fake::openAiStream("third time"));
  auto r = f.ask(f.settings(ProviderKind::OpenAi));
  ASSERT_TRUE(r.ok()) << r.error->message;
  EXPECT_EQ(r.answer->text, "third time");
  EXPECT_EQ(r.attempts, 3);
}

TEST(ChatClient, AnthropicOverloadedIsRetried) {
  Fixture f;
  f.server.push(stitch::fake::errorReply(529, R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})"));
  f.server.push(stitch::fake::anthropicStream("after overload"));
  auto r = f.ask(f.settings(ProviderKind::Anthropic));
  ASSERT_TRUE(r.ok()) << r.error->message;
  EXPECT_EQ(r.answer->text, "after overload");
  ASSERT_EQ(f.logs.size(), 1u);
  EXPECT_NE(f.logs[0].find("overloaded_error: Overloaded"), std::string::npos) << f.logs[0];
}

TEST(ChatClient, AnthropicOverloadedEventMidStreamIsRetried) {
  Fixture f;
  auto bad = stitch::fake::anthropicStream("partial");
  const auto cut = bad.body.find("event: content_block_stop");
  bad.body = bad.body.substr(0, cut) +
             "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
  f.server.push(bad);
  f.server.push(stitch::fake::anthropicStream("whole"));
  auto r = f.ask(f.settings(ProviderKind::Anthropic));
  ASSERT_TRUE(r.ok()) << r.error->message;
  EXPECT_EQ(r.answer->text, "whole");
}

TEST(ChatClient, UnauthorizedIsNotRetriedAndTheEchoedKeyIsScrubbed) {
  Fixture f;
  f.server.push(stitch::fake::errorReply(
      401, std::string(R"({"error":{"type":"invalid_request_error","message":"Incorrect API key provided: )") + kKey + "\"}}"));
  auto r = f.ask(f.settings(ProviderKind::OpenAi));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.attempts, 1);
  EXPECT_EQ(r.error->httpStatus, 401);
  EXPECT_EQ(r.error->message.find(kKey), std::string::npos) << r.error->message;
  EXPECT_NE(r.error->message.find("[redacted]"), std::string::npos) << r.error->message;
}

TEST(ChatClient, StalledConnectionHitsTheTotalTimeout) {
  Fixture f;
  auto stalled = stitch::fake::openAiStream("never arrives");
  stalled.stall = std::chrono::milliseconds(5000);
  f.server.push(stalled);
  auto s = f.settings(ProviderKind::OpenAi);
  s.totalTimeout = std::chrono::milliseconds(400);
  s.maxAttempts = 1;
  const auto start = Clock::now();
  auto r = f.ask(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error->kind, ChatError::Kind::Timeout) << r.error->message;
  EXPECT_LT(since(start), 2.0);
}

TEST(ChatClient, ConnectionResetMidStreamIsRetried) {
  Fixture f;
  auto dropped = stitch::fake::openAiStream("this answer is cut off halfway through the stream");
  dropped.dropAfter = dropped.body.size() / 2;
  f.server.push(dropped);
  f.server.push(stitch::fake::openAiStream("complete"));
  auto r = f.ask(f.settings(ProviderKind::OpenAi));
  ASSERT_TRUE(r.ok()) << r.error->message;
  EXPECT_EQ(r.answer->text, "complete");
  ASSERT_EQ(f.logs.size(), 1u);
  EXPECT_NE(f.logs[0].find("connection"), std::string::npos) << f.logs[0];
}

TEST(ChatClient, ConnectionResetWithoutRetriesIsAConnectionError) {
  Fixture f;
  auto dropped = stitch::fake::anthropicStream("cut off");
  dropped.dropAfter = 200;
  f.server.push(dropped);
  auto s = f.settings(ProviderKind::Anthropic);
  s.maxAttempts = 1;
  auto r = f.ask(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error->kind, ChatError::Kind::Connection) << r.error->message;
  EXPECT_TRUE(r.error->retryable);
}

TEST(ChatClient, MalformedSseLineIsReportedWithTheLine) {
  Fixture f;
  auto bad = stitch::fake::openAiStream("garbled");
  bad.body.insert(bad.body.find("data: ", 10), "dta: {\"oops\": true}\n");
  f.server.push(bad);
  auto s = f.settings(ProviderKind::OpenAi);
  s.maxAttempts = 1;
  auto r = f.ask(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error->kind, ChatError::Kind::Protocol);
  EXPECT_NE(r.error->message.find("malformed server-sent event at line"), std::string::npos) << r.error->message;
  EXPECT_NE(r.error->message.find("dta: {"), std::string::npos) << r.error->message;
}

TEST(ChatClient, TruncatedJsonBodyIsAProtocolErrorThenRetried) {
  Fixture f;
  auto whole = stitch::fake::openAiWhole("fine");
  auto truncated = whole;
  truncated.body = whole.body.substr(0, whole.body.size() / 2);
  f.server.push(truncated);
  f.server.push(whole);
  auto s = f.settings(ProviderKind::OpenAi, false);
  auto r = f.ask(s);
  ASSERT_TRUE(r.ok()) << r.error->message;
  EXPECT_EQ(r.attempts, 2);
  ASSERT_EQ(f.logs.size(), 1u);
  EXPECT_NE(f.logs[0].find("the answer is not JSON"), std::string::npos) << f.logs[0];
}

TEST(ChatClient, StreamWithoutEndMarkerIsCutOff) {
  Fixture f;
  auto open = stitch::fake::openAiStream("no done");
  open.body = open.body.substr(0, open.body.find("data: [DONE]"));
  f.server.push(open);
  auto s = f.settings(ProviderKind::OpenAi);
  s.maxAttempts = 1;
  auto r = f.ask(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error->message.find("ended before its end marker"), std::string::npos) << r.error->message;
}

TEST(ChatClient, CancelAbortsAStalledTransfer) {
  Fixture f;
  auto stalled = stitch::fake::openAiStream("never");
  stalled.stall = std::chrono::milliseconds(10000);
  f.server.push(stalled);
  CancelSource source;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    source.cancel();
  });
  const auto start = Clock::now();
  auto r = f.ask(f.settings(ProviderKind::OpenAi), source.token());
  canceller.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error->kind, ChatError::Kind::Cancelled);
  EXPECT_LT(since(start), 2.5);
}

TEST(ChatClient, RefusedConnectionIsRetriedThenGivenUp) {
  Fixture f;
  auto s = f.settings(ProviderKind::OpenAi);
  s.baseUrl = "http://127.0.0.1:1/v1";  // nothing listens on port 1
  s.maxAttempts = 3;
  auto r = f.ask(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error->kind, ChatError::Kind::Connection);
  EXPECT_EQ(r.attempts, 3);
  EXPECT_NE(r.error->message.find("gave up after 3 attempts"), std::string::npos) << r.error->message;
}

}  // namespace
