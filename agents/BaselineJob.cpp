// The BASELINE phase; see BaselineJob.h. Each harness step is one worker call whose failure
// ends the job with the harness's own error (file and line when it has them).
#include "agents/BaselineJob.h"

#include <cstdio>

namespace stitch::agents {
namespace {

using protocol::json;

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

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
    if (context_.cancelToken().cancelled()) return fail("cancelled", "cancelled before " + method);
    context_.progress(progress, percentage);
    WorkerReply reply = worker_.call(method, params, deadline, context_.cancelToken());
    if (reply.ok()) return reply.result;
    if (reply.error->code == "cancelled") return fail("cancelled", reply.error->message);
    log(method + " failed: " + describe(*reply.error), "error");
    return fail("failed", describe(*reply.error));
  }

  protocol::JobFinishedParams finished() const { return finished_; }

private:
  std::nullopt_t fail(const std::string& state, const std::string& message) {
    finished_.state = state;
    finished_.message = message;
    return std::nullopt;
  }

  const JobRequest& request_;
  JobContext& context_;
  Worker& worker_;
  protocol::JobFinishedParams finished_{"", "failed", std::nullopt, std::nullopt, ""};
};

protocol::ProfileParams toProfile(const JobRequest& request, const json& result) {
  protocol::ProfileParams p;
  p.jobId = request.jobId;
  p.uri = request.uri;
  p.subject = "reference";
  p.totalGpuTimeUs = result.value("totalGpuTimeUs", 0.0);
  for (const json& l : result.value("lines", json::array())) p.lines.push_back(l.get<protocol::ProfileLine>());
  return p;
}

}  // namespace

protocol::JobFinishedParams BaselineJob::run(const JobRequest& request, JobContext& context) {
  auto worker = workers_([&](const json& event) {
    if (event.value("event", "") != "log") return;
    context.emit(protocol::LogParams{request.jobId, event.value("level", "info"), "BASELINE",
                                     event.value("message", "")});
  });
  Steps steps(request, context, *worker);

  auto hello = steps.call("hello", json::object(), limits_.startDeadline, "starting the harness worker", 5);
  if (!hello) return steps.finished();
  bool cuda = hello->value("cudaAvailable", false);
  steps.log("harness: Python " + hello->value("python", "?") + ", PyTorch " + hello->value("torch", "?") +
            (cuda ? ", GPU " + hello->value("gpu", "?") + ", driver " + hello->value("driver", "?")
                  : ", no GPU"));

  auto task = steps.call("loadTask", json{{"path", request.taskFile.string()}}, limits_.stepDeadline,
                         "loading the model", 15);
  if (!task) return steps.finished();
  steps.log("task: " + task->value("modelClass", std::string("model")) + " with " +
            std::to_string(task->value("inputs", json::array()).size()) + " input(s)");

  auto graph = steps.call("captureGraph", json::object(), limits_.stepDeadline, "capturing the graph", 30);
  if (!graph) return steps.finished();
  auto uncovered = graph->value("uncovered", json::array());
  steps.log("graph: " + std::to_string(graph->value("nodes", json::array()).size()) + " operator node(s), " +
            std::to_string(uncovered.size()) + " not capturable");

  if (!cuda) {
    protocol::JobFinishedParams done{request.jobId, "noImprovement", std::nullopt, std::nullopt,
                                     "graph captured; timing and verification need a GPU, and none is visible"};
    return done;
  }

  json cacheDir = (request.jobDir.parent_path() / ".baseline-cache").string();
  auto baseline = steps.call("baseline", json{{"cacheDir", cacheDir}}, limits_.stepDeadline,
                             "timing eager and torch.compile", 50);
  if (!baseline) return steps.finished();
  auto ms = [](const json& t) { return t.is_object() ? fixed(t.value("medianMs", 0.0), 3) + " ms" : std::string("n/a"); };
  steps.log("baseline: eager " + ms(baseline->value("eager", json())) + ", torch.compile " +
            ms(baseline->value("compile", json())));

  auto profile = steps.call("profileReference", json::object(), limits_.stepDeadline,
                            "profiling the reference", 80);
  if (!profile) return steps.finished();
  try {
    context.emit(toProfile(request, *profile));
  } catch (const std::exception& e) {
    steps.log(std::string("the reference profile did not parse: ") + e.what(), "error");
    return protocol::JobFinishedParams{request.jobId, "failed", std::nullopt, std::nullopt,
                                       "the harness returned a profile the host cannot read"};
  }
  return protocol::JobFinishedParams{request.jobId, "noImprovement", std::nullopt, std::nullopt,
                                     "reference measured and profiled; no candidate was generated"};
}

}  // namespace stitch::agents
