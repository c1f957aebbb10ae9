// The harness's interpreter when none is named; see PythonDiscovery.h.
#include "server/PythonDiscovery.h"

#include "process/ChildProcess.h"

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <unistd.h>

namespace stitch::server {

const char* const kPythonRule =
    "the interpreter that runs the harness (with PyTorch); default: the active virtualenv's or conda "
    "environment's python, else the first python3 or python on PATH that has torch installed";

namespace {

void addIfExecutable(std::vector<std::string>& out, const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec) || ::access(file.c_str(), X_OK) != 0) return;
  for (const auto& seen : out)
    if (std::filesystem::equivalent(seen, file, ec)) return;
  out.push_back(file.string());
}

}  // namespace

std::vector<std::string> pythonCandidates() {
  std::vector<std::string> out;
  for (const char* env : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (const char* prefix = std::getenv(env); prefix && *prefix) {
      addIfExecutable(out, std::filesystem::path(prefix) / "bin" / "python3");
      addIfExecutable(out, std::filesystem::path(prefix) / "bin" / "python");
    }
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');)
    for (const char* name : {"python3", "python"}) addIfExecutable(out, std::filesystem::path(dir.empty() ? "." : dir) / name);
  return out;
}

protocol::Result<std::string, NoTorchPython> findTorchPython() {
  const auto candidates = pythonCandidates();
  for (const auto& python : candidates) {
    process::ChildSpec spec;
    // Found, not imported: importing torch took 4.6 s on an H200 host (its CUDA libraries), paid
    // again by every worker the command then starts; a torch that is found but broken is the
    // worker's first error, named there.
    spec.argv = {python, "-c", "import importlib.util, sys; sys.exit(importlib.util.find_spec('torch') is None)"};
    spec.pipeStderr = true;
    const auto outcome = process::runChild(spec, std::chrono::seconds(60), [](std::string_view) {});
    if (outcome.exitedWith(0)) return python;
  }
  std::string tried;
  for (const auto& c : candidates) tried += (tried.empty() ? "" : ", ") + c;
  return NoTorchPython{"no Python with PyTorch found (tried " +
                       (tried.empty() ? std::string("none: no python3 or python on PATH") : tried) +
                       "); name one with --python PATH"};
}

}  // namespace stitch::server
