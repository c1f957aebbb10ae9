// The host's settings: defaults, then the command line, then the client's
// initializationOptions (for the things an editor may choose). Parsed once, passed as a
// struct.
#pragma once

#include "agents/llm/LlmSettings.h"
#include "protocol/LspTypes.h"

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

namespace stitch::server {

struct HostConfig {
  std::filesystem::path jobsDir;     // one folder per job: log.jsonl, the task snapshot, outputs
  std::string python = "python3";    // the interpreter that runs the harness worker
  std::filesystem::path harnessDir;  // put on PYTHONPATH for the worker
  std::chrono::milliseconds workerDeadline{600000};  // per harness call, before it is killed
  // Per stage of the model's own code (importing it, __init__, get_inputs, each forward): past it the
  // job ends naming the stage and the model's line (--load-timeout; a job's loadTimeout).
  double loadTimeoutSeconds = 120;
  unsigned poolThreads = 4;
  int ncuRuns = 3;  // Nsight Compute runs per job (each 7–10 s); 0: kernel metrics from the trace only
  agents::llm::LlmHostOptions llm;  // for jobs whose brain is openai or anthropic
  std::optional<std::filesystem::path> recordTransitions;  // --record-transitions DIR (protocol/TRANSITIONS.md)

  // Defaults that depend on the environment: jobs under $XDG_STATE_HOME (or ~/.local/state),
  // the harness next to the binary's source tree or install.
  static HostConfig defaults(const std::filesystem::path& executable);
  // Applies {"jobsDir", "python", "harnessDir", "workerDeadlineMs"}; throws
  // protocol::ParamsError naming a bad field.
  void apply(const protocol::json& initializationOptions);
  // Applies one LLM command-line option (--api-key-env, --llm-*); false when `name` is not one,
  // `error` set when its value is bad.
  bool applyLlmOption(const std::string& name, const std::string& value, std::string& error);
};

}  // namespace stitch::server
