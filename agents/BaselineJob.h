// The BASELINE phase of the agent loop (design §5) as a job: start a harness worker, load
// the task, capture its graph, and on a GPU time eager and torch.compile and profile the
// reference per source line. Everything it learns is streamed as log and profile events;
// the planning and coding phases build on these facts.
#pragma once

#include "agents/Job.h"
#include "agents/Worker.h"

#include <functional>
#include <map>
#include <memory>

namespace stitch::agents {

using WorkerFactory = std::function<std::unique_ptr<Worker>(std::function<void(const protocol::json&)> onEvent)>;

struct BaselineLimits {
  std::chrono::milliseconds startDeadline{120000};  // hello: interpreter + torch import
  std::chrono::milliseconds stepDeadline{600000};   // each later step
  double timingSeconds = 0.5;  // per timed function (eager, torch.compile, candidate): the median is stable well before
};

// The precision modes eager runs the reference in (design §7), as the harness read PyTorch's
// flags after loading the task (a task may set them when imported).
struct EagerPrecision {
  bool convTf32 = false;    // torch.backends.cudnn.allow_tf32: cuDNN convolutions in TF32
  bool matmulTf32 = false;  // torch.backends.cuda.matmul.allow_tf32: matmuls in TF32
};

// Reads loadTask's "precision" ({"cudnn.allow_tf32": bool, "cuda.matmul.allow_tf32": bool, ...});
// nullopt where the harness reported none.
std::optional<EagerPrecision> parseEagerPrecision(const protocol::json& loadTaskResult);

// What the BASELINE phase learned, for the phases after it.
struct BaselineFacts {
  bool cuda = false;
  std::string gpu;                    // the device's name, when there is one
  protocol::json graph;               // stitchcuda.graph/1, parsed by the planner
  std::string modelClass = "Model";   // the class the harness loaded as the reference model
  std::map<int, double> lineTimesUs;  // one-based task line -> reference time (GPU, or CPU without one)
  std::optional<EagerPrecision> precision;  // nullopt: not reported (the library calls then stay exact fp32)
};

// Runs the phase on `worker`, streaming what it learns. Returns nullopt when the phase ended
// the job (a harness error or a cancel), with `finished` saying how. With `withTiming` false the
// eager and torch.compile timing is left out (no fact the plan needs comes from it): the optimize
// loop runs it with timeReference() while the first candidate builds, since for a large network
// torch.compile's compile takes as long as that build.
std::optional<BaselineFacts> runBaselinePhase(const JobRequest& request, JobContext& context, Worker& worker,
                                              const BaselineLimits& limits, protocol::JobFinishedParams& finished,
                                              bool withTiming = true);

// Eager and torch.compile timed side by side, or eager alone without `withCompile` (the harness
// caches the result per task and GPU, and the verifier reads it from there), logged with the seconds
// it took and `beside`, what ran meanwhile ("c1's build"; empty: nothing). The harness's baseline, or
// nothing when the call failed, with `finished` saying how the job would end.
std::optional<protocol::json> timeReference(const JobRequest& request, JobContext& context, Worker& worker,
                                            const BaselineLimits& limits, protocol::JobFinishedParams& finished,
                                            const std::string& beside = "", bool withCompile = true);

class BaselineJob final : public JobRunner {
public:
  BaselineJob(WorkerFactory workers, BaselineLimits limits = {}) : workers_(std::move(workers)), limits_(limits) {}
  protocol::JobFinishedParams run(const JobRequest& request, JobContext& context) override;

private:
  WorkerFactory workers_;
  BaselineLimits limits_;
};

}  // namespace stitch::agents
