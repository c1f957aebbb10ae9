// `stitchcuda serve-reward`: the rubric reward and the verifier over HTTP, for trainers that score
// candidates remotely (protocol/REWARD_SERVICE.md). This file holds its command line; the service
// itself is RewardService.cpp (built where cpp-httplib was found) or RewardServiceUnavailable.cpp.
#pragma once

#include "server/CommandLine.h"
#include "server/Config.h"
#include "server/SlurmArray.h"

#include <cstddef>
#include <optional>
#include <string>

namespace stitch::server {

// What `serve-reward` was asked, as its command line said it.
struct RewardArgs {
  std::string host = "127.0.0.1";
  std::optional<int> port;       // required; 0: any free port (the one taken is printed)
  std::optional<int> gpus;       // one worker per GPU, each seeing only its own
  std::optional<int> cpuSlots;   // --jobs N: workers where there is no GPU (default 1)
  std::optional<int> queue;      // requests that may wait for a worker (default 8 per worker)
  std::size_t maxBodyBytes = 4 << 20;
  std::optional<std::string> tokenEnv;  // the environment variable holding the bearer token
  std::optional<std::string> root;      // paths in requests must lie under it (default: the working directory)
  SlurmOptions slurm;                   // --slurm: each worker a Slurm job (--gpus or --jobs of them)

  int workers() const { return gpus ? *gpus : cpuSlots.value_or(1); }
  int queueCapacity() const { return queue ? *queue : 8 * workers(); }
};

// Adds the `serve-reward` command and its own options to `app`, filling `args` as it parses.
CLI::App* addServeRewardCommand(CLI::App& app, RewardArgs& args);
// Serves until SIGTERM/SIGINT/SIGHUP (then 128 + the signal); 2 when it cannot start.
int runServeReward(const HostConfig& config, const RewardArgs& args);

}  // namespace stitch::server
