// What a job says when a profiler cannot run: one sentence per cause, said once per job, and
// the fallback it takes (CUDA-event timing and the PyTorch profiler keep working).
#pragma once

#include "profiling/ProfileResult.h"

#include <optional>
#include <set>
#include <string>

namespace stitch::profiling {

// "<why>; kernel metrics are skipped and timing falls back to CUDA events."
std::string fallbackMessage(const std::string& profiler, const ProfileError& error);

// Remembers which causes were already reported in this job.
class FallbackNotices {
public:
  // The message the first time (profiler, error.code) is seen; nullopt after that.
  std::optional<std::string> first(const std::string& profiler, const ProfileError& error);

private:
  std::set<std::string> said_;
};

}  // namespace stitch::profiling
