// Fallback wording and once-per-job reporting (see ProfilerFallback.h).
#include "profiling/ProfilerFallback.h"

namespace stitch::profiling {

std::string fallbackMessage(const std::string& profiler, const ProfileError& error) {
  return profiler + " unavailable: " + error.message +
         "; kernel metrics are skipped and timing falls back to CUDA events (the job goes on).";
}

std::optional<std::string> FallbackNotices::first(const std::string& profiler, const ProfileError& error) {
  if (!said_.insert(profiler + "/" + error.code).second) return std::nullopt;
  return fallbackMessage(profiler, error);
}

}  // namespace stitch::profiling
