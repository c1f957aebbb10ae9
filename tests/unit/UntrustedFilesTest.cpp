// Pins the confinement of paths named by data (job logs, candidates) and the capped, non-waiting
// reads: what the host refuses, and that it still takes a symlinked folder of the user's own.
#include "agents/JobLog.h"
#include "agents/UntrustedFiles.h"
#include "agents/program/ProgramFiles.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <sys/stat.h>

using namespace stitch;
namespace fs = std::filesystem;

namespace {

class UntrustedFilesTest : public ::testing::Test {
protected:
  void SetUp() override {
    base = fs::temp_directory_path() / ("stitch-untrusted-" + std::to_string(::getpid()));
    fs::remove_all(base);
    fs::create_directories(base / "inside" / "k");
    fs::create_directories(base / "outside");
    std::ofstream(base / "inside" / "ok.cu") << "ok";
    std::ofstream(base / "outside" / "secret.txt") << "secret";
  }
  void TearDown() override { fs::remove_all(base); }

  static std::string refusal(const std::function<void()>& f) {
    try {
      f();
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  }

  fs::path base;
};

TEST_F(UntrustedFilesTest, PlaceInsideRefusesEveryWayOut) {
  const fs::path in = base / "inside";
  fs::create_symlink(base / "outside", in / "escape");
  fs::create_symlink(base / "outside" / "new.txt", in / "k" / "dangling.cu");
  EXPECT_NE(refusal([&] { agents::placeInside(in, "../outside/x"); }).find("\"../outside/x\" climbs out"), std::string::npos);
  EXPECT_NE(refusal([&] { agents::placeInside(in, "k/../../outside/x"); }).find("climbs out"), std::string::npos);
  EXPECT_NE(refusal([&] { agents::placeInside(in, (base / "outside" / "x").string()); }).find("is absolute"), std::string::npos);
  EXPECT_NE(refusal([&] { agents::placeInside(in, ""); }).find("is empty"), std::string::npos);
  EXPECT_NE(refusal([&] { agents::placeInside(in, "escape/x"); }).find("leads through a symlink"), std::string::npos);
  EXPECT_NE(refusal([&] { agents::placeInside(in, "k/dangling.cu"); }).find("dangling symlink"), std::string::npos);
  EXPECT_EQ(agents::placeInside(in, "k/new.cu"), fs::canonical(in) / "k" / "new.cu");
}

TEST_F(UntrustedFilesTest, ASymlinkedFolderOfTheUsersOwnIsTaken) {
  fs::create_symlink(base / "inside", base / "linked");
  EXPECT_EQ(agents::placeInside(base / "linked", "k/m.cu"), fs::canonical(base / "inside") / "k" / "m.cu");
  EXPECT_EQ(agents::existingInside(base / "linked", "ok.cu"), fs::canonical(base / "inside" / "ok.cu"));
  EXPECT_EQ(agents::existingInside(base / "inside", (base / "linked" / "ok.cu").string()),
            fs::canonical(base / "inside" / "ok.cu"));
}

TEST_F(UntrustedFilesTest, ExistingInsideRefusesSourcesElsewhere) {
  const fs::path in = base / "inside";
  fs::create_symlink(base / "outside" / "secret.txt", in / "link.cu");
  const std::string secret = (base / "outside" / "secret.txt").string();
  EXPECT_NE(refusal([&] { agents::existingInside(in, secret); }).find("lies outside"), std::string::npos);
  EXPECT_NE(refusal([&] { agents::existingInside(in, "../outside/secret.txt"); }).find("lies outside"), std::string::npos);
  EXPECT_NE(refusal([&] { agents::existingInside(in, "link.cu"); }).find("resolves to " + secret), std::string::npos);
  EXPECT_NE(refusal([&] { agents::existingInside(in, "gone.cu"); }).find("cannot read"), std::string::npos);
}

TEST_F(UntrustedFilesTest, OnlyRegularFilesUnderTheCapAreReadAndNothingWaits) {
  const fs::path fifo = base / "log.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NE(refusal([&] { agents::readRegularFile(fifo, 1 << 20, "the job log"); }).find("is not a regular file"),
            std::string::npos);
  EXPECT_NE(refusal([&] { agents::readJobLog("/dev/zero"); }).find("the job log /dev/zero is not a regular file"),
            std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  fs::resize_file(base / "inside" / "ok.cu", agents::kMaxProgramFileBytes + 1);
  EXPECT_NE(refusal([&] { agents::readRegularFile(base / "inside" / "ok.cu", agents::kMaxProgramFileBytes, "the program file"); })
                .find("over the cap of 4 MiB"),
            std::string::npos);
  EXPECT_EQ(agents::readRegularFile(base / "outside" / "secret.txt", 6, "a file"), "secret");
}

TEST_F(UntrustedFilesTest, WriteProgramFilesWritesNothingWhenOnePathIsRefused) {
  std::string error;
  EXPECT_FALSE(agents::program::writeProgramFiles(base / "inside", {{"k/a.cu", "a"}, {"../outside/b.cu", "b"}}, error));
  EXPECT_NE(error.find("\"../outside/b.cu\""), std::string::npos) << error;
  EXPECT_FALSE(fs::exists(base / "inside" / "k" / "a.cu"));
  EXPECT_FALSE(fs::exists(base / "outside" / "b.cu"));
  ASSERT_EQ(::mkfifo((base / "inside" / "k" / "pipe.cu").c_str(), 0600), 0);
  EXPECT_FALSE(agents::program::writeProgramFiles(base / "inside", {{"k/pipe.cu", "a"}}, error));
  EXPECT_NE(error.find("is not a regular file"), std::string::npos) << error;
  EXPECT_TRUE(agents::program::writeProgramFiles(base / "inside", {{"k/a.cu", "a"}}, error)) << error;
}

TEST(JobLogParse, BadLinesPastTheFirstTwentyAreCountedNotKept) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "{not json\n{}\n";
  const auto back = agents::parseJobLog(text, "log.jsonl");
  EXPECT_TRUE(back.events.empty());
  ASSERT_EQ(back.problems.size(), agents::JobLogContents::kMaxProblems + 1);
  EXPECT_EQ(back.problems.front().rfind("log.jsonl:1: ", 0), 0u);
  EXPECT_EQ(back.problems.back(), "log.jsonl: 1980 more bad lines skipped");
}

}  // namespace
