// `stitchcuda serve-reward` over cpp-httplib; see RewardCommand.h and protocol/REWARD_SERVICE.md.
//
// Requests are scored in this process, through the same functions `score` and `verify` call
// (scoreCandidate, the harness's verify): nothing on that path holds global state — each slot of the
// pool owns its harness worker, the way `score --batch --gpus N` gives each GPU a thread and a
// worker — so a child `stitchcuda score` per request would only add a process start and a second
// parse of every answer. The candidate's code runs in the slot's harness worker, never in the service.
#include "server/RewardCommand.h"

#include "server/HostShutdown.h"
#include "server/Logger.h"
#include "server/RewardAccess.h"
#include "server/RewardMetrics.h"
#include "server/RewardPool.h"
#include "server/RewardRequest.h"
#include "server/RewardSlurmNode.h"
#include "server/RewardSlurmWorkers.h"
#include "server/WorkerProcess.h"

#include <httplib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <unistd.h>
#include <variant>

namespace stitch::server {
namespace {

using protocol::json;
namespace fs = std::filesystem;

void sendJson(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

void sendError(httplib::Response& res, int status, const std::string& code, const std::string& message,
               const json& detail = json::object()) {
  json error{{"code", code}, {"message", message}};
  error.update(detail);
  sendJson(res, status, {{"error", error}});
}

std::string endpointOf(const std::string& path) {
  for (const char* name : {"score", "verify", "health", "metrics"})
    if (path == std::string("/v1/") + name) return name;
  return "other";
}

// The whole service: its settings, pool, metrics and HTTP server, alive for one run of the command.
class RewardService {
public:
  // `slurm`: the workers are its jobs (--slurm), else local harness workers, one per entry of `gpus`.
  RewardService(const HostConfig& config, const RewardArgs& args, std::vector<std::optional<int>> gpus,
                std::optional<std::string> token, RewardSettings settings, RewardSlurmWorkers* slurm)
      : args_(args), token_(std::move(token)), settings_(std::move(settings)), slurm_(slurm),
        pool_(std::move(gpus), static_cast<std::size_t>(args.queueCapacity()),
              slurm ? slurm->factory() : workerFactory(config, args.workers()), std::chrono::seconds(120), args.slurm.retries) {
    const std::size_t threads = static_cast<std::size_t>(args.workers() + args.queueCapacity()) + kSpareThreads;
    http_.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    http_.set_payload_max_length(args.maxBodyBytes);
    // One request per connection: a scoring request takes seconds, and a kept-alive idle
    // connection would hold one of the threads the queue's requests wait on.
    http_.set_keep_alive_max_count(1);
    // Every error has a JSON body, also those cpp-httplib answers itself (413, 404, a malformed request).
    http_.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;  // one of ours, counted
      metrics_.answered(endpointOf(req.path), res.status);
      if (res.status == 413)
        sendError(res, 413, "body_too_large", tooLarge());
      else if (res.status == 404)
        sendError(res, 404, "not_found",
                  "no endpoint " + req.method + " " + req.path +
                      "; there are POST /v1/score, POST /v1/verify, GET /v1/health and GET /v1/metrics");
      else
        sendError(res, res.status, "bad_request", "the HTTP request could not be read");
      return httplib::Server::HandlerResponse::Handled;
    }));
    http_.set_exception_handler([this](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
      std::string what = "unknown exception";
      try {
        std::rethrow_exception(ep);
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
      }
      sendError(res, 500, "internal_error", "the reward service failed: " + what);
      metrics_.answered(endpointOf(req.path), 500);
    });
    http_.Get("/v1/health", counted("health", [this](const httplib::Request&, httplib::Response& res) { health(res); }));
    http_.Get("/v1/metrics", counted("metrics", [this](const httplib::Request& req, httplib::Response& res) {
      if (authorized(req, res)) metrics(req, res);
    }));
    http_.Post("/v1/score", counted("score", [this](const httplib::Request& req, httplib::Response& res) {
      if (authorized(req, res)) run(req, res, "score", scoreWork);
    }));
    http_.Post("/v1/verify", counted("verify", [this](const httplib::Request& req, httplib::Response& res) {
      if (authorized(req, res)) run(req, res, "verify", verifyWork);
    }));
  }

