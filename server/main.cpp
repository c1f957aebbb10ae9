// stitchcuda: the agent host. `serve` speaks LSP + stitchcuda/* over stdio; `optimize`
// runs the same job headless in a terminal; `bench` runs a suite of tasks through `optimize`.
#include "agents/builtin/BuiltinBrain.h"
#include "agents/llm/LlmJob.h"
#include "agents/loop/OptimizeLoop.h"
#include "process/ChildGroups.h"
#include "server/BenchCommand.h"
#include "server/Config.h"
#include "server/HeadlessOptimize.h"
#include "server/HeadlessVerify.h"
#include "server/ScoreCommand.h"
#include "server/HostShutdown.h"
#include "server/Logger.h"
#include "server/Server.h"
#include "server/StdioTransport.h"
#include "server/WorkerProcess.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include <condition_variable>
#include <csignal>
#include <cstring>
#include <iostream>
#include <thread>
#include <unistd.h>

namespace {

using namespace stitch;

const char* kUsage = R"(usage:
  stitchcuda serve [--input-style=standard|delimited] [--input-mirror FILE]
                   [--log FILE] [--log-level debug|info|warning|error]
                   [--jobs-dir DIR] [--python PYTHON] [--ncu-runs N]
  stitchcuda optimize FILE [--out DIR] [--kernels-folder NAME] [--json] [--brain builtin|openai|anthropic] [--model NAME]
                    [--base-url URL] [--atol A] [--rtol R] [--gpu N] [--allow-precision tf32|fp16|bf16]
                    [--precision eager|fp32] [--iterations N] [--wall-seconds S] [--jobs-dir DIR] [--python PYTHON]
                    [--ncu-runs N]   (stitchcuda optimize --help: what each does and the exit codes)
  stitchcuda verify --reference TASK.py --candidate CAND [--json] [--atol A] [--rtol R] [--trials N]
                    [--allow-precision tf32|fp16|bf16] [--precision eager|fp32] [--no-timing] [--python PYTHON]
                    [--kernelbench [--seed S]]   (KernelBench's protocol: seeded construction, 5 trials, 1e-4 and 1e-2)
  stitchcuda bench DIR|TASK.py [--out RESULTS] [--gpus N] [--resume] [--timeout SECONDS] [--deadline SECONDS]
                    [--python PYTHON] [--ncu-runs N (default 0)] [--jobs-dir DIR] [optimize's --brain/--model/--base-url/--allow-precision/--precision/--iterations/--wall-seconds]
  stitchcuda score --reference TASK.py --candidate CAND [--verdict VERDICT.json] [--previous CAND --feedback FILE]
                    [--plan PLAN.json] [--weight NAME=W]... [--json]   (the rubric reward, protocol/SCORE.md)
  stitchcuda score --batch ROWS.jsonl --out SCORES.jsonl [--gpus N]
  stitchcuda --version
Training records (serve and optimize): --record-transitions DIR writes each CODE/REFINE step with its
  rubric reward to DIR/JOB.transitions.jsonl (protocol/TRANSITIONS.md)
LLM options (serve and optimize; the key is read from the environment, never from the command line):
  --api-key-env VAR  (default STITCHCUDA_API_KEY, then OPENAI_API_KEY or ANTHROPIC_API_KEY)
  --llm-token-budget N  --llm-usd-budget USD  --llm-price IN,OUT (USD per million tokens)
  --llm-max-tokens N  --llm-temperature T  --llm-timeout SECONDS  --llm-attempts N  --llm-stream on|off
)";

struct CommonOptions {
  server::HostConfig config;
  std::optional<std::string> logFile;
  server::LogLevel logLevel = server::LogLevel::Info;
};

// Parses the options shared by the subcommands; returns false (after printing why) on a
// bad option. `rest` collects what the subcommand parses itself.
bool parseCommon(int argc, char** argv, int start, CommonOptions& common, std::vector<std::string>& rest) {
  for (int i = start; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const std::string& name) -> std::optional<std::string> {
      if (arg.rfind(name + "=", 0) == 0) return arg.substr(name.size() + 1);
      if (arg == name && i + 1 < argc) return std::string(argv[++i]);
      return std::nullopt;
    };
    if (auto v = value("--log")) common.logFile = *v;
    else if (auto v = value("--log-level")) {
      if (!server::parseLogLevel(*v, common.logLevel)) {
        std::cerr << "stitchcuda: unknown log level " << *v << "\n";
        return false;
      }
    } else if (arg.rfind("--llm-", 0) == 0 || arg.rfind("--api-key-env", 0) == 0) {
      const std::string name = arg.substr(0, arg.find('='));
      auto v = value(name);
      std::string error;
      if (!v || !common.config.applyLlmOption(name, *v, error) || !error.empty()) {
        std::cerr << "stitchcuda: " << (error.empty() ? "unknown or incomplete option " + arg : error) << "\n";
        return false;
      }
    } else if (auto v = value("--jobs-dir")) common.config.jobsDir = *v;
    else if (auto v = value("--python")) common.config.python = *v;
    else if (auto v = value("--record-transitions")) common.config.recordTransitions = *v;
    else if (auto v = value("--ncu-runs")) {
      try {
        common.config.ncuRuns = std::stoi(*v);
      } catch (const std::exception&) {
        std::cerr << "stitchcuda: --ncu-runs takes a number, not " << *v << "\n";
        return false;
      }
    }
    else rest.push_back(arg);
  }
  return true;
}

// The one place that knows whether this build has the LLM brain (libcurl found at configure time).
#if STITCH_LLM_BRAIN
std::unique_ptr<agents::JobRunner> llmRunner(const protocol::OptimizeParams& options, const server::HostConfig& config,
                                             agents::WorkerFactory workers, agents::loop::LoopLimits limits) {
  auto settings = agents::llm::resolveSettings(options.brain, options.model, options.baseUrl, config.llm);
  if (!settings) throw std::runtime_error(settings.error().message);
  return std::make_unique<agents::llm::LlmJob>(std::move(workers), limits, settings.value());
}
#else
std::unique_ptr<agents::JobRunner> llmRunner(const protocol::OptimizeParams& options, const server::HostConfig&,
                                             agents::WorkerFactory, agents::loop::LoopLimits) {
  throw std::runtime_error("this build has no LLM brain (libcurl was not found when it was configured), so the \"" +
                           options.brain + "\" brain is not available; use the builtin brain");
}
#endif

server::Server::RunnerFactory runnerFactory() {
  return [](const protocol::OptimizeParams& options,
            const server::HostConfig& config) -> std::unique_ptr<agents::JobRunner> {
    if (options.brain != "builtin" && options.brain != "openai" && options.brain != "anthropic") return nullptr;
    server::WorkerSettings settings{config.python, config.harnessDir, {}, options.gpu};
    agents::WorkerFactory workers = [settings](std::function<void(const protocol::json&)> onEvent) {
      return std::make_unique<server::WorkerProcess>(settings, std::move(onEvent));
    };
    agents::loop::LoopLimits limits;
    limits.baseline.stepDeadline = config.workerDeadline;
    limits.profile.ncuRuns = config.ncuRuns;
    limits.recordTransitions = config.recordTransitions;
    if (options.brain != "builtin") return llmRunner(options, config, std::move(workers), limits);
    return std::make_unique<agents::loop::OptimizeLoop>(
        std::move(workers), [] { return std::make_unique<agents::builtin::BuiltinBrain>(); }, limits);
  };
}

// Waits for the pool's jobs to notice cancellation; false when one is still stuck after the
// grace period (the caller then exits without waiting for it).
bool drainPool(boost::asio::thread_pool& pool, std::chrono::seconds grace) {
  std::mutex m;
  std::condition_variable cv;
  bool joined = false;
  std::thread joiner([&] {
    pool.join();
    std::lock_guard lock(m);
    joined = true;
    cv.notify_all();
  });
  std::unique_lock lock(m);
  if (!cv.wait_for(lock, grace, [&] { return joined; })) {
    joiner.detach();
    return false;
  }
  lock.unlock();
  joiner.join();
  return true;
}

int serve(CommonOptions common, const std::vector<std::string>& rest) {
  server::InputOptions input;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    const std::string& arg = rest[i];
    if (arg == "--input-style=delimited") input.delimited = true;
    else if (arg == "--input-style=standard") input.delimited = false;
    else if (arg.rfind("--input-mirror=", 0) == 0) input.mirrorFile = arg.substr(15);
    else if (arg == "--input-mirror" && i + 1 < rest.size()) input.mirrorFile = rest[++i];
    else {
      std::cerr << "stitchcuda serve: unknown option " << arg << "\n" << kUsage;
      return 2;
    }
  }
  boost::asio::io_context loop;
  auto guard = boost::asio::make_work_guard(loop);
  boost::asio::thread_pool pool(common.config.poolThreads);
  server::StdioOutput output;
  int exitCode = 1;
  {
    server::Server srv(output, pool, common.config, runnerFactory());
    srv.setOnFinished([&] {
      exitCode = srv.exitCode();
      guard.reset();
      loop.stop();
    });
    // The reader blocks on stdin on its own thread and hands frames to the loop thread, which
    // is the only one that dispatches. It is detached: at exit it may still sit in read().
    std::thread([&loop, &srv, input] {
      server::readInput(
          0, input,
          [&](protocol::Frame frame) {
            boost::asio::post(loop, [&srv, frame = std::move(frame)] {
              if (srv.finished()) return;
              if (frame.kind == protocol::Frame::Kind::Message) srv.handleBody(frame.text);
              else srv.handleFrameProblem(frame.text, frame.refusedLength > 0);
            });
          },
          [&](bool midMessage) {
            boost::asio::post(loop, [&srv, midMessage] {
              if (!srv.finished()) srv.handleEndOfInput(midMessage);
            });
          });
    }).detach();
    server::StopOnSignal stopOnSignal([&loop, &srv](int) {
      boost::asio::post(loop, [&srv] {
        if (!srv.finished()) srv.finish();
      });
    });
    server::logInfo("serving on stdio");
    loop.run();
    if (int signal = server::terminationSignal()) exitCode = 128 + signal;
    if (!drainPool(pool, std::chrono::seconds(5))) {
      server::logWarning("jobs did not stop in time; exiting with status " + std::to_string(exitCode) + " anyway");
      process::stopChildGroups(std::chrono::seconds(2));
      std::_Exit(exitCode);
    }
  }
  server::logInfo("exiting with status " + std::to_string(exitCode));
  return exitCode;
}

}  // namespace

