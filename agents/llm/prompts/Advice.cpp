// The Verifier's advice as the Coder reads it: one issue per round (design §5; CudaForge's
// one-issue-at-a-time judge), with the metric values behind it. The loop's structured round
// (profiling/VerifierFeedback) when it has one; otherwise the first failed check with its
// standard remedy, or the passing candidate's timing and diagnosis.
#include "agents/llm/prompts/Prompts.h"

#include <cstdio>

namespace stitch::agents::llm::prompts {
namespace {

std::string number(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string evidence(const profiling::VerifierFeedback& f) {
  std::string s;
  for (const auto& e : f.evidence) s += (s.empty() ? "" : ", ") + e.metric + " = " + number(e.value) + " " + e.unit;
  return s;
}

}  // namespace

std::string advice(const loop::Feedback& fb) {
  std::string s = fb.passed ? "PASSED" : (fb.built ? "FAILED" : "FAILED to build");
  if (fb.passed && fb.medianMs) s += " in " + number(*fb.medianMs) + " ms (median)";
  s += ".\n";
  std::optional<profiling::VerifierFeedback> f = fb.verifier;
  if (!f && !fb.passed) {
    // Only check names reached the brain: speak about the first, with the standard remedy.
    std::vector<profiling::FailedCheck> failed;
    for (const auto& c : fb.failedChecks) failed.push_back({c, "", std::nullopt, std::nullopt, {}});
    if (failed.empty()) failed.push_back({fb.built ? "unknown" : "build_error", "", std::nullopt, std::nullopt, {}});
    f = profiling::failureFeedback(failed);
    if (f) f->diagnosis = "the verifier's check `" + f->category + "` failed";
  }
  if (!f) {
    s += "Issue: " + (fb.diagnosis.empty() ? std::string("no profile was available") : fb.diagnosis) +
         "\nMake one change that moves fewer bytes or launches fewer kernels; keep everything else that passed.\n";
    return s;
  }
  s += "Issue [" + f->category + "]: " + f->diagnosis + "\n";
  if (!f->kernel.empty()) s += "Kernel: " + f->kernel + "\n";
  if (f->file) s += "Where: " + *f->file + (f->line ? ":" + std::to_string(*f->line) : "") + "\n";
  if (const std::string ev = evidence(*f); !ev.empty())
    s += "Evidence" + (fb.metricsSource.empty() ? "" : " (" + fb.metricsSource + ")") + ": " + ev + "\n";
  s += (fb.passed ? "Try: " : "Fix: ") + f->suggestion + "\n";
  return s;
}

}  // namespace stitch::agents::llm::prompts
