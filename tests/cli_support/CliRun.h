// Runs the host binary as a user runs it, for the tests of its command line (tests/llm, tests/score,
// tests/bench, tests/cli_support): `stitchcuda COMMAND ARGS...` with its exit status, stdout and
// stderr. The binary and the source tree are the ones this library was configured with.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace stitch::testing {

struct CliRun {
  int status = -1;   // the exit status; 128 + N when signal N ended it
  std::string out;   // stdout
  std::string err;   // stderr (empty with CliOptions::mergeStderr: it went to `out`)
};

struct CliOptions {
  std::optional<std::filesystem::path> cwd;                  // default: the source tree
  std::vector<std::pair<std::string, std::string>> env;     // set for the child only
  bool mergeStderr = false;                                  // stderr into `out`, interleaved as written
};

// `stitchcuda` followed by `args`, each one argument as given (no shell).
CliRun runCli(const std::vector<std::string>& args, const CliOptions& options = {});
// The same with `words` split at whitespace: for arguments without spaces.
CliRun runCli(const std::string& words, const CliOptions& options = {});

std::filesystem::path stitchcudaBinary();
std::filesystem::path sourceDir();

}  // namespace stitch::testing
