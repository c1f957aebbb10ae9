// Nsight Compute over one forward pass of the reference or a candidate: only the kernels inside
// the harness's NVTX range (ncu_target.py), clocks left as they are (--clock-control none), the
// CSV parsed into KernelMetrics. Every way it can fail is a ProfileError the job reports once
// and then carries on with event timing (see ProfilerFallback.h); none fails a job.
#pragma once

#include "profiling/KernelMetrics.h"
#include "profiling/ProfileResult.h"

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace stitch::profiling {

struct NcuRequest {
  std::filesystem::path ncu;                 // the binary (ProfilerTools finds it)
  std::string python = "python3";
  std::filesystem::path harnessDir;          // prepended to PYTHONPATH
  std::filesystem::path task;                // the reference task file
  std::optional<std::filesystem::path> candidate;  // absent: profile the reference itself
  std::optional<std::filesystem::path> cacheDir;   // the harness's build cache
  std::optional<int> gpu;                    // CUDA_VISIBLE_DEVICES
  int iterations = 1;                        // forward passes inside the range
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  std::function<bool()> cancelled;           // polled while ncu runs: the job's cancel stops it
};

struct NcuRun {
  std::vector<KernelMetrics> kernels;
  std::string csv;                    // ncu's output as written, for logs and fixtures
  std::vector<std::string> command;
};

// The NVTX range ncu_target.py pushes around the measured forward passes.
inline constexpr const char* kNcuRange = "stitchcuda.forward";

std::vector<std::string> ncuCommand(const NcuRequest& r, const std::filesystem::path& logFile);

// Error codes: tool_missing, counters_permission (ERR_NVGPUCTRPERM), profiler_error (an
// ==ERROR== line from ncu), target_failed (the harness could not build or run the subject),
// timeout, cancelled, no_kernels, parse_error.
ProfileResult<NcuRun> runNcu(const NcuRequest& request);

// The same classification over a finished run's texts (what runNcu uses; tests feed it directly).
ProfileResult<NcuRun> interpretNcuRun(int exitCode, bool timedOut, const std::string& log,
                                      const std::string& stdoutText, const std::string& stderrText);

}  // namespace stitch::profiling
