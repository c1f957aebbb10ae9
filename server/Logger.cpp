// Leveled logger; see Logger.h.
#include "server/Logger.h"

#include "agents/JobLog.h"

namespace stitch::server {

bool parseLogLevel(std::string_view text, LogLevel& out) {
  if (text == "debug") out = LogLevel::Debug;
  else if (text == "info") out = LogLevel::Info;
  else if (text == "warning") out = LogLevel::Warning;
  else if (text == "error") out = LogLevel::Error;
  else return false;
  return true;
}

Logger& Logger::instance() {
  static Logger logger;
  return logger;
}

bool Logger::openFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "a");
  if (!f) {
    std::fprintf(stderr, "stitchcuda: cannot open log file %s; logging to stderr\n", path.c_str());
    return false;
  }
  std::lock_guard lock(mutex_);
  if (out_ != stderr) std::fclose(out_);
  out_ = f;
  return true;
}

void Logger::log(LogLevel level, std::string_view message) {
  if (!enabled(level)) return;
  static constexpr const char* kNames[] = {"D", "I", "W", "E"};
  std::string stamp = agents::utcNow();
  std::lock_guard lock(mutex_);
  std::fprintf(out_, "%s %s [%s] %.*s\n", kNames[static_cast<int>(level)], stamp.c_str(), "stitchcuda",
               static_cast<int>(message.size()), message.data());
  std::fflush(out_);
}

}  // namespace stitch::server