int main(int argc, char** argv) {
  server::installHostShutdown();   // before any thread starts
  std::signal(SIGPIPE, SIG_IGN);  // a closed client pipe is an error value, not a death
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    std::cout << kUsage;
    return argc < 2 ? 2 : 0;
  }
  if (std::strcmp(argv[1], "--version") == 0) {
    std::cout << "stitchcuda 0.1.0\n";
    return 0;
  }
  CommonOptions common;
  common.config = server::HostConfig::defaults(argv[0]);
  std::string command = argv[1];
  // The suite measures speedups: Nsight Compute (7–10 s a run) only when asked for.
  if (command == "bench") common.config.ncuRuns = 0;
  std::vector<std::string> rest;
  if (!parseCommon(argc, argv, 2, common, rest)) return 2;
  server::Logger::instance().setLevel(common.logLevel);
  if (common.logFile) server::Logger::instance().openFile(*common.logFile);
  // A command that holds a StopOnSignal (serve, optimize, verify, bench) stops itself at the first signal;
  // the others stop their children and exit at once.
  server::watchTerminationSignals(std::chrono::seconds(10));

  if (command == "serve") return serve(std::move(common), rest);
  if (command == "optimize") return server::runHeadlessOptimize(common.config, runnerFactory(), rest);
  if (command == "verify") return server::runHeadlessVerify(common.config, rest);
  if (command == "score") return server::runScore(common.config, rest);
  if (command == "bench") return server::runBench(common.config, std::vector<std::string>(argv, argv + argc));
  std::cerr << "stitchcuda: unknown command " << command << "\n" << kUsage;
  return 2;
}
