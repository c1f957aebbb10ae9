// Pins the LSP framing rules: split input, caps, garbage headers, delimited transcripts.
#include "protocol/Framing.h"

#include <gtest/gtest.h>

#include <vector>

using namespace stitch::protocol;

namespace {

std::vector<Frame> drain(FrameDecoder& d) {
  std::vector<Frame> out;
  while (auto f = d.next()) out.push_back(std::move(*f));
  return out;
}

}  // namespace

TEST(ContentLengthDecoder, DecodesMessagesSplitAcrossReads) {
  ContentLengthDecoder d;
  std::string wire = encodeFrame("{\"a\":1}") + encodeFrame("{\"b\":22}");
  std::vector<Frame> frames;
  for (char c : wire) {  // one byte at a time: the worst split there is
    d.feed(std::string_view(&c, 1));
    for (auto& f : drain(d)) frames.push_back(f);
  }
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].text, "{\"a\":1}");
  EXPECT_EQ(frames[1].text, "{\"b\":22}");
  EXPECT_FALSE(d.midMessage());
}

TEST(ContentLengthDecoder, AcceptsOtherHeadersAndBareNewlines) {
  ContentLengthDecoder d;
  d.feed("Content-Type: application/vscode-jsonrpc; charset=utf-8\ncontent-length: 2\n\n{}");
  auto frames = drain(d);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].kind, Frame::Kind::Message);
  EXPECT_EQ(frames[0].text, "{}");
}

TEST(ContentLengthDecoder, SkipsGarbageHeaderLinesAndKeepsGoing) {
  ContentLengthDecoder d;
  d.feed("hello there\r\n" + encodeFrame("{}"));
  auto frames = drain(d);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].kind, Frame::Kind::Problem);
  EXPECT_NE(frames[0].text.find("garbage"), std::string::npos);
  EXPECT_EQ(frames[1].text, "{}");
}

TEST(ContentLengthDecoder, RefusesOversizedMessageWithoutBufferingIt) {
  FrameLimits limits;
  limits.maxContentLength = 16;
  ContentLengthDecoder d(limits);
  d.feed("Content-Length: 1000\r\n\r\n");
  auto frames = drain(d);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].kind, Frame::Kind::Problem);
  EXPECT_EQ(frames[0].refusedLength, 1000u);
  // The body streams past in pieces and is discarded; the next message still decodes.
  d.feed(std::string(600, 'x'));
  EXPECT_TRUE(drain(d).empty());
  d.feed(std::string(400, 'x') + encodeFrame("{}"));
  frames = drain(d);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].text, "{}");
}

TEST(ContentLengthDecoder, HugeDeclaredLengthIsRefusedNotAllocated) {
  ContentLengthDecoder d;
  d.feed("Content-Length: 99999999999999999999999\r\n\r\n");
  auto frames = drain(d);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].kind, Frame::Kind::Problem);
  EXPECT_GT(frames[0].refusedLength, 1u << 30);
}

TEST(ContentLengthDecoder, EndlessHeaderLineIsDroppedOnce) {
  FrameLimits limits;
  limits.maxHeaderLine = 64;
  ContentLengthDecoder d(limits);
  d.feed(std::string(100, 'a'));
  auto frames = drain(d);
  ASSERT_EQ(frames.size(), 1u);
  d.feed(std::string(100, 'a'));
  EXPECT_TRUE(drain(d).empty());  // reported once, not per chunk
  d.feed("\r\n" + encodeFrame("{}"));
  frames = drain(d);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].text, "{}");
}

TEST(ContentLengthDecoder, HeaderWithoutLengthIsAProblem) {
  ContentLengthDecoder d;
  d.feed("Content-Type: x\r\n\r\n" + encodeFrame("[]"));
  auto frames = drain(d);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].kind, Frame::Kind::Problem);
  EXPECT_EQ(frames[1].text, "[]");
}

TEST(ContentLengthDecoder, ReportsInputEndingMidMessage) {
  ContentLengthDecoder d;
  d.feed("Content-Length: 10\r\n\r\n{\"a\"");
  EXPECT_TRUE(drain(d).empty());
  EXPECT_TRUE(d.midMessage());
}

TEST(DelimitedDecoder, SplitsOnDashesAndSkipsComments) {
  DelimitedDecoder d;
  d.feed("# a comment\n{\"a\":\n1}\n---\n\n---\n{\"b\":2}");
  d.finish();
  auto frames = drain(d);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].text, "{\"a\":\n1}\n");
  EXPECT_EQ(frames[1].text, "{\"b\":2}\n");
}

TEST(Framing, EncodeCountsBytesNotCharacters) {
  EXPECT_EQ(encodeFrame("\"é\""), "Content-Length: 4\r\n\r\n\"é\"");
}
