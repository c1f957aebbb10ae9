// Pins reply-exactly-once: a dropped reply becomes an internal error, a second is refused.
#include "server/Reply.h"

#include <gtest/gtest.h>

using namespace stitch;

TEST(Reply, DroppedReplySendsInternalError) {
  std::vector<protocol::json> sent;
  {
    server::Reply r(7, "stitchcuda/thing", [&](const protocol::RequestId&, protocol::json m) { sent.push_back(m); });
  }
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0]["id"], 7);
  EXPECT_EQ(sent[0]["error"]["code"], -32603);
  EXPECT_NE(sent[0]["error"]["message"].get<std::string>().find("stitchcuda/thing"), std::string::npos);
}

TEST(Reply, SecondReplyIsRefused) {
  std::vector<protocol::json> sent;
  server::Reply r(1, "m", [&](const protocol::RequestId&, protocol::json m) { sent.push_back(m); });
  r(protocol::json{{"ok", true}});
  r.error(protocol::ErrorCode::InternalError, "again");
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_TRUE(sent[0].contains("result"));
}

TEST(Reply, MovedFromReplyOwesNothing) {
  std::vector<protocol::json> sent;
  {
    server::Reply a("x", "m", [&](const protocol::RequestId&, protocol::json m) { sent.push_back(m); });
    server::Reply b(std::move(a));
    b(nullptr);
  }
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0]["id"], "x");
}
