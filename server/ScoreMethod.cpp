// stitchcuda/score; see ScoreMethod.h.
#include "server/ScoreMethod.h"

#include "server/Scoring.h"
#include "server/Uri.h"
#include "server/WorkerProcess.h"

#include "agents/UntrustedFiles.h"

#include <boost/asio/post.hpp>

#include <memory>

namespace stitch::server {

using protocol::json;

json candidateScoreRequest(const agents::JobState& job, const std::string& candidateId) {
  if (!job.candidate(candidateId)) throw std::invalid_argument("job " + job.jobId + " has no candidate " + candidateId);
  const std::filesystem::path jobDir = std::filesystem::path(job.logPath).parent_path();
  const auto path = uriToPath(job.uri);
  const std::string fileName = path ? std::filesystem::path(*path).filename().string() : "task.py";
  const std::filesystem::path candidate = jobDir / "candidates" / candidateId;
  // The id may come from a log anyone wrote: it names a folder of this job, never one elsewhere.
  if (!agents::liesInside(jobDir / "candidates", candidate) || candidate.filename() != candidateId)
    throw std::invalid_argument("the candidate id \"" + candidateId + "\" names no folder inside " +
                                (jobDir / "candidates").string() + "; refused");
  json request{{"reference", (jobDir / fileName).string()}, {"candidate", candidate.string()}};
  // The loop writes each judged candidate's verdict beside it: scoring then needs no GPU and no re-run.
  if (std::filesystem::is_regular_file(candidate / "verdict.json")) request["verdict"] = (candidate / "verdict.json").string();
  if (job.plan && job.plan->coverage) request["coverage"] = *job.plan->coverage;
  return request;
}

void bindScoreMethod(Dispatcher& dispatcher, boost::asio::thread_pool& pool, const HostConfig& config,
                     const std::unique_ptr<JobManager>& jobs) {
  dispatcher.addRequest("stitchcuda/score", [&pool, &config, &jobs](const json& params, Reply reply, CancelToken cancel) {
    ScoreInputs inputs;
    try {
      json request = params;
      if (params.is_object() && params.contains("jobId")) {
        auto job = jobs ? jobs->state(params.value("jobId", "")) : std::nullopt;
        if (!job) throw std::invalid_argument("no job " + params.value("jobId", ""));
        request = candidateScoreRequest(*job, params.value("candidateId", ""));
        if (params.contains("weights")) request["weights"] = params["weights"];
      }
      inputs = scoreInputsFrom(request);
    } catch (const std::exception& e) {
      return reply.error(protocol::ErrorCode::InvalidParams, e.what());
    }
    auto shared = std::make_shared<Reply>(std::move(reply));
    boost::asio::post(pool, [shared, inputs = std::move(inputs), &config, cancel]() mutable {
      WorkerProcess worker(WorkerSettings{config.python, config.harnessDir, {}, std::nullopt, config.loadTimeoutSeconds},
                           [](const json&) {});
      auto r = scoreCandidate(worker, std::move(inputs), config.jobsDir / ".verify-cache",
                              callDeadline(config.workerDeadline, config.loadTimeoutSeconds), cancel);
      if (r.ok()) return (*shared)(r.value());
      if (r.error().code == "cancelled") return shared->error(protocol::ErrorCode::RequestCancelled, "score cancelled");
      shared->error(protocol::ErrorCode::RequestFailed, r.error().message + " [" + r.error().code + "]");
    });
  });
}

}  // namespace stitch::server
