// Pins file:// URI conversion.
#include "server/Uri.h"

#include <gtest/gtest.h>

using namespace stitch::server;

TEST(Uri, RoundTripsPathsWithSpaces) {
  std::string path = "/home/me/my models/net #1.py";
  auto uri = pathToUri(path);
  EXPECT_EQ(uri, "file:///home/me/my%20models/net%20%231.py");
  EXPECT_EQ(uriToPath(uri), path);
}

TEST(Uri, RejectsOtherSchemesAndRemoteHosts) {
  EXPECT_FALSE(uriToPath("untitled:Untitled-1"));
  EXPECT_FALSE(uriToPath("file://server/share/x.py"));
  EXPECT_EQ(uriToPath("file://localhost/x.py"), "/x.py");
}
