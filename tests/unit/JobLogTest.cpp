// Pins the job log round trip and how events build a job's state.
#include "agents/JobLog.h"
#include "agents/JobState.h"

#include "SampleJob.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace stitch;

namespace {

std::filesystem::path scratch(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("stitch-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir / name;
}

}  // namespace

TEST(JobState, AppliesEventsInOrder) {
  agents::JobState s;
  for (const auto& e : test::sampleEvents()) s.apply(e);
  EXPECT_EQ(s.jobId, "j1");
  EXPECT_EQ(s.uri, "file:///m.py");
  ASSERT_TRUE(s.plan);
  EXPECT_EQ(s.plan->tasks.size(), 1u);
  ASSERT_EQ(s.candidates.size(), 2u);
  EXPECT_EQ(s.state(), "improved");
  EXPECT_EQ(s.phase, "DONE");
  EXPECT_EQ(s.profiles.count("reference"), 1u);

  protocol::CandidateParams update{"j1", "file:///m.py", *s.candidate("c1")};
  update.candidate.status = "rejected";
  s.apply(update);
  EXPECT_EQ(s.candidates.size(), 2u);  // updated in place, not appended
  EXPECT_EQ(s.candidate("c1")->status, "rejected");
}

TEST(JobLog, RoundTripsEveryEventKind) {
  auto path = scratch("roundtrip.jsonl");
  std::filesystem::remove(path);
  {
    agents::JobLogWriter w(path);
    for (const auto& e : test::sampleEvents()) w.append(e);
  }
  auto back = agents::readJobLog(path);
  EXPECT_TRUE(back.problems.empty());
  auto original = test::sampleEvents();
  ASSERT_EQ(back.events.size(), original.size());
  for (std::size_t i = 0; i < original.size(); ++i) {
    EXPECT_EQ(agents::methodOf(back.events[i]), agents::methodOf(original[i]));
    EXPECT_EQ(agents::paramsOf(back.events[i]), agents::paramsOf(original[i]));
  }
}

TEST(JobLog, BadLinesAreReportedWithLineNumbersAndSkipped) {
  auto path = scratch("bad.jsonl");
  {
    std::ofstream out(path);
    out << R"({"method":"stitchcuda/log","params":{"jobId":"j","message":"ok"}})" << "\n"
        << "{not json\n"
        << R"({"method":"stitchcuda/unknown","params":{}})" << "\n"
        << R"({"method":"stitchcuda/log","params":{"jobId":"j"}})" << "\n";
  }
  auto back = agents::readJobLog(path);
  EXPECT_EQ(back.events.size(), 1u);
  ASSERT_EQ(back.problems.size(), 3u);
  EXPECT_EQ(back.problems[0].rfind("bad.jsonl:2: ", 0), 0u);
  EXPECT_NE(back.problems[2].find("message"), std::string::npos);
}

TEST(JobLog, MissingFileThrows) {
  EXPECT_THROW(agents::readJobLog("/nonexistent/log.jsonl"), std::runtime_error);
}