  // The port it listens on, or an error saying why it cannot.
  std::variant<int, std::string> bind() {
    const int port = *args_.port == 0 ? http_.bind_to_any_port(args_.host) : *args_.port;
    if (port <= 0 || (*args_.port != 0 && !http_.bind_to_port(args_.host, port)))
      return "cannot listen on " + args_.host + ":" + std::to_string(*args_.port) + ": " + std::strerror(errno);
    return port;
  }
  bool listen() { return http_.listen_after_bind(); }
  // The waiting and running requests are answered first (503): their handlers hold the threads
  // the HTTP server joins when it stops.
  void stop() {
    pool_.stop();
    http_.stop();
  }

private:
  static constexpr std::size_t kSpareThreads = 8;  // for health, metrics and refusals while the queue is full

  static RewardPool::WorkerFactory workerFactory(const HostConfig& config, int workers) {
    return [python = config.python, harness = config.harnessDir, load = config.loadTimeoutSeconds,
            threads = cpuShare(workers)](std::size_t, std::optional<int> gpu) {
      return std::make_unique<WorkerProcess>(WorkerSettings{python, harness, {}, gpu, load, threads}, [](const json& event) {
        if (event.value("event", "") == "log") logDebug("harness: " + event.value("message", ""));
      });
    };
  }

  // Counts each answer as the handler leaves it, before it is sent: a client that reads the metrics
  // after its answer finds that answer counted.
  httplib::Server::Handler counted(std::string endpoint, httplib::Server::Handler handler) {
    return [this, endpoint = std::move(endpoint), handler = std::move(handler)](const httplib::Request& req,
                                                                                httplib::Response& res) {
      handler(req, res);
      metrics_.answered(endpoint, res.status);
    };
  }

  std::string tooLarge() const {
    return "the request body is over " + std::to_string(args_.maxBodyBytes) + " bytes (the service's --max-body)";
  }

  bool authorized(const httplib::Request& req, httplib::Response& res) {
    if (!token_ || bearerMatches(req.get_header_value("Authorization"), *token_)) return true;
    res.set_header("WWW-Authenticate", "Bearer");
    sendError(res, 401, "unauthorized", "this service needs the header Authorization: Bearer TOKEN with its token");
    return false;
  }

  void health(httplib::Response& res) {
    const auto pool = pool_.snapshot();
    std::size_t ready = 0;
    for (const auto& s : pool.slots) ready += s.hello.is_object() && !s.hello.contains("error") ? 1 : 0;
    sendJson(res, pool.stopping ? 503 : 200,
             {{"status", pool.stopping ? "stopping" : "ok"}, {"workers", pool.slots.size()}, {"workersReady", ready},
              {"device", args_.gpus ? "gpu" : "cpu"}});
  }

  void metrics(const httplib::Request& req, httplib::Response& res) {
    const auto pool = pool_.snapshot();
    const json slurm = slurm_ ? slurm_->snapshot() : json();
    if (req.get_header_value("Accept").find("text/plain") != std::string::npos) {
      std::string text = metrics_.toPrometheus(pool);
      if (slurm_) {
        text += "# HELP stitchcuda_reward_slurm_workers Slurm worker jobs by state (lost: since the start).\n"
                "# TYPE stitchcuda_reward_slurm_workers gauge\n";
        for (const char* state : {"pending", "running", "lost", "failed"})
          text += std::string("stitchcuda_reward_slurm_workers{state=\"") + state + "\"} " + slurm[state].dump() + "\n";
      }
      res.set_content(text, "text/plain; version=0.0.4");
    } else {
      json body = metrics_.toJson(pool);
      if (slurm_) body["slurmWorkers"] = slurm;
      sendJson(res, 200, body);
    }
  }

