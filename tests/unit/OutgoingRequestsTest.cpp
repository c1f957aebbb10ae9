// Pins the bounded table of server-to-client requests.
#include "server/OutgoingRequests.h"

#include "TestOutput.h"

#include <gtest/gtest.h>

using namespace stitch;

TEST(OutgoingRequests, ResolvesByIdAndForgets) {
  test::RecordingOutput out;
  server::OutgoingRequests table(out);
  std::optional<protocol::json> got;
  table.send("workspace/applyEdit", {{"edit", {}}}, [&](auto result, auto error) {
    ASSERT_FALSE(error);
    got = result;
  });
  auto sent = out.messages().at(0);
  EXPECT_EQ(sent["method"], "workspace/applyEdit");
  auto response = protocol::classify({{"jsonrpc", "2.0"}, {"id", sent["id"]}, {"result", {{"applied", true}}}});
  EXPECT_TRUE(table.resolve(response));
  ASSERT_TRUE(got);
  EXPECT_EQ((*got)["applied"], true);
  EXPECT_FALSE(table.resolve(response));  // answered once only
  EXPECT_EQ(table.pending(), 0u);
}

TEST(OutgoingRequests, DropsOldestBeyondCapacity) {
  test::RecordingOutput out;
  server::OutgoingRequests table(out, 2);
  int dropped = 0;
  for (int i = 0; i < 5; ++i)
    table.send("m", nullptr, [&](auto, std::optional<protocol::RpcError> e) {
      if (e) ++dropped;
    });
  EXPECT_EQ(table.pending(), 2u);
  EXPECT_EQ(dropped, 3);
}

TEST(OutgoingRequests, IgnoresClientIds) {
  test::RecordingOutput out;
  server::OutgoingRequests table(out);
  EXPECT_FALSE(table.resolve(protocol::classify({{"jsonrpc", "2.0"}, {"id", 1}, {"result", nullptr}})));
  EXPECT_FALSE(table.resolve(protocol::classify({{"jsonrpc", "2.0"}, {"id", "sx"}, {"result", nullptr}})));
}
