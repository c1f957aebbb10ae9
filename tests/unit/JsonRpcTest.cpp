// Pins JSON-RPC message classification.
#include "protocol/JsonRpc.h"

#include <gtest/gtest.h>

using namespace stitch::protocol;

TEST(Classify, RequestNotificationResponse) {
  auto r = classify(json::parse(R"({"jsonrpc":"2.0","id":1,"method":"m","params":{}})"));
  EXPECT_EQ(r.kind, Incoming::Kind::Request);
  EXPECT_EQ(r.id, 1);
  auto n = classify(json::parse(R"({"jsonrpc":"2.0","method":"n"})"));
  EXPECT_EQ(n.kind, Incoming::Kind::Notification);
  EXPECT_TRUE(n.params.is_null());
  auto s = classify(json::parse(R"({"jsonrpc":"2.0","id":"s1","result":null})"));
  EXPECT_EQ(s.kind, Incoming::Kind::Response);
  ASSERT_TRUE(s.result.has_value());
  auto e = classify(json::parse(R"({"jsonrpc":"2.0","id":"s1","error":{"code":-32800,"message":"x"}})"));
  ASSERT_TRUE(e.error.has_value());
  EXPECT_EQ(e.error->code, ErrorCode::RequestCancelled);
}

TEST(Classify, InvalidShapesAreInvalidRequests) {
  for (const char* text : {R"([1,2])", R"(42)", R"({"id":1,"method":"m"})", R"({"jsonrpc":"2.0"})",
                           R"({"jsonrpc":"2.0","id":1,"method":7})", R"({"jsonrpc":"2.0","id":{},"method":"m"})",
                           R"({"jsonrpc":"2.0","id":1,"method":"m","params":3})", R"({"jsonrpc":"2.0","id":1})"}) {
    auto in = classify(json::parse(text));
    EXPECT_EQ(in.kind, Incoming::Kind::Invalid) << text;
    ASSERT_TRUE(in.error.has_value()) << text;
    EXPECT_EQ(in.error->code, ErrorCode::InvalidRequest) << text;
  }
}

TEST(Classify, InvalidRequestKeepsAReadableId) {
  auto in = classify(json::parse(R"({"jsonrpc":"2.0","id":5,"method":"m","params":"x"})"));
  EXPECT_EQ(in.id, 5);
}

TEST(Serialize, ReplacesInvalidUtf8InsteadOfThrowing) {
  json j = std::string("\xff\xfe");
  EXPECT_NO_THROW(serialize(j));
}

TEST(ExceedsShape, RefusesDeepNestingAndTooManyValuesBeforeAnyParse) {
  const ShapeLimits limits{4, 10};
  EXPECT_FALSE(exceedsShape(R"({"a":[[{"b":1}]]})", limits));
  EXPECT_EQ(exceedsShape(R"({"a":[[[{"b":1}]]]})", limits), "nested deeper than 4 levels");
  EXPECT_EQ(exceedsShape("[0,1,2,3,4,5,6,7,8,9,10]", limits), "more than 10 values");
  // Brackets, commas and escaped quotes inside strings are text, not structure.
  EXPECT_FALSE(exceedsShape(R"({"a":"[[[[[,,,,,,,,,,,\"[[[[["})", limits));
  EXPECT_FALSE(exceedsShape(std::string(1000, '[') + std::string(1000, ']'), ShapeLimits{1000, 2000}));
  EXPECT_TRUE(exceedsShape(std::string(1000000, '[') + std::string(1000000, ']')));
}
