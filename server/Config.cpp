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

bool HostConfig::applyLlmOption(const std::string& name, const std::string& value, std::string& error) {
  auto& st = llm.settings;
  auto number = [&](double& out) {
    char* end = nullptr;
    out = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || out < 0) error = name + " needs a non-negative number, got \"" + value + "\"";
    return error.empty();
  };
  double v = 0;
  if (name == "--api-key-env") llm.apiKeyEnv = value;
  else if (name == "--llm-token-budget") {
    if (number(v)) st.budget.tokens = static_cast<long long>(v);
  } else if (name == "--llm-usd-budget") {
    if (number(v)) st.budget.usd = v;
  } else if (name == "--llm-price") {
    const auto comma = value.find(',');
    char* end1 = nullptr;
    char* end2 = nullptr;
    const std::string in = value.substr(0, comma), out = comma == std::string::npos ? "" : value.substr(comma + 1);
    st.budget.pricing.inputUsdPerMTok = std::strtod(in.c_str(), &end1);
    st.budget.pricing.outputUsdPerMTok = std::strtod(out.c_str(), &end2);
    if (in.empty() || out.empty() || *end1 || *end2) error = "--llm-price needs IN,OUT in USD per million tokens, e.g. 3,15";
  } else if (name == "--llm-max-tokens") {
    if (number(v)) st.provider.maxTokens = static_cast<int>(v);
  } else if (name == "--llm-temperature") {
    if (number(v)) st.provider.temperature = v;
  } else if (name == "--llm-timeout") {
    if (number(v)) st.provider.totalTimeout = std::chrono::milliseconds(static_cast<long long>(v * 1000));
  } else if (name == "--llm-attempts") {
    if (number(v)) st.provider.maxAttempts = std::max(1, static_cast<int>(v));
  } else if (name == "--llm-stream") {
    if (value != "on" && value != "off") error = "--llm-stream takes on or off";
    st.provider.stream = value == "on";
  } else {
    return false;
  }
  return true;
}

}  // namespace stitch::server
