// Pins incremental SSE parsing: any split of the bytes gives the same events; comments, CRLF
// and multi-line data; a malformed line stops the stream with its text; and the retry delays.
#include "agents/llm/Backoff.h"
#include "agents/llm/HttpPost.h"
#include "agents/llm/SseParser.h"

#include <gtest/gtest.h>

using namespace stitch::agents::llm;
using namespace std::chrono_literals;

namespace {

const std::string kStream =
    ": keep-alive\r\n"
    "event: message_start\r\ndata: {\"a\":1}\r\n\r\n"
    "data: line one\ndata: line two\n\n"
    "id: 7\nretry: 100\ndata: [DONE]\n\n";

std::vector<SseEvent> parseInPieces(const std::string& text, std::size_t piece) {
  std::vector<SseEvent> events;
  SseParser p([&](const SseEvent& e) -> std::optional<std::string> {
    events.push_back(e);
    return std::nullopt;
  });
  for (std::size_t i = 0; i < text.size(); i += piece) EXPECT_FALSE(p.feed(text.substr(i, piece)));
  EXPECT_FALSE(p.finish());
  return events;
}

TEST(SseParser, EverySplitGivesTheSameEvents) {
  for (std::size_t piece : {1u, 2u, 3u, 5u, 8u, 13u, 1000u}) {
    auto events = parseInPieces(kStream, piece);
    ASSERT_EQ(events.size(), 3u) << "piece " << piece;
    EXPECT_EQ(events[0].event, "message_start");
    EXPECT_EQ(events[0].data, "{\"a\":1}");
    EXPECT_EQ(events[1].event, "");
    EXPECT_EQ(events[1].data, "line one\nline two");
    EXPECT_EQ(events[2].data, "[DONE]");
  }
}

TEST(SseParser, UnterminatedLastEventIsDispatchedAtTheEnd) {
  auto events = parseInPieces("data: tail", 4);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "tail");
}

TEST(SseParser, MalformedLineStopsTheStream) {
  int seen = 0;
  SseParser p([&](const SseEvent&) -> std::optional<std::string> {
    ++seen;
    return std::nullopt;
  });
  EXPECT_FALSE(p.feed("data: 1\n\n"));
  auto error = p.feed("{\"choices\": []}\n\ndata: 2\n\n");
  ASSERT_TRUE(error);
  EXPECT_EQ(*error, "malformed server-sent event at line 3: \"{\"choices\": []}\"");
  EXPECT_EQ(seen, 1);
  EXPECT_TRUE(p.feed("data: 3\n\n"));  // stays failed
}

TEST(SseParser, SinkErrorStopsTheStream) {
  SseParser p([](const SseEvent& e) -> std::optional<std::string> { return "refused " + e.data; });
  auto error = p.feed("data: x\n\n");
  ASSERT_TRUE(error);
  EXPECT_EQ(*error, "refused x");
}

TEST(Backoff, RetryAfterIsHonouredUpToTheCap) {
  EXPECT_EQ(backoffDelay(1, 3000ms, 1000ms, 60000ms, 0.9), 3000ms);
  EXPECT_EQ(backoffDelay(1, 600000ms, 1000ms, 60000ms, 0.9), 60000ms);
}

TEST(Backoff, ExponentialWithJitterInTheUpperHalf) {
  EXPECT_EQ(backoffDelay(1, std::nullopt, 1000ms, 60000ms, 0.0), 500ms);
  EXPECT_EQ(backoffDelay(1, std::nullopt, 1000ms, 60000ms, 1.0), 1000ms);
  EXPECT_EQ(backoffDelay(3, std::nullopt, 1000ms, 60000ms, 0.0), 2000ms);
  EXPECT_EQ(backoffDelay(3, std::nullopt, 1000ms, 60000ms, 1.0), 4000ms);
  EXPECT_EQ(backoffDelay(20, std::nullopt, 1000ms, 60000ms, 1.0), 60000ms);
}

TEST(Backoff, RetryAfterParsesSecondsAndDates) {
  EXPECT_EQ(parseRetryAfter("2"), 2000ms);
  EXPECT_EQ(parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT"), 0ms);  // in the past: at once
  EXPECT_FALSE(parseRetryAfter("soon"));
  EXPECT_FALSE(parseRetryAfter(""));
}

}  // namespace
