// The serve-reward command line; see RewardCommand.h.
#include "server/RewardCommand.h"

#include "server/RewardAccess.h"

namespace stitch::server {

CLI::App* addServeRewardCommand(CLI::App& app, RewardArgs& a) {
  CLI::App* cmd = app.add_subcommand(
      "serve-reward", "the rubric reward and the verifier over HTTP, for trainers (protocol/REWARD_SERVICE.md)");
  cli::addValue(
      *cmd, "--port", a.port,
      [](const std::string& name, const std::string& text) {
        const int port = cli::nonNegativeWholeNumber(name, text);
        if (port > 65535) throw cli::UsageError(name + " takes a port from 0 to 65535, not " + text);
        return std::optional<int>(port);
      },
      "the port to listen on (required; 0: any free port, printed when listening)", "P");
  cli::addText(*cmd, "--host", a.host,
               "the address to listen on (default 127.0.0.1); any other than loopback needs --token-env", "H");
  cli::addValue(
      *cmd, "--gpus", a.gpus,
      [](const std::string& name, const std::string& text) { return std::optional<int>(cli::positiveWholeNumber(name, text)); },
      "one worker per GPU, GPUs 0..N-1, each candidate alone on its GPU", "N");
  cli::addValue(
      *cmd, "--jobs", a.cpuSlots,
      [](const std::string& name, const std::string& text) { return std::optional<int>(cli::positiveWholeNumber(name, text)); },
      "without GPUs: this many workers (default 1); scores come from static evidence only", "N");
  cli::addValue(
      *cmd, "--queue", a.queue,
      [](const std::string& name, const std::string& text) {
        return std::optional<int>(cli::nonNegativeWholeNumber(name, text));
      },
      "requests that may wait for a worker (default 8 per worker); past it: 429 with Retry-After", "N");
  cli::addValue(
      *cmd, "--max-body", a.maxBodyBytes,
      [](const std::string& name, const std::string& text) {
        return static_cast<std::size_t>(cli::positiveWholeNumber(name, text));
      },
      "the largest request body in bytes (default 4194304); past it: 413", "BYTES");
  cli::addText(*cmd, "--token-env", a.tokenEnv,
               "the environment variable holding the bearer token every request must carry (required beyond loopback)",
               "VAR");
  cli::addText(*cmd, "--root", a.root,
               "file paths in requests must lie under this folder (default: the working directory)", "DIR");
  addSlurmOptions(*cmd, a.slurm);
  cmd->footer(
      "POST /v1/score (score --json's reward), POST /v1/verify (verify --json's verdict), GET /v1/health,\n"
      "GET /v1/metrics (JSON, or Prometheus text with Accept: text/plain). One request per worker at a time;\n"
      "a full queue answers 429 with Retry-After. Prints `listening on http://HOST:PORT` when ready.\n"
      "--slurm: each worker (--gpus N, or --jobs N without GPUs) is a long-lived Slurm job that connects back.\n"
      "exit: 128 + N when signal N stopped it, 2 when it cannot start");
  cmd->callback([&a, cmd] {
    if (!a.port) throw cli::UsageError("--port P is required (0: any free port)");
    if (a.gpus && a.cpuSlots)
      throw cli::UsageError("--gpus and --jobs each set the workers: --gpus N on a GPU machine, --jobs N without GPUs");
    if (!a.slurm.enabled && !a.slurm.element)
      for (const auto& name : slurmOptionNames())
        if (cmd->get_option(name)->count() > 0) throw cli::UsageError(name + " is for --slurm");
    if (!isLoopbackHost(a.host) && !a.tokenEnv)
      throw cli::UsageError("--host " + a.host +
                            " listens beyond this machine: give --token-env VAR, the variable holding the bearer token");
  });
  return cmd;
}

}  // namespace stitch::server
