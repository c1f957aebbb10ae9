// stitchcuda: the agent host. `serve` speaks LSP + stitchcuda/* over stdio; `optimize`
// runs the same job headless in a terminal; `bench` runs a suite of tasks through `optimize`.
#include "agents/builtin/BuiltinBrain.h"
#include "agents/builtin/emit/CeilingProgram.h"
#include "agents/llm/LlmJob.h"
#include "agents/loop/OptimizeLoop.h"
#include "process/ChildGroups.h"
#include "server/BenchCommand.h"
#include "server/CommandLine.h"
#include "server/Config.h"
#include "server/HeadlessOptimize.h"
#include "server/HeadlessVerify.h"
#include "server/RewardCommand.h"
#include "server/ScoreCommand.h"
#include "server/HostShutdown.h"
#include "server/Logger.h"
#include "server/PythonDiscovery.h"
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
namespace cli = stitch::server::cli;

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
    const double loadTimeout = options.loadTimeout.value_or(config.loadTimeoutSeconds);
    server::WorkerSettings settings{config.python, config.harnessDir, {}, options.gpu, loadTimeout};
    agents::WorkerFactory workers = [settings](std::function<void(const protocol::json&)> onEvent) {
      return std::make_unique<server::WorkerProcess>(settings, std::move(onEvent));
    };
    agents::loop::LoopLimits limits;
    limits.baseline.stepDeadline = server::callDeadline(config.workerDeadline, loadTimeout);
    limits.verifyDeadline = server::callDeadline(limits.verifyDeadline, loadTimeout);
    limits.profile.ncuRuns = config.ncuRuns;
    static const std::string gemmCeiling = agents::builtin::gemmCeilingProgram();  // 40 kB, the same for every job
    limits.profile.gemmCeilingProgram = gemmCeiling;
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

// `serve`: LSP + stitchcuda/* over stdio, for the editor.
CLI::App* addServeCommand(CLI::App& app, server::InputOptions& input) {
  CLI::App* cmd = app.add_subcommand(
      "serve", "LSP and the stitchcuda/* methods over stdio (protocol/PROTOCOL.md): what the editor starts");
  cli::addValue(
      *cmd, "--input-style", input.delimited,
      [](const std::string& name, const std::string& text) {
        return cli::oneOf(name, text, {"standard", "delimited"}) == "delimited";
      },
      "standard: LSP's Content-Length framing (default); delimited: messages between --- lines, as transcripts are written",
      "standard|delimited");
  cli::addValue(
      *cmd, "--input-mirror", input.mirrorFile,
      [](const std::string&, const std::string& text) { return decltype(input.mirrorFile)(text); },
      "also write what the client sends to FILE (a session to replay as a transcript)", "FILE");
  cmd->footer("exit: 0 when the client asked for shutdown first, 1 when it exited or went away without that, 128 + N "
              "at signal N");
  return cmd;
}

int serve(const cli::CommonOptions& common, const server::InputOptions& input) {
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

  CLI::App app("StitchCUDA's agent host: `serve` for the editor, the other commands in a terminal.", "stitchcuda");
  cli::configureApp(app, "stitchcuda 0.1.0");
  app.footer("stitchcuda COMMAND --help: a command's options (each as --name value or --name=value) and exit codes.");

  cli::CommonOptions common;
  common.config = server::HostConfig::defaults(argv[0]);
  server::InputOptions input;
  server::OptimizeArgs optimize;
  server::VerifyArgs verify;
  server::ScoreArgs score;
  server::BenchArgs bench;
  server::RewardArgs reward;
  bench.argv.assign(argv, argv + argc);
  CLI::App* serveCommand = addServeCommand(app, input);
  CLI::App* optimizeCommand = server::addOptimizeCommand(app, optimize);
  CLI::App* verifyCommand = server::addVerifyCommand(app, verify);
  CLI::App* scoreCommand = server::addScoreCommand(app, score);
  CLI::App* rewardCommand = server::addServeRewardCommand(app, reward);
  CLI::App* benchCommand = server::addBenchCommand(app, bench);
  for (CLI::App* command : {serveCommand, optimizeCommand, verifyCommand, scoreCommand, benchCommand, rewardCommand})
    command->group("Commands");
  // The options every command shares, defined once (CommandLine.h); `bench` passes them on to its optimize runs.
  for (CLI::App* command : {serveCommand, optimizeCommand})
    cli::addSharedOptions(*command, common, cli::kAllShared);
  // verify and score run no agent, so record no CODE/REFINE steps; verify asks no model either
  // (score's --judge does).
  cli::addSharedOptions(*verifyCommand, common, cli::kAllShared & ~cli::kLlm & ~cli::kTransitions);
  cli::addSharedOptions(*scoreCommand, common, cli::kAllShared & ~cli::kTransitions);
  cli::addSharedOptions(*rewardCommand, common, cli::kLogging | cli::kPython | cli::kJobs);
  cli::addSharedOptions(*benchCommand, common, cli::kAllShared & ~cli::kTransitions);
  // The suite measures speedups: Nsight Compute (7–10 s a run) only when asked for.
  benchCommand->preparse_callback([&common](std::size_t) { common.config.ncuRuns = 0; });

  if (argc < 2) {  // no command: what there is, and a usage error
    std::cout << app.help();
    return 2;
  }
  if (auto status = cli::parse(app, argc, argv)) return *status;
  if (app.get_subcommands().empty()) {
    std::cerr << "stitchcuda: which command? (stitchcuda --help lists them)\n";
    return 2;
  }
  server::Logger::instance().setLevel(common.logLevel);
  if (common.logFile) server::Logger::instance().openFile(*common.logFile);
  // A command that holds a StopOnSignal (serve, optimize, verify, bench) stops itself at the first signal;
  // the others stop their children and exit at once.
  server::watchTerminationSignals(std::chrono::seconds(10));

  // A terminal command without --python takes the rule's interpreter (PythonDiscovery.h); `serve`
  // takes what the editor starts it with (its stitchcuda.pythonPath, else the Python extension's choice).
  for (CLI::App* command : {optimizeCommand, verifyCommand, scoreCommand, benchCommand, rewardCommand})
    if (command->parsed() && command->get_option("--python")->count() == 0) {
      auto python = server::findTorchPython();
      if (!python) {
        std::cerr << "stitchcuda " << command->get_name() << ": " << python.error().message << "\n";
        return 2;
      }
      common.config.python = python.value();
    }

  if (serveCommand->parsed()) return serve(common, input);
  if (optimizeCommand->parsed()) return server::runHeadlessOptimize(common.config, runnerFactory(), optimize);
  if (verifyCommand->parsed()) return server::runHeadlessVerify(common.config, verify);
  if (scoreCommand->parsed()) return server::runScore(common.config, score);
  if (rewardCommand->parsed()) return server::runServeReward(common.config, reward);
  return server::runBench(common.config, bench);
}
