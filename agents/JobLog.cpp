// JSONL job log writer and reader; see JobLog.h.
#include "agents/JobLog.h"

#include <chrono>
#include <ctime>
#include <fstream>
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
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read the job log " + path.string());
  JobLogContents out;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string where = path.filename().string() + ":" + std::to_string(number) + ": ";
    try {
      auto record = protocol::json::parse(line);
      out.events.push_back(parseEvent(protocol::required<std::string>(record, "method"),
                                      protocol::required<protocol::json>(record, "params")));
    } catch (const std::exception& e) {
      out.problems.push_back(where + e.what());
    }
  }
  return out;
}

}  // namespace stitch::agents