  // Reads the body, takes the request into the queue or refuses it, and answers with its outcome.
  void run(const httplib::Request& req, httplib::Response& res, const std::string& endpoint,
           RewardWork (*read)(const json&, const RewardSettings&)) {
    if (req.body.size() > args_.maxBodyBytes)  // a chunked body has no Content-Length for cpp-httplib to check
      return sendError(res, 413, "body_too_large", tooLarge());
    json body;
    try {
      body = json::parse(req.body);
    } catch (const json::exception& e) {
      return sendError(res, 400, "invalid_json", std::string("the body is not JSON: ") + e.what());
    }
    RewardWork work;
    try {
      work = read(body, settings_);
    } catch (const std::exception& e) {
      return sendError(res, 400, "invalid_request", e.what());
    }
    // With Slurm workers the body, checked here, is run whole on the worker's node; its harness calls
    // keep their own deadlines there, this one is the backstop for a worker that stopped answering.
    if (slurm_) work = slurmWork(endpoint, std::move(body), 4 * settings_.deadline + std::chrono::minutes(1));
    auto answer = pool_.submit(std::move(work));
    if (!answer) {
      const auto pool = pool_.snapshot();
      if (pool.stopping) return sendError(res, 503, "shutting_down", "the reward service is stopping");
      // Room comes when a worker finishes: about one median run divided among the workers.
      const double perSlot = metrics_.medianRunSeconds() / static_cast<double>(std::max<std::size_t>(1, pool.slots.size()));
      const int seconds = std::clamp(static_cast<int>(std::ceil(perSlot)), 1, 60);
      res.set_header("Retry-After", std::to_string(seconds));
      return sendError(res, 429, "queue_full",
                       "all " + std::to_string(pool.slots.size()) + " workers are busy and " + std::to_string(pool.queued) +
                           " requests wait; send it again after Retry-After seconds",
                       {{"retryAfterSeconds", seconds}});
    }
    RewardAnswer done = answer->get();
    metrics_.ran(done.waitedSeconds, done.ranSeconds);
    if (done.outcome.ok()) return sendJson(res, 200, done.outcome.value());
    const RewardFailure& f = done.outcome.error();
    sendError(res, f.status, f.code, f.message, f.detail);
  }

  const RewardArgs& args_;
  std::optional<std::string> token_;
  RewardSettings settings_;
  RewardSlurmWorkers* slurm_;
  RewardMetrics metrics_;
  RewardPool pool_;
  httplib::Server http_;
};

// Each worker's CUDA_VISIBLE_DEVICES, or why there is none. With several GPUs each worker sees only its
// own: the i-th of the environment's CUDA_VISIBLE_DEVICES where it is set (a scheduler's allocation,
// "2,3"), else GPU i. One worker, or CPU slots, keep the environment's.
std::variant<std::vector<std::optional<int>>, std::string> slotGpus(const RewardArgs& args) {
  std::vector<std::optional<int>> gpus(static_cast<std::size_t>(args.workers()));
  if (!args.gpus || *args.gpus == 1 || args.slurm.enabled) return gpus;  // a Slurm job's GPU is its own
  std::vector<int> visible;
  if (const char* env = std::getenv("CUDA_VISIBLE_DEVICES")) {
    std::string list = env;
    for (std::size_t start = 0; !list.empty() && start <= list.size();) {
      const std::size_t end = std::min(list.find(',', start), list.size());
      const std::string item = list.substr(start, end - start);
      if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos)
        return "--gpus " + std::to_string(*args.gpus) + " takes GPUs by index, and CUDA_VISIBLE_DEVICES=" + list +
               " names them otherwise; give it indexes";
      visible.push_back(std::stoi(item));
      start = end + 1;
    }
    if (visible.size() < gpus.size())
      return "--gpus " + std::to_string(*args.gpus) + " but CUDA_VISIBLE_DEVICES=" + list + " lists " +
             std::to_string(visible.size());
  }
  for (std::size_t i = 0; i < gpus.size(); ++i) gpus[i] = visible.empty() ? static_cast<int>(i) : visible[i];
  return gpus;
}

