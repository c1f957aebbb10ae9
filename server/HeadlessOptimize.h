// `stitchcuda optimize FILE`: the editor's job without an editor, for terminals and CI.
// Streams the job to the terminal (or as JSON lines with --json), writes a report, and
// exits 0 when a verified improvement was found, 3 when none was, 4 when no GPU could verify
// (candidates were only compiled), 1 on error, 2 on usage; --help prints its options (exit 0).
#pragma once

#include "server/Config.h"
#include "server/Server.h"

#include <string>
#include <vector>

namespace stitch::server {

int runHeadlessOptimize(const HostConfig& config, const Server::RunnerFactory& factory,
                        const std::vector<std::string>& args);

}  // namespace stitch::server
