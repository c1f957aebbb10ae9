// The Verifier's feedback for the Coder (design §5, §9; format in protocol/FEEDBACK.md): ONE
// diagnosis and ONE suggestion per round, each backed by the metric values that support it —
// for a failed candidate the first failed check, for a passing one the main limiter of the
// kernel that takes the most GPU time.
#pragma once

#include "profiling/KernelMetrics.h"
#include "profiling/Roofline.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace stitch::profiling {

struct Evidence {
  std::string metric;  // ncu's or our name: "dram_throughput_pct", "registers_per_thread", ...
  double value = 0;
  std::string unit;    // "%", "us", "registers", "bytes", "cycles/issue", "kernels", ...
};

struct VerifierFeedback {
  std::string mode;        // "fix" (the candidate failed) | "optimize" (it passed)
  std::string category;    // stable name of the rule that fired (FEEDBACK.md lists them)
  std::string kernel;      // the kernel it is about ("" for a failed check)
  std::string diagnosis;   // what limits it, one sentence
  std::string suggestion;  // the one change to try next, one sentence
  std::vector<Evidence> evidence;
  std::optional<std::string> file;  // for a failed check: where
  std::optional<int> line;
};

// The whole forward against the memory floor, as the harness's timing measured it (verify's
// timing.roofline): what is left to judge a kernel by when ncu could not run.
struct MemoryFloor {
  double floorUs = 0;       // bytes that must move / measured bandwidth
  double medianUs = 0;      // the candidate's measured median
  double bytes = 0;
  double bandwidthGBps = 0;
};

// Optimize mode: from the candidate's kernels (ncu, or only names and trace times when ncu could
// not run; `floor` then speaks for the missing throughput counters). nullopt when there are no kernels.
std::optional<VerifierFeedback> verifierFeedback(const std::vector<KernelMetrics>& kernels,
                                                 const std::optional<Ceilings>& ceilings,
                                                 const std::optional<MemoryFloor>& floor = std::nullopt);

struct FailedCheck {
  std::string check;    // the verdict's check name (HARNESS.md), e.g. output_mismatch
  std::string message;  // the finding's message
  std::optional<std::string> file;
  std::optional<int> line;
  std::vector<Evidence> evidence;  // numbers the finding carried (max error, trial, ...)
};

// Whether a failed check or worker error code is the verifier's, not the candidate's: its own error
// (verifier_error, internal_error, out of memory outside the candidate's forward, a broken task or
// request) or no GPU to run on (needs_gpu). Such a failure says nothing about the candidate and
// must never become advice to change it. The candidate's own: its checks, a sticky CUDA error, a
// crash or a hang of the worker while it ran.
bool isVerifierFailure(const std::string& check);

// Fix mode: the first failed check that is the candidate's (the verdict lists them in the order
// they were found); nullopt when none is.
std::optional<VerifierFeedback> failureFeedback(const std::vector<FailedCheck>& failed);

nlohmann::json feedbackToJson(const VerifierFeedback& f);

}  // namespace stitch::profiling
