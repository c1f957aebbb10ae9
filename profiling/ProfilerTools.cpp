// Locating ncu/nsys and reading their versions (see ProfilerTools.h).
#include "profiling/ProfilerTools.h"

#include "process/ChildProcess.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <unistd.h>

namespace stitch::profiling {
namespace fs = std::filesystem;
namespace {

bool executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

std::vector<fs::path> expand(const std::string& dir) {
  if (dir.size() < 2 || dir.substr(dir.size() - 2) != "/*") return {dir};
  fs::path parent = dir.substr(0, dir.size() - 2);
  std::vector<fs::path> subs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(parent, ec))
    if (e.is_directory(ec)) subs.push_back(e.path());
  std::sort(subs.rbegin(), subs.rend());  // newest version first (names are versions)
  return subs;
}

}  // namespace

std::optional<fs::path> findExecutable(const std::string& name, const std::vector<std::string>& extraDirs) {
  if (name.find('/') != std::string::npos) return executable(name) ? std::optional<fs::path>(name) : std::nullopt;
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream s(path);
    for (std::string d; std::getline(s, d, ':');)
      if (!d.empty()) dirs.push_back(d);
  }
  dirs.insert(dirs.end(), extraDirs.begin(), extraDirs.end());
  for (const auto& d : dirs)
    for (const auto& base : expand(d))
      for (const fs::path& candidate : {base / name, base / "bin" / name})
        if (executable(candidate)) return candidate;
  return std::nullopt;
}

std::vector<std::string> defaultToolDirs(const std::string& name) {
  if (name == "ncu") return {"/usr/local/cuda/bin", "/opt/nvidia/nsight-compute/*"};
  if (name == "nsys") return {"/usr/local/cuda/bin", "/opt/nvidia/nsight-systems/*"};
  return {};
}

ToolStatus probeTool(const std::string& name, const std::vector<std::string>& extraDirs) {
  ToolStatus s{name, findExecutable(name, extraDirs), "", ""};
  // Named by the tool, also when the caller gave a path to it.
  const std::string base = fs::path(name).filename().string();
  const std::string what = (base == "nsys" ? "Nsight Systems (nsys)" : base == "ncu" ? "Nsight Compute (ncu)" : base) +
                           (base == name ? "" : " at " + name);
  if (!s.path) {
    s.message = what + (base == name ? " is not installed (not on PATH nor in the CUDA folders)" : " is not there");
    return s;
  }
  std::string text;
  process::ChildSpec spec;
  spec.argv = {s.path->string(), "--version"};
  spec.pipeStderr = true;
  const process::ChildOutcome run = process::runChild(spec, std::chrono::seconds(20),
                                                      [&](std::string_view line) { (text += line) += '\n'; });
  if (!run.exitedWith(0)) {
    s.message = what + (base == name ? " at " + s.path->string() : "") + " did not run (`--version` failed): " +
                (run.startError.empty() ? run.stderrTail.substr(0, 200) : run.startError);
    return s;
  }
  std::stringstream lines(text);
  std::string line, last;
  while (std::getline(lines, line))
    if (!line.empty()) last = line;  // ncu prints a copyright line first, the version last
  s.version = last;
  s.message = (base == name ? what + " found at " + s.path->string() : what) + " (" + last + ")";
  return s;
}

}  // namespace stitch::profiling
