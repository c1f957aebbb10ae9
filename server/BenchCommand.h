// `stitchcuda bench DIR`: every task of a KernelBench-style suite (levelN folders) through the real
// job — this binary's `optimize --json` in a child process, one task at a time per GPU — with a row
// per task as results arrive, KernelBench's summary per level, and RESULTS/results.json and .md
// (written after every task, so `--resume` runs only what is missing). Exits 0 when every task ran,
// whatever the verdicts; 1 on error (also: tasks left unrun by --deadline); 2 on usage.
#pragma once

#include "protocol/Result.h"
#include "server/BenchResults.h"
#include "server/Config.h"

#include <filesystem>
#include <string>
#include <vector>

namespace stitch::server {

// `argv` is the whole command line: argv[0], "bench", then the bench's arguments.
int runBench(const HostConfig& config, const std::vector<std::string>& argv);

namespace bench {

// Every task file (*.py, not __init__.py) under `dirOrFile`, or that file; sorted by level
// ("other" last), then by key. The error says why nothing can be listed.
protocol::Result<std::vector<BenchTask>, std::string> findTasks(const std::filesystem::path& dirOrFile);

}  // namespace bench
}  // namespace stitch::server
