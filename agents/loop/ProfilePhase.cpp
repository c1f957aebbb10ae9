// The PROFILE phase; see ProfilePhase.h. Every profiler failure is a log line and a narrower
// profile, never a failed candidate: the verdict is already in.
#include "agents/loop/ProfilePhase.h"

#include "profiling/ProfilerTools.h"
#include "profiling/RooflineCache.h"
#include "protocol/NumberText.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

namespace stitch::agents::loop {
namespace {

using protocol::json;
namespace prof = profiling;

using protocol::fixed;

std::string duration(double us) { return us >= 1000.0 ? fixed(us / 1000.0, 2) + " ms" : fixed(us, 1) + " µs"; }

prof::ProfileError asProfileError(const WorkerError& e) { return {e.code, e.message}; }

// The hottest kernel (by the time the rules judged it by) with its roofline point.
std::optional<std::pair<const prof::KernelMetrics*, std::optional<prof::RooflinePoint>>> hottest(
    const std::vector<prof::KernelMetrics>& kernels, const std::optional<prof::Ceilings>& ceilings) {
  const prof::KernelMetrics* hot = nullptr;
  for (const auto& k : kernels)
    if (!hot || k.durationUs.value_or(0) > hot->durationUs.value_or(0)) hot = &k;
  if (!hot) return std::nullopt;
  return std::make_pair(hot, prof::classify(*hot, ceilings));
}

}  // namespace

prof::CandidatePlacement placementFromPlan(const protocol::PlanParams& plan, const protocol::Range& replaced,
                                           const std::vector<prof::SourceKernel>& kernels) {
  prof::CandidatePlacement placement;
  placement.anchorLine = replaced.start.line;
  for (const auto& k : kernels) {
    const std::string key = prof::kernelKey(k.name);
    for (const auto& task : plan.tasks)
      if (!task.id.empty() && key.rfind(task.id + "_", 0) == 0 && task.range.end.line > task.range.start.line) {
        placement.kernelLines[key] = task.range.start.line;
        break;
      }
  }
  return placement;
}

ProfilePhase::ProfilePhase(const JobRequest& request, Worker& worker, const ProfileLimits& limits,
                           std::filesystem::path cacheDir, Log log)
    : request_(request), worker_(worker), limits_(limits), cacheDir_(std::move(cacheDir)), log_(std::move(log)) {}

void ProfilePhase::fallback(const prof::ProfileError& error) {
  if (auto message = notices_.first("Nsight Compute", error)) log_("warning", *message);
}

const std::optional<prof::Ceilings>& ProfilePhase::ceilings(const CancelToken& cancel) {
  if (ceilingsTried_) return ceilings_;
  ceilingsTried_ = true;
  WorkerReply hello = worker_.call("hello", json::object(), limits_.traceDeadline, cancel);
  const std::string gpu = hello.ok() ? hello.result->value("gpu", "") : "";
  if (gpu.empty()) {
    log_("warning", "roofline ceilings unavailable: the worker did not name its GPU" +
                        (hello.ok() ? std::string() : " (" + hello.error->message + ")") +
                        "; kernels are classified against ncu's % of the hardware peak");
    return ceilings_;
  }
  prof::RooflineCache cache(cacheDir_);
  bool measured = false;
  auto got = cache.getOrMeasure(gpu, [&]() -> prof::ProfileResult<json> {
    measured = true;
    log_("info", "measuring the roofline ceilings of " + gpu + " (once per GPU)");
    json params = json::object();
    if (!limits_.gemmCeilingProgram.empty()) params["gemmProgram"] = limits_.gemmCeilingProgram;
    WorkerReply r = worker_.call("measureCeilings", params, limits_.ceilingsDeadline, cancel);
    if (!r.ok()) return asProfileError(*r.error);
    return *r.result;
  });
  if (!got) {
    log_("warning", "roofline ceilings unavailable: " + got.error().message + " [" + got.error().code +
                        "]; kernels are classified against ncu's % of the hardware peak");
    return ceilings_;
  }
  ceilings_ = got.value();
  const prof::Tf32Ceiling tf32 = prof::tf32Ceiling(*ceilings_);
  log_("info", "roofline ceilings of " + gpu + ": memory " + fixed(ceilings_->copyGBps, 0) + " GB/s, FP32 " +
                   fixed(ceilings_->fp32Tflops, 1) + " TFLOP/s, TF32 tensor cores " +
                   (tf32.tflops > 0 ? fixed(tf32.tflops, 1) + " TFLOP/s" + (tf32.measured ? "" : " (datasheet peak)")
                                    : "unknown") +
                   " (" +
                   (measured ? "measured now" : "measured " + ceilings_->measuredAt) + ", cached in " +
                   cache.fileFor(gpu).string() + ")");
  return ceilings_;
}

bool ProfilePhase::ncuReady(const CancelToken& cancel) {
  if (ncuReady_) return *ncuReady_;
  ncuReady_ = false;
  const prof::ToolStatus tool = limits_.ncu ? prof::probeTool(limits_.ncu->string(), {})
                                            : prof::probeTool("ncu", prof::defaultToolDirs("ncu"));
  if (!tool.available()) {
    fallback({"tool_missing", tool.message});
    return false;
  }
  // The target runs under ncu with the worker's own interpreter, not whatever python3 is on PATH.
  WorkerReply facts = worker_.call("ncuTarget", json::object(), limits_.traceDeadline, cancel);
  if (!facts.ok()) {
    fallback({"target_failed", "the harness could not say how to start the profiled program: " + facts.error->message});
    return false;
  }
  ncuBase_.ncu = *tool.path;
  ncuBase_.python = facts.result->value("python", "python3");
  ncuBase_.harnessDir = facts.result->value("harnessDir", "");
  ncuBase_.task = request_.taskFile;
  ncuBase_.cacheDir = cacheDir_;
  ncuBase_.gpu = request_.options.gpu;
  ncuBase_.timeout = limits_.ncuDeadline;
  log_("info", tool.message);
  ncuReady_ = true;
  return true;
}

std::optional<std::vector<prof::KernelMetrics>> ProfilePhase::ncuMetrics(const ProfileSubject& s,
                                                                         const CancelToken& cancel) {
  if (!s.newBest || limits_.ncuRuns <= 0) return std::nullopt;
  if (ncuRunsUsed_ >= limits_.ncuRuns) {
    if (ncuRunsUsed_++ == limits_.ncuRuns)
      log_("info", "the " + std::to_string(limits_.ncuRuns) +
                       " Nsight Compute run(s) of this job are spent; later candidates are judged by trace and timing");
    return std::nullopt;
  }
  if (!ncuReady(cancel)) return std::nullopt;
  ++ncuRunsUsed_;
  prof::NcuRequest r = ncuBase_;
  r.candidate = s.dir;
  r.cancelled = [&cancel] { return cancel.cancelled(); };
  auto run = prof::runNcu(r);
  if (!run) {
    if (run.error().code == "cancelled") return std::nullopt;  // the job is ending; no fallback to announce
    fallback(run.error());
    // Neither a missing tool nor a counter permission changes within a job: stop asking.
    if (run.error().code == "tool_missing" || run.error().code == "counters_permission") ncuReady_ = false;
    return std::nullopt;
  }
  // Kept beside the candidate's verdict: `stitchcuda score` reads its kernels' measured engineering
  // from it (protocol/SCORE.md); a candidate without one is scored from its code alone.
  std::ofstream(s.dir / "ncu.csv") << run.value().csv;
  return std::move(run).value().kernels;
}

std::optional<prof::TraceSummary> ProfilePhase::trace(const ProfileSubject& s, const CancelToken& cancel) {
  const std::filesystem::path out = s.dir / "trace.json";
  json params{{"path", request_.taskFile.string()},
              {"candidate", s.dir.string()},
              {"cacheDir", cacheDir_.string()},
              {"out", out.string()},
              {"iterations", limits_.traceIterations}};
  WorkerReply reply = worker_.call("profileTrace", params, limits_.traceDeadline, cancel);
  if (!reply.ok()) {
    log_("warning", s.id + ": no kernel trace (" + reply.error->message + " [" + reply.error->code + "])");
    return std::nullopt;
  }
  const std::string file = reply.result->value("trace", out.string());
  std::ifstream in(file);
  json trace = json::parse(in, nullptr, false);
  if (trace.is_discarded()) {
    log_("warning", s.id + ": the kernel trace " + file + " is not readable JSON");
    return std::nullopt;
  }
  auto parsed = prof::parseTorchTrace(trace, reply.result->value("iterationRange", "stitchcuda.iteration:"),
                                      reply.result->value("lineRange", "stitchcuda.line:"));
  if (!parsed) {
    log_("warning", s.id + ": the kernel trace did not parse: " + parsed.error().message);
    return std::nullopt;
  }
  return std::move(parsed).value();
}

std::optional<protocol::ProfileParams> ProfilePhase::run(const ProfileSubject& s, const protocol::PlanParams& plan,
                                                         const CancelToken& cancel, Feedback& fb) {
  fb.metricsSource = "timing";
  if (cancel.cancelled()) return std::nullopt;
  auto summary = trace(s, cancel);
  if (!summary) return std::nullopt;
  for (const auto& a : summary->activities)
    if (a.kind == "kernel" && a.iteration >= 0 && a.op().rfind("aten::", 0) != 0)
      fb.launches.push_back({a.name, a.durationUs, a.iteration});
  fb.tracedForwards = summary->iterations;
  const auto& roof = ceilings(cancel);
  auto ncu = ncuMetrics(s, cancel);
  auto kernels = prof::mapKernelsToSource(*summary, ncu ? *ncu : std::vector<prof::KernelMetrics>{});
  fb.metricsSource = ncu ? "ncu" : "trace";
  const std::vector<prof::KernelMetrics> judged = ncu ? *ncu : prof::kernelMetricsOf(kernels);
  fb.verifier = prof::verifierFeedback(judged, roof, s.floor);
  if (ncu)
    if (auto hot = hottest(judged, roof); hot && hot->second) {
      fb.bound = prof::boundName(hot->second->bound);
      fb.achievedPct = 100 * hot->second->achievedFraction;
    }

  // One line a person can scan: the forward's kernels by GPU time, with bound when ncu ran.
  std::vector<const prof::SourceKernel*> order;
  double total = 0;
  for (const auto& k : kernels) order.push_back(&k), total += k.gpuUs;
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->gpuUs > b->gpuUs; });
  std::string list;
  for (std::size_t i = 0; i < order.size() && i < 3; ++i) {
    const auto& k = *order[i];
    list += (list.empty() ? "" : ", ") + prof::shortKernelName(k.name) + " " + duration(k.gpuUs) + " (" +
            fixed(total > 0 ? 100 * k.gpuUs / total : 0, 0) + "%";
    if (k.metrics)
      if (auto p = prof::classify(*k.metrics, roof))
        list += ", " + prof::boundName(p->bound) + "-bound " + fixed(100 * p->achievedFraction, 0) + "%";
    list += ")";
  }
  log_("info", s.id + ": " + std::to_string(kernels.size()) + " kernel(s), " + duration(total) +
                   " of GPU time per forward (" + fb.metricsSource + ")" + (list.empty() ? "" : ": " + list));
  return prof::candidateProfileParams(request_.jobId, request_.uri, s.id, kernels,
                                      placementFromPlan(plan, s.replaced, kernels), roof);
}

}  // namespace stitch::agents::loop
