// The loop's PROFILE phase (design §5, §10) for one job: per-kernel GPU time from the harness's
// trace, Nsight Compute metrics for a new best candidate (a bounded number of runs per job, one
// fallback notice when ncu cannot run), the roofline against ceilings measured once per GPU, the
// Verifier's one diagnosis + one suggestion for the brain, and the candidate's editor profile.
#pragma once

#include "agents/Job.h"
#include "agents/Worker.h"
#include "agents/loop/Brain.h"
#include "profiling/KernelSourceMap.h"
#include "profiling/NcuRunner.h"
#include "profiling/ProfilePayload.h"
#include "profiling/ProfilerFallback.h"
#include "profiling/Roofline.h"

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace stitch::agents::loop {

struct ProfileLimits {
  // ncu runs per job. One run costs 7–10 s on an H200, so only a verified candidate that is the
  // new best is measured, and at most this many times; 0 turns kernel metrics off.
  int ncuRuns = 3;
  std::optional<std::filesystem::path> ncu;  // the binary; unset: PATH, then the CUDA folders
  std::chrono::milliseconds ncuDeadline{120000};
  std::chrono::milliseconds traceDeadline{120000};      // profileTrace of one candidate
  std::chrono::milliseconds ceilingsDeadline{300000};   // measureCeilings, once per GPU
  // A .cu whose stitch_gemm_ceiling the harness times for the FP32 GEMM ceiling (the built-in
  // brain's GEMM search, builtin/emit/CeilingProgram.h); empty: PyTorch's matmul alone.
  std::string gemmCeilingProgram;
  int traceIterations = 3;                              // forwards in the trace (times are averaged)
};

// A verified candidate as PROFILE sees it.
struct ProfileSubject {
  std::string id;
  std::filesystem::path dir;                  // the candidate's files, as verify got them
  bool newBest = false;                       // only a new best is worth an ncu run
  std::optional<profiling::MemoryFloor> floor;  // from verify's timing
  protocol::Range replaced;                   // the user's code the candidate replaces
};

class ProfilePhase {
public:
  using Log = std::function<void(const std::string& level, const std::string& message)>;
  ProfilePhase(const JobRequest& request, Worker& worker, const ProfileLimits& limits, std::filesystem::path cacheDir,
               Log log);

  // Fills `fb`'s profile fields (verifier, metricsSource, bound, achievedPct) and returns the
  // candidate's per-line profile for the editor; nullopt when no trace could be taken (said in
  // the log; the candidate stays verified and the feedback rests on timing alone).
  std::optional<protocol::ProfileParams> run(const ProfileSubject& subject, const protocol::PlanParams& plan,
                                             const CancelToken& cancel, Feedback& fb);

  // The GPU's measured ceilings (copy bandwidth, FP32): measured once per GPU, cached on disk.
  const std::optional<profiling::Ceilings>& ceilings(const CancelToken& cancel);

private:
  std::optional<profiling::TraceSummary> trace(const ProfileSubject& s, const CancelToken& cancel);
  std::optional<std::vector<profiling::KernelMetrics>> ncuMetrics(const ProfileSubject& s, const CancelToken& cancel);
  bool ncuReady(const CancelToken& cancel);
  void fallback(const profiling::ProfileError& error);

  const JobRequest& request_;
  Worker& worker_;
  const ProfileLimits& limits_;
  std::filesystem::path cacheDir_;
  Log log_;
  profiling::FallbackNotices notices_;
  bool ceilingsTried_ = false;
  std::optional<profiling::Ceilings> ceilings_;
  std::optional<bool> ncuReady_;          // decided once per job
  profiling::NcuRequest ncuBase_;         // the tool and the worker's interpreter, once found
  int ncuRunsUsed_ = 0;
};

// Where a candidate's kernels land in the user's file: a kernel named after a plan task
// (`<taskId>_...`, as the built-in coder names them) on that task's first line, others on the
// first line of the code the candidate replaces.
profiling::CandidatePlacement placementFromPlan(const protocol::PlanParams& plan, const protocol::Range& replaced,
                                                const std::vector<profiling::SourceKernel>& kernels);

}  // namespace stitch::agents::loop