std::string urlHost(const std::string& host) {
  return host.find(':') != std::string::npos && host.front() != '[' ? "[" + host + "]" : host;
}

}  // namespace

int runServeReward(const HostConfig& config, const RewardArgs& args) {
  std::optional<std::string> token;
  if (args.tokenEnv && !args.slurm.element) {  // a worker job takes no HTTP requests
    const char* value = std::getenv(args.tokenEnv->c_str());
    if (!value || !*value) {
      std::cerr << "stitchcuda serve-reward: the environment variable " << *args.tokenEnv
                << " (--token-env) is unset or empty; set it to the bearer token clients will send\n";
      return 2;
    }
    token = value;
  }
  std::error_code ec;
  const fs::path root = fs::canonical(args.root ? fs::path(*args.root) : fs::current_path(ec), ec);
  if (ec || !fs::is_directory(root)) {
    std::cerr << "stitchcuda serve-reward: --root " << args.root.value_or(".") << " is not a folder\n";
    return 2;
  }
  const fs::path scratch = config.jobsDir / "serve-reward" / std::to_string(::getpid());
  RewardSettings settings{root, scratch, config.jobsDir / ".verify-cache",
                          callDeadline(config.workerDeadline, config.loadTimeoutSeconds)};
  if (args.slurm.element) {  // a worker job on its node
    settings.scratch = config.jobsDir / "serve-reward" / ("slurm-" + std::to_string(*args.slurm.element) + "-" +
                                                          std::to_string(::getpid()));
    const int code = runRewardSlurmNode(config, settings, args.slurm);
    fs::remove_all(settings.scratch, ec);
    return code;
  }
  auto gpus = slotGpus(args);
  if (const auto* error = std::get_if<std::string>(&gpus)) {
    std::cerr << "stitchcuda serve-reward: " << *error << "\n";
    return 2;
  }
  // The worker jobs' folder on the shared filesystem, kept after the service for their logs.
  std::optional<RewardSlurmWorkers> slurm;
  if (args.slurm.enabled) {
    slurm.emplace(args.slurm, static_cast<std::size_t>(args.workers()),
                  config.jobsDir / "serve-reward" / ("slurm-" + std::to_string(::getpid())));
    if (auto error = slurm->start()) {
      std::cerr << "stitchcuda serve-reward: " << *error << "\n";
      return 2;
    }
  }
  int exitCode = 0;
  {
    RewardService service(config, args, std::get<0>(std::move(gpus)), std::move(token), settings,
                          slurm ? &*slurm : nullptr);
    const auto bound = service.bind();
    if (const auto* error = std::get_if<std::string>(&bound)) {
      std::cerr << "stitchcuda serve-reward: " << *error << "\n";
      return 2;
    }
    StopOnSignal stopOnSignal([&service](int) { service.stop(); });
    std::cout << "listening on http://" << urlHost(args.host) << ":" << std::get<int>(bound) << std::endl;
    logInfo("serve-reward: " + std::to_string(args.workers()) + (args.gpus ? " GPU" : " CPU") +
            (slurm ? " Slurm" : "") + " worker(s), queue of " +
            std::to_string(args.queueCapacity()) + (token ? ", bearer token required" : ""));
    const bool listened = service.listen();
    if (int signal = terminationSignal()) exitCode = 128 + signal;
    else if (!listened) {
      std::cerr << "stitchcuda serve-reward: stopped accepting connections: " << std::strerror(errno) << "\n";
      exitCode = 2;
    }
  }
  if (slurm) slurm->stop();  // scancel, before the exit says it stopped
  fs::remove_all(scratch, ec);
  logInfo("serve-reward: stopped");
  return exitCode;
}

}  // namespace stitch::server
