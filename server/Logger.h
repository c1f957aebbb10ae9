// Leveled logging to stderr or a file. Never to stdout (that is the protocol's), and never
// with secrets: callers log names of settings, not their values.
#pragma once

#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>

namespace stitch::server {

enum class LogLevel { Debug = 0, Info = 1, Warning = 2, Error = 3 };

// Parses "debug" | "info" | "warning" | "error"; false when unknown.
bool parseLogLevel(std::string_view text, LogLevel& out);

class Logger {
public:
  static Logger& instance();
  // Switches output to `path` (appending); false and a message on stderr when it cannot.
  bool openFile(const std::string& path);
  void setLevel(LogLevel level) { level_ = level; }
  bool enabled(LogLevel level) const { return level >= level_; }
  void log(LogLevel level, std::string_view message);

private:
  Logger() = default;
  std::mutex mutex_;
  std::FILE* out_ = stderr;
  LogLevel level_ = LogLevel::Info;
};

inline void logDebug(std::string_view m) { Logger::instance().log(LogLevel::Debug, m); }
inline void logInfo(std::string_view m) { Logger::instance().log(LogLevel::Info, m); }
inline void logWarning(std::string_view m) { Logger::instance().log(LogLevel::Warning, m); }
inline void logError(std::string_view m) { Logger::instance().log(LogLevel::Error, m); }

}  // namespace stitch::server
