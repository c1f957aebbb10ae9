// A serve-reward worker job on its node; see RewardSlurmNode.h.
#include "server/RewardSlurmNode.h"

#include "server/LineSocket.h"
#include "server/HostShutdown.h"
#include "server/Logger.h"
#include "server/ResultFiles.h"
#include "server/WorkerProcess.h"

#include <iostream>
#include <thread>

namespace stitch::server {
namespace {

using protocol::json;
using namespace std::chrono_literals;

// The service, through its connection retried for a while: it may be busy taking other workers.
std::unique_ptr<LineSocket> connectBack(const json& service) {
  std::string error;
  for (int attempt = 0; attempt < 30; ++attempt) {
    auto socket = LineSocket::connect(service.value("host", std::string()), service.value("port", 0));
    if (auto* s = std::get_if<std::unique_ptr<LineSocket>>(&socket)) return std::move(*s);
    error = std::get<std::string>(socket);
    std::this_thread::sleep_for(1s);
  }
  std::cerr << "stitchcuda serve-reward worker: " << error << "\n";
  return nullptr;
}

// One request, answered as a local slot answers it: an unreadable one is the client's 400, as the service
// would have said had it not checked the body already.
RewardOutcome answer(const json& message, agents::Worker& worker, const RewardSettings& settings,
                     const agents::CancelToken& cancel) {
  const std::string method = message.value("method", std::string());
  const json params = message.value("params", json());
  try {
    if (method != "score" && method != "verify") return RewardFailure{400, "invalid_request", "no endpoint " + method};
    const RewardWork work = method == "score" ? scoreWork(params, settings) : verifyWork(params, settings);
    return work(worker, cancel);
  } catch (const std::invalid_argument& e) {
    return RewardFailure{400, "invalid_request", e.what()};
  } catch (const std::exception& e) {
    return RewardFailure{500, "internal_error", std::string("the reward service's worker failed: ") + e.what()};
  }
}

// Whether the job is being taken away (scancel, a node going down): Slurm signals every process of
// the job, so the harness may die a moment before this process hears its own signal, and its answer
// would be a crash that is Slurm's doing, not the candidate's. After a crashed worker it waits that
// moment; when the job is ending, the request is left unanswered and the connection closed, so the
// service runs it again on another worker.
bool jobEnding(const RewardOutcome& outcome) {
  if (!outcome.ok() && outcome.error().code == "worker_crashed")
    for (int i = 0; i < 20 && terminationSignal() == 0; ++i) std::this_thread::sleep_for(100ms);
  return terminationSignal() != 0;
}

}  // namespace

int runRewardSlurmNode(const HostConfig& config, const RewardSettings& settings, const SlurmOptions& slurm) {
  if (!slurm.plan || !slurm.element) {
    std::cerr << "stitchcuda serve-reward: --slurm-element and --slurm-plan go together\n";
    return 2;
  }
  const auto serviceFile = slurm.plan->parent_path() / "service.json";
  const json service = json::parse(readText(serviceFile), nullptr, false);
  if (!service.is_object() || !service.contains("token")) {
    std::cerr << "stitchcuda serve-reward worker: cannot read " << serviceFile.string() << " (the service stopped?)\n";
    return 1;
  }
  const json placement = slurmPlacement();
  const std::string job = placement["job"];  // the array element: "JOB_INDEX"
  // The job's GPU is the environment's (Slurm's CUDA_VISIBLE_DEVICES): the worker sees it alone.
  WorkerProcess worker(WorkerSettings{config.python, config.harnessDir, {}, std::nullopt, config.loadTimeoutSeconds},
                       [](const json& event) {
                         if (event.value("event", "") == "log") logDebug("harness: " + event.value("message", ""));
                       });
  agents::CancelSource never;
  const auto cancel = never.token();
  auto hello = worker.call("hello", json::object(), 120s, cancel);
  auto socket = connectBack(service);
  if (!socket) return 1;
  const json hi{{"token", service["token"]},
                {"seat", *slurm.element},
                {"job", job},
                {"placement", placement},
                {"hello", hello.ok() ? *hello.result : json{{"error", hello.error->message}}}};
  if (!socket->send(hi.dump())) return 1;
  logInfo("serve-reward worker " + job + ": connected to " + service.value("host", std::string()));
  std::string line;
  while (socket->read(line, std::nullopt) == LineSocket::Read::line) {
    const json message = json::parse(line, nullptr, false);
    RewardOutcome outcome = message.is_object() ? answer(message, worker, settings, cancel)
                                                : RewardOutcome(RewardFailure{400, "invalid_request", "an unreadable message"});
    if (jobEnding(outcome)) break;
    json reply;
    if (outcome.ok()) reply["result"] = std::move(outcome).value();
    else {
      const RewardFailure& f = outcome.error();
      reply["failure"] = {{"status", f.status}, {"code", f.code}, {"message", f.message}, {"detail", f.detail}};
    }
    if (!socket->send(reply.dump(-1, ' ', false, json::error_handler_t::replace))) break;
  }
  logInfo("serve-reward worker " + job + ": the service closed the connection");
  return 0;
}

}  // namespace stitch::server
