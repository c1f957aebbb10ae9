// An optimize job driven by the LLM brain: the shared loop (agents/loop) with a brain that can
// see the job's cancel token and write to its log, and the model usage reported at the end.
#pragma once

#include "agents/llm/LlmSettings.h"
#include "agents/loop/OptimizeLoop.h"

namespace stitch::agents::llm {

class LlmJob final : public JobRunner {
public:
  LlmJob(WorkerFactory workers, loop::LoopLimits limits, LlmSettings settings)
      : workers_(std::move(workers)), limits_(limits), settings_(std::move(settings)) {}
  protocol::JobFinishedParams run(const JobRequest& request, JobContext& context) override;

private:
  WorkerFactory workers_;
  loop::LoopLimits limits_;
  LlmSettings settings_;
};

}  // namespace stitch::agents::llm
