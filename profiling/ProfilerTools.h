// Finding the optional profilers (Nsight Compute `ncu`, Nsight Systems `nsys`) and saying
// plainly when one is missing: both are optional at run time (design §10), so absence is a
// status with a message, never an error that fails a job.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace stitch::profiling {

struct ToolStatus {
  std::string name;                           // "ncu" | "nsys"
  std::optional<std::filesystem::path> path;  // empty: not found
  std::string version;                        // first line of `--version`, when it ran
  std::string message;                        // one sentence for the job log
  bool available() const { return path.has_value() && !version.empty(); }
};

// The first executable `name` on PATH, then in `extraDirs` (each may end in "*" to mean the
// newest subfolder, e.g. /opt/nvidia/nsight-compute/*).
std::optional<std::filesystem::path> findExecutable(const std::string& name,
                                                    const std::vector<std::string>& extraDirs);

// Where CUDA installs put the tools when they are not on PATH.
std::vector<std::string> defaultToolDirs(const std::string& name);

// Locates `name` and runs `name --version` (20 s limit).
ToolStatus probeTool(const std::string& name, const std::vector<std::string>& extraDirs);

}  // namespace stitch::profiling
