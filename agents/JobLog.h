// The job's JSONL log: one line per event, {"time", "method", "params"}, appended as the
// job runs, so a run can be inspected, and reopened after a restart.
#pragma once

#include "agents/JobEvent.h"

#include <cstdio>
#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace stitch::agents {

class JobLogWriter {
public:
  // Creates the parent folder; throws std::runtime_error naming the path when it cannot.
  explicit JobLogWriter(std::filesystem::path path);
  ~JobLogWriter();
  JobLogWriter(const JobLogWriter&) = delete;
  JobLogWriter& operator=(const JobLogWriter&) = delete;

  void append(const JobEvent& event);
  const std::filesystem::path& path() const { return path_; }

private:
  std::filesystem::path path_;
  std::mutex mutex_;
  std::FILE* file_ = nullptr;
};

struct JobLogContents {
  std::vector<JobEvent> events;
  // "log.jsonl:12: ..." for lines that were skipped: the first kMaxProblems, then one line counting the rest.
  std::vector<std::string> problems;
  static constexpr std::size_t kMaxProblems = 20;
};

// Reads a log back. A missing or unreadable file, one that is not a regular file, or one over
// kMaxJobLogBytes or kMaxJobLogLines throws std::runtime_error; a bad line is reported in `problems`
// and skipped (a log cut off by a crash still reopens).
JobLogContents readJobLog(const std::filesystem::path& path);
// The events of a log's text; `name` prefixes its problems ("log.jsonl:12: ...").
JobLogContents parseJobLog(std::string_view text, const std::string& name);

// ISO 8601 UTC with milliseconds, for log records and job summaries.
std::string utcNow();

}  // namespace stitch::agents
