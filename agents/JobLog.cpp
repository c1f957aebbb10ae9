// JSONL job log writer and reader; see JobLog.h.
#include "agents/JobLog.h"

#include "agents/UntrustedFiles.h"
#include "protocol/JsonRpc.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <stdexcept>

namespace stitch::agents {

std::string utcNow() {
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()) % 1000;
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(ms.count()));
  return out;
}

JobLogWriter::JobLogWriter(std::filesystem::path path) : path_(std::move(path)) {
  std::error_code ec;
  std::filesystem::create_directories(path_.parent_path(), ec);
  file_ = std::fopen(path_.c_str(), "a");
  if (!file_) throw std::runtime_error("cannot write the job log " + path_.string());
}

JobLogWriter::~JobLogWriter() {
  if (file_) std::fclose(file_);
}

void JobLogWriter::append(const JobEvent& event) {
  protocol::json line{{"time", utcNow()}, {"method", methodOf(event)}, {"params", paramsOf(event)}};
  std::string text = line.dump(-1, ' ', false, protocol::json::error_handler_t::replace) + "\n";
  std::lock_guard lock(mutex_);
  std::fwrite(text.data(), 1, text.size(), file_);
  std::fflush(file_);  // a crash must not lose what the user already saw
}

JobLogContents readJobLog(const std::filesystem::path& path) {
  const std::string text = readRegularFile(path, kMaxJobLogBytes, "the job log");
  if (const auto lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')); lines > kMaxJobLogLines)
    throw std::runtime_error("the job log " + path.string() + " has " + std::to_string(lines) +
                             " lines, over the cap of " + std::to_string(kMaxJobLogLines) + "; refused");
  return parseJobLog(text, path.filename().string());
}

JobLogContents parseJobLog(std::string_view text, const std::string& name) {
  JobLogContents out;
  std::size_t unsaid = 0;  // problems past kMaxProblems: counted, not kept
  auto problem = [&](int number, const auto& why) {
    if (out.problems.size() < JobLogContents::kMaxProblems) out.problems.push_back(name + ":" + std::to_string(number) + ": " + why());
    else ++unsaid;
  };
  int number = 0;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = std::min(text.find('\n', start), text.size());
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    if (auto why = protocol::exceedsShape(line)) {  // before parsing: a deep line would overflow the stack
      problem(number, [&] { return *why; });
      continue;
    }
    // Bad lines are found without throwing: a log of nothing else must cost a parse a line, no more.
    auto record = protocol::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (record.is_discarded()) {
      problem(number, [&] {
        try {
          (void)protocol::json::parse(line);
        } catch (const std::exception& e) {
          return std::string(e.what());
        }
        return std::string("not JSON");
      });
      continue;
    }
    if (!record.is_object() || !record.contains("method") || !record["method"].is_string() || !record.contains("params")) {
      problem(number, [] { return std::string("not a {\"method\", \"params\"} record"); });
      continue;
    }
    try {
      out.events.push_back(parseEvent(record["method"].get<std::string>(), record["params"]));
    } catch (const std::exception& e) {
      problem(number, [&] { return std::string(e.what()); });
    }
  }
  if (unsaid) out.problems.push_back(name + ": " + std::to_string(unsaid) + " more bad lines skipped");
  return out;
}

}  // namespace stitch::agents
