// The BASELINE phase; see BaselineJob.h. Each harness step is one worker call whose failure
// ends the job with the harness's own error (file and line when it has them).
#include "agents/BaselineJob.h"

#include "protocol/NumberText.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace stitch::agents {
namespace {

using protocol::json;

using protocol::fixed;

std::string describe(const WorkerError& e) {
  std::string where;
  if (e.file) where = *e.file + (e.line ? ":" + std::to_string(*e.line) : "") + ": ";
  return where + e.message + " [" + e.code + "]";
}

// Runs one step; on failure fills `failed` and returns nullopt.
class Steps {
public:
  Steps(const JobRequest& request, JobContext& context, Worker& worker)
      : request_(request), context_(context), worker_(worker) {}

  void log(const std::string& message, const std::string& level = "info") {
    context_.emit(protocol::LogParams{request_.jobId, level, "BASELINE", message});
  }

  std::optional<json> call(const std::string& method, const json& params, std::chrono::milliseconds deadline,
                           const std::string& progress, int percentage) {
    if (context_.cancelToken().cancelled()) return fail("cancelled", "cancelled before " + method + timeline());
    context_.progress(progress, percentage);
    const auto start = std::chrono::steady_clock::now();
    WorkerReply reply = worker_.call(method, params, deadline, context_.cancelToken());
    taken_.emplace_back(method, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (reply.ok()) return reply.result;
    if (reply.error->code == "cancelled") return fail("cancelled", reply.error->message + timeline());
    const WorkerError shown = asTheUserKnowsIt(*reply.error);
    log(method + " failed: " + describe(shown), "error");
    return fail("failed", describe(shown));
  }

  protocol::JobFinishedParams finished() const { return finished_; }

  // "steps: hello 1.4 s, loadTask 0.3 s, ...": where the phase's seconds went, for the log
  // (bench/first_candidate_phases.py reads it).
  void logSteps() {
    std::string s;
    for (const auto& [method, seconds] : taken_) s += (s.empty() ? "" : ", ") + method + " " + fixed(seconds, 1) + " s";
    log("steps: " + s);
  }

  double lastSeconds() const { return taken_.empty() ? 0.0 : taken_.back().second; }

private:
  // " (hello 6.1 s, loadTask 22.3 s, captureGraph 41.0 s)": where a job stopped from outside spent
  // its time, so a task timeout names the step that took it.
  std::string timeline() const {
    std::string s;
    for (const auto& [method, seconds] : taken_) s += (s.empty() ? " (" : ", ") + method + " " + fixed(seconds, 1) + " s";
    return s.empty() ? s : s + ")";
  }

  // The harness ran the job's snapshot of the model; the error names the user's own file instead.
  WorkerError asTheUserKnowsIt(WorkerError e) const {
    if (request_.userFile.empty()) return e;
    const std::string snapshot = request_.taskFile.string();
    if (e.file && *e.file == snapshot) e.file = request_.userFile;
    for (auto at = e.message.find(snapshot); at != std::string::npos; at = e.message.find(snapshot, at + request_.userFile.size()))
      e.message.replace(at, snapshot.size(), request_.userFile);
    return e;
  }

  std::nullopt_t fail(const std::string& state, const std::string& message) {
    finished_.state = state;
    finished_.message = message;
    return std::nullopt;
  }

  const JobRequest& request_;
  JobContext& context_;
  Worker& worker_;
  protocol::JobFinishedParams finished_{"", "failed", std::nullopt, std::nullopt, ""};
  std::vector<std::pair<std::string, double>> taken_;  // each step's method and seconds, in order
};

std::string duration(double us) { return us >= 1000.0 ? fixed(us / 1000.0, 2) + " ms" : fixed(us, 0) + " µs"; }

// The harness's per-line table (one-based lines, operator names) as the editor's profile:
// zero-based lines, the operators behind each line, and inline text for the hottest lines.
protocol::ProfileParams toProfile(const JobRequest& request, const json& result) {
  constexpr double kInlineShare = 0.05;  // lines under 5% of the forward get no inline text
  constexpr std::size_t kInlineLines = 5;
  protocol::ProfileParams p;
  p.jobId = request.jobId;
  p.uri = request.uri;
  p.subject = "reference";
  p.totalGpuTimeUs = result.value("totalUs", 0.0);
  p.timeKind = result.value("timeKind", "gpu");
  bool gpu = p.timeKind == "gpu";
  for (const json& l : result.value("lines", json::array())) {
    protocol::ProfileLine line;
    line.line = l.at("line").get<int>() - 1;
    line.gpuTimeUs = l.at("timeUs").get<double>();
    line.share = l.value("share", 0.0);
    for (const json& op : l.value("ops", json::array())) line.kernels.push_back(op.value("name", "?"));
    p.lines.push_back(std::move(line));
  }
  std::sort(p.lines.begin(), p.lines.end(), [](const auto& a, const auto& b) { return a.gpuTimeUs > b.gpuTimeUs; });
  for (std::size_t i = 0; i < p.lines.size() && i < kInlineLines; ++i)
    if (p.lines[i].share >= kInlineShare)
      p.lines[i].inlineText = duration(p.lines[i].gpuTimeUs) + (gpu ? "" : " CPU") + " · " +
                              fixed(p.lines[i].share * 100.0, 0) + "% of forward";
  return p;
}

}  // namespace

std::optional<EagerPrecision> parseEagerPrecision(const json& loadTaskResult) {
  const json p = loadTaskResult.value("precision", json());
  if (!p.is_object()) return std::nullopt;
  auto flag = [&](const char* key) {
    auto it = p.find(key);
    return it != p.end() && it->is_boolean() && it->get<bool>();
  };
  return EagerPrecision{flag("cudnn.allow_tf32"), flag("cuda.matmul.allow_tf32")};
}

std::optional<BaselineFacts> runBaselinePhase(const JobRequest& request, JobContext& context, Worker& worker,
                                              const BaselineLimits& limits, protocol::JobFinishedParams& finished,
                                              bool withTiming) {
  Steps steps(request, context, worker);
  auto stop = [&] {
    finished = steps.finished();
    finished.jobId = request.jobId;
    return std::nullopt;
  };
  BaselineFacts facts;
  auto hello = steps.call("hello", json::object(), limits.startDeadline, "starting the harness worker", 5);
  if (!hello) return stop();
  facts.cuda = hello->value("cudaAvailable", false);
  if (facts.cuda) facts.gpu = hello->value("gpu", "");
  steps.log("harness: Python " + hello->value("python", "?") + ", PyTorch " + hello->value("torch", "?") +
            (facts.cuda ? ", GPU " + hello->value("gpu", "?") + ", driver " + hello->value("driver", "?")
                        : ", no GPU"));

  const json taskParams{{"path", request.taskFile.string()}};
  auto task = steps.call("loadTask", taskParams, limits.stepDeadline, "loading the model", 15);
  if (!task) return stop();
  facts.modelClass = task->value("modelClass", facts.modelClass);
  steps.log("task: " + task->value("modelClass", std::string("model")) + " with " +
            std::to_string(task->value("inputs", json::array()).size()) + " input(s), " +
            std::to_string(task->value("parameters", json::object()).value("count", 0)) + " parameter tensor(s)");
  facts.precision = parseEagerPrecision(*task);
  if (facts.precision)
    steps.log(std::string("precision: eager runs convolutions in ") +
              (facts.precision->convTf32 ? "TF32 (cudnn.allow_tf32)" : "fp32 (cudnn.allow_tf32 off)") +
              " and matmuls in " +
              (facts.precision->matmulTf32 ? "TF32 (cuda.matmul.allow_tf32)" : "fp32 (cuda.matmul.allow_tf32 off)") +
              "; the built-in brain's library calls follow it unless the job asks for --precision fp32");

  auto graph = steps.call("captureGraph", taskParams, limits.stepDeadline, "capturing the graph", 30);
  if (!graph) return stop();
  std::string uncovered;
  for (const json& u : graph->value("uncovered", json::array())) uncovered += " " + u.value("op", "?");
  steps.log("graph: " + std::to_string(graph->value("nodes", json::array()).size()) + " ATen operator(s)" +
            (uncovered.empty() ? "" : "; not capturable:" + uncovered));
  facts.graph = std::move(*graph);

  // Timing needs CUDA; without it the profile below holds CPU time: still worth a hover, and labelled so.
  if (facts.cuda && withTiming && !timeReference(request, context, worker, limits, finished)) return std::nullopt;

  auto profile = steps.call("profileReference", taskParams, limits.stepDeadline, "profiling the reference", 80);
  if (!profile) return stop();
  try {
    auto p = toProfile(request, *profile);
    for (const auto& l : p.lines) facts.lineTimesUs[l.line + 1] += l.gpuTimeUs;
    context.emit(std::move(p));
  } catch (const std::exception& e) {
    steps.log(std::string("the reference profile did not parse: ") + e.what(), "error");
    finished = protocol::JobFinishedParams{request.jobId, "failed", std::nullopt, std::nullopt,
                                           "the harness returned a profile the host cannot read"};
    return std::nullopt;
  }
  steps.logSteps();
  return facts;
}

std::optional<json> timeReference(const JobRequest& request, JobContext& context, Worker& worker,
                                  const BaselineLimits& limits, protocol::JobFinishedParams& finished,
                                  const std::string& beside, bool withCompile) {
  Steps steps(request, context, worker);
  json params{{"path", request.taskFile.string()},
              {"cacheDir", (request.jobDir.parent_path() / ".baseline-cache").string()},
              {"compile", withCompile},
              {"timer", {{"maxSeconds", limits.timingSeconds}}}};
  auto baseline = steps.call("baseline", params, limits.stepDeadline,
                             withCompile ? "timing eager and torch.compile" : "timing eager", 50);
  if (!baseline) {
    finished = steps.finished();
    finished.jobId = request.jobId;
    return std::nullopt;
  }
  auto ms = [](const json& t) {
    if (t.is_object() && t.contains("median_ms")) return fixed(t["median_ms"].get<double>(), 3) + " ms";
    if (t.is_object() && t.contains("error")) return "unavailable (" + t["error"].value("message", "failed") + ")";
    return std::string("not run");
  };
  std::string note = "timed in " + fixed(steps.lastSeconds(), 1) + " s";
  if (baseline->value("cached", false)) note = "cached, " + note;
  if (!beside.empty()) note += ", while " + beside + " ran";
  const json compiled = baseline->value("compile", json());
  const std::string compileText =
      withCompile || !compiled.is_null() ? ms(compiled) : std::string("after the first verified candidate");
  steps.log("baseline: eager " + ms(baseline->value("eager", json())) + ", torch.compile " + compileText + " (" + note +
            ")");
  return baseline;
}

protocol::JobFinishedParams BaselineJob::run(const JobRequest& request, JobContext& context) {
  auto worker = workers_([&](const json& event) {
    if (event.value("event", "") != "log") return;
    context.emit(protocol::LogParams{request.jobId, event.value("level", "info"), "BASELINE",
                                     event.value("message", "")});
  });
  protocol::JobFinishedParams finished;
  auto facts = runBaselinePhase(request, context, *worker, limits_, finished);
  if (!facts) return finished;
  if (!facts->cuda)
    return protocol::JobFinishedParams{request.jobId, "noImprovement", std::nullopt, std::nullopt,
                                       "graph captured and CPU time profiled; timing and verification need a GPU, "
                                       "and none is visible",
                                       true};
  return protocol::JobFinishedParams{request.jobId, "noImprovement", std::nullopt, std::nullopt,
                                     "reference measured and profiled; no candidate was generated"};
}

}  // namespace stitch::agents
