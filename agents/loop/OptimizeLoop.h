// The agent loop of design §5 as a job: BASELINE → PLAN → CODE → VERIFY → PROFILE → REFINE
// (→ REPLAN) → DONE, shared by every brain. Every transition is streamed (plan with task
// statuses, candidates with verdicts, each verified candidate's profile, log lines with the
// phase, progress); budgets are iterations and wall time; a cancel keeps the best verified candidate.
// BASELINE's eager and torch.compile timing runs once the first candidate is written, while that
// candidate builds in the worker's background (nothing the plan needs comes from the timing).
#pragma once

#include "agents/BaselineJob.h"
#include "agents/loop/Brain.h"
#include "agents/loop/ProfilePhase.h"

#include <functional>

namespace stitch::agents::loop {

struct LoopLimits {
  BaselineLimits baseline;
  std::chrono::milliseconds verifyDeadline{300000};  // one verify: build, trials, timing (baselines cached)
  std::chrono::milliseconds buildDeadline{180000};
  int iterations = 3;        // candidates tried when the request sets no budget
  double wallSeconds = 900;  // the whole job when the request sets no budget
  int replanAfterFailures = 2;
  int replanAfterStagnant = 2;       // verified candidates in a row that did not beat the best...
  double stagnantBelowGain = 0.02;   // ...by more than this fraction of its median
  ProfileLimits profile;     // PROFILE: trace, ncu runs per job, ceilings
  // Where each CODE/REFINE step is written as a training transition (protocol/TRANSITIONS.md),
  // scored by the rubric; none: not recorded (scoring costs a PTX compile per candidate).
  std::optional<std::filesystem::path> recordTransitions;
};

using BrainFactory = std::function<std::unique_ptr<Brain>()>;

class OptimizeLoop final : public JobRunner {
public:
  OptimizeLoop(WorkerFactory workers, BrainFactory brains, LoopLimits limits = {})
      : workers_(std::move(workers)), brains_(std::move(brains)), limits_(limits) {}
  protocol::JobFinishedParams run(const JobRequest& request, JobContext& context) override;

private:
  WorkerFactory workers_;
  BrainFactory brains_;
  LoopLimits limits_;
};

}  // namespace stitch::agents::loop
