// `stitchcuda optimize FILE`: the editor's job without an editor, for terminals and CI.
// Streams the job to the terminal (or as JSON lines with --json), writes a report, and
// exits 0 when a verified improvement was found, 3 when none was, 4 when no GPU could verify
// (candidates were only compiled), 1 on error, 2 on usage; --help prints its options (exit 0).
#pragma once

#include "server/CommandLine.h"
#include "server/Config.h"
#include "server/Server.h"

#include <optional>
#include <string>

namespace stitch::server {

// What `optimize` was asked, as its command line said it.
struct OptimizeArgs {
  std::string file;
  std::optional<std::string> out;
  bool json = false;
  std::string kernelsFolder = "stitchcuda_kernels";
  cli::JobOptions job;                // --brain, --model, --base-url, precisions, the budget
  std::optional<double> atol, rtol;   // the verifier's tolerances when given
  std::optional<int> gpu;
};

// Adds the `optimize` command and its own options to `app`, filling `args` as it parses.
CLI::App* addOptimizeCommand(CLI::App& app, OptimizeArgs& args);
int runHeadlessOptimize(const HostConfig& config, const Server::RunnerFactory& factory, const OptimizeArgs& args);

}  // namespace stitch::server
