// Pins document versions and incremental edits in UTF-16 and UTF-8 positions.
#include "server/DocumentStore.h"

#include <gtest/gtest.h>

using namespace stitch;
using server::DocumentStore;
using server::PositionEncoding;

namespace {

protocol::DidChangeParams edit(int version, protocol::Range r, std::string text) {
  protocol::DidChangeParams p;
  p.uri = "file:///a.py";
  p.version = version;
  p.contentChanges.push_back({r, std::move(text)});
  return p;
}

}  // namespace

TEST(DocumentStore, IncrementalEditsAndVersions) {
  DocumentStore store;
  store.open({"file:///a.py", "python", 1, "x = 1\ny = 2\n"});
  store.change(edit(2, {{1, 4}, {1, 5}}, "20"));
  auto doc = store.get("file:///a.py");
  ASSERT_TRUE(doc);
  EXPECT_EQ(doc->text, "x = 1\ny = 20\n");
  EXPECT_EQ(doc->version, 2);
  store.close("file:///a.py");
  EXPECT_FALSE(store.get("file:///a.py"));
}

TEST(DocumentStore, Utf16CountsSurrogatePairs) {
  DocumentStore store;
  // "😀" is one code point, four UTF-8 bytes and two UTF-16 code units.
  store.open({"file:///a.py", "python", 1, "a😀b\n"});
  store.change(edit(2, {{0, 3}, {0, 4}}, "c"));
  EXPECT_EQ(store.get("file:///a.py")->text, "a😀c\n");
}

TEST(DocumentStore, Utf8CountsBytes) {
  DocumentStore store;
  store.setEncoding(PositionEncoding::Utf8);
  store.open({"file:///a.py", "python", 1, "é=1\n"});
  store.change(edit(2, {{0, 2}, {0, 3}}, ":"));
  EXPECT_EQ(store.get("file:///a.py")->text, "é:1\n");
}

TEST(DocumentStore, BadRangeLeavesDocumentUnchanged) {
  DocumentStore store;
  store.open({"file:///a.py", "python", 1, "abc\n"});
  EXPECT_THROW(store.change(edit(2, {{5, 0}, {5, 1}}, "x")), protocol::ParamsError);
  EXPECT_EQ(store.get("file:///a.py")->text, "abc\n");
  EXPECT_EQ(store.get("file:///a.py")->version, 1);
}

TEST(DocumentStore, PositionPastLineEndClamps) {
  auto off = DocumentStore::offsetOf("ab\ncd", {0, 99}, PositionEncoding::Utf16);
  ASSERT_TRUE(off);
  EXPECT_EQ(*off, 2u);
  EXPECT_EQ(DocumentStore::endOf("ab\ncd", PositionEncoding::Utf16), (protocol::Position{1, 2}));
}

TEST(DocumentStore, ChangeToUnknownDocumentThrows) {
  DocumentStore store;
  EXPECT_THROW(store.change(edit(1, {{0, 0}, {0, 0}}, "x")), protocol::ParamsError);
}
