// The tasks of a KernelBench-style suite (levelN folders of task files) and their order, shared by
// `bench` (BenchCommand) and its coverage run (CoverageBench), so neither depends on the other for it.
#pragma once

#include "protocol/Result.h"
#include "server/BenchResults.h"

#include <filesystem>
#include <string>
#include <vector>

namespace stitch::server::bench {

// Suite order: by level ("other", level 0, last), then by key.
bool orderBefore(const BenchTask& a, const BenchTask& b);

// Every task file (*.py, not __init__.py) under `dirOrFile`, or that file; sorted by level
// ("other" last), then by key. The error says why nothing can be listed.
protocol::Result<std::vector<BenchTask>, std::string> findTasks(const std::filesystem::path& dirOrFile);

}  // namespace stitch::server::bench
