// Host configuration defaults and overrides; see Config.h.
#include "server/Config.h"

#include <cstdlib>
#include <thread>

namespace stitch::server {

HostConfig HostConfig::defaults(const std::filesystem::path& executable) {
  HostConfig c;
  if (const char* state = std::getenv("XDG_STATE_HOME"); state && *state)
    c.jobsDir = std::filesystem::path(state) / "stitchcuda" / "jobs";
  else if (const char* home = std::getenv("HOME"); home && *home)
    c.jobsDir = std::filesystem::path(home) / ".local" / "state" / "stitchcuda" / "jobs";
  else
    c.jobsDir = std::filesystem::temp_directory_path() / "stitchcuda-jobs";
  if (const char* py = std::getenv("STITCHCUDA_PYTHON"); py && *py) c.python = py;
  // build/bin/stitchcuda in a checkout, bin/<platform>/stitchcuda in the packaged
  // extension: the harness is found by walking up from the binary.
  std::error_code ec;
  auto dir = std::filesystem::weakly_canonical(executable, ec).parent_path();
  for (int up = 0; up < 4 && !dir.empty(); ++up, dir = dir.parent_path())
    if (std::filesystem::exists(dir / "harness" / "stitchcuda_harness", ec)) {
      c.harnessDir = dir / "harness";
      break;
    }
  c.poolThreads = std::max(4u, std::thread::hardware_concurrency());
  return c;
}

void HostConfig::apply(const protocol::json& options) {
  if (!options.is_object()) return;
  if (auto v = protocol::optional<std::string>(options, "jobsDir")) jobsDir = *v;
  if (auto v = protocol::optional<std::string>(options, "python")) python = *v;
  if (auto v = protocol::optional<std::string>(options, "harnessDir")) harnessDir = *v;
  if (auto v = protocol::optional<int>(options, "workerDeadlineMs")) {
    if (*v <= 0) throw protocol::ParamsError("\"workerDeadlineMs\" must be positive");
    workerDeadline = std::chrono::milliseconds(*v);
  }
}

}  // namespace stitch::server
