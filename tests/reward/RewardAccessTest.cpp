// Pins who may use serve-reward: which addresses are loopback (anything else needs a token), and which
// Authorization headers carry the token.
#include "server/RewardAccess.h"

#include <gtest/gtest.h>

using stitch::server::bearerMatches;
using stitch::server::isLoopbackHost;

TEST(RewardAccess, OnlyLoopbackAddressesAreLoopback) {
  for (const char* host : {"localhost", "127.0.0.1", "127.1.2.3", "::1", "[::1]", "::ffff:127.0.0.1"})
    EXPECT_TRUE(isLoopbackHost(host)) << host;
  for (const char* host : {"0.0.0.0", "::", "[::]", "10.0.0.7", "128.0.0.1", "::ffff:10.0.0.1", "example.com",
                           "localhost.example.com", "", "127.0.0.1 "})
    EXPECT_FALSE(isLoopbackHost(host)) << host;
}

TEST(RewardAccess, TheBearerTokenMustMatchExactly) {
  EXPECT_TRUE(bearerMatches("Bearer s3cret", "s3cret"));
  EXPECT_TRUE(bearerMatches("bearer s3cret", "s3cret"));  // the scheme's name is case-insensitive
  for (const char* header : {"", "Bearer", "Bearer ", "Bearer s3cre", "Bearer s3cret!", "Bearer S3cret", "Basic s3cret",
                             "Bearer  s3cret", "s3cret"})
    EXPECT_FALSE(bearerMatches(header, "s3cret")) << header;
  EXPECT_FALSE(bearerMatches("Bearer ", ""));  // no token configured never matches
}
