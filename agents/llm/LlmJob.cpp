// The LLM job; see LlmJob.h.
#include "agents/llm/LlmJob.h"

#include "agents/llm/LlmBrain.h"

namespace stitch::agents::llm {

protocol::JobFinishedParams LlmJob::run(const JobRequest& request, JobContext& context) {
  auto meter = std::make_shared<UsageMeter>(settings_.budget);
  auto log = [&request, &context](const std::string& level, const std::string& phase, const std::string& message) {
    context.emit(protocol::LogParams{request.jobId, level, phase, message});
  };
  context.emit(protocol::LogParams{request.jobId, "info", "PLAN",
                                   "LLM brain: " + providerName(settings_.provider.kind) + " model " +
                                       settings_.provider.model + " at " + settings_.provider.baseUrl});
  loop::OptimizeLoop optimize(
      workers_, [&] { return std::make_unique<LlmBrain>(settings_, context.cancelToken(), log, meter); }, limits_);
  protocol::JobFinishedParams finished = optimize.run(request, context);
  if (meter->calls() > 0) {
    log("info", "DONE", "LLM usage: " + meter->summary());
    finished.message += " (LLM: " + meter->summary() + ")";
  }
  return finished;
}

}  // namespace stitch::agents::llm
