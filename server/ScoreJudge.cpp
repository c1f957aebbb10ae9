// The LLM rubric judgment beside a score; see ScoreJudge.h.
#include "server/ScoreJudge.h"

#if STITCH_LLM_BRAIN
#include "agents/llm/RubricJudge.h"
#endif

#include <filesystem>
#include <fstream>
#include <iostream>

namespace stitch::server {

using protocol::json;

#if STITCH_LLM_BRAIN
namespace {

namespace fs = std::filesystem;

std::string readText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A candidate's CUDA and Python, laid out as verify takes it (a directory, X.py with X.cu, X.cu with X.py).
std::pair<std::string, std::string> candidateText(const fs::path& path) {
  fs::path py, cu;
  if (fs::is_directory(path)) {
    for (const auto& e : fs::directory_iterator(path)) {
      if (e.path().extension() == ".py" && py.empty()) py = e.path();
      if (e.path().extension() == ".cu" && cu.empty()) cu = e.path();
    }
  } else if (path.extension() == ".cu") {
    cu = path;
    py = fs::path(path).replace_extension(".py");
  } else {
    py = path;
    cu = fs::path(path).replace_extension(".cu");
  }
  return {fs::is_regular_file(cu) ? readText(cu) : "", fs::is_regular_file(py) ? readText(py) : ""};
}

// What the deterministic score found, compact: the model reads it as context.
json summary(const json& score) {
  const json& rubric = score.value("rubric", json::object());
  json failed = json::array(), techniques = json::array();
  const json checks = rubric.value("anti_hacking", json::object()).value("checks", json::object());
  const json features = rubric.value("cuda_engineering", json::object()).value("features", json::object());
  for (const auto& [check, state] : checks.items())
    if (state == "failed") failed.push_back(check);
  for (const auto& [name, f] : features.items())
    if (f.value("present", false)) techniques.push_back(name);
  auto dim = [&](const char* name) { return rubric.value(name, json::object()).value("score", json()); };
  return {{"reward", score.value("reward", json())},
          {"rule", score.value("rule", json::object())},
          {"anti_hacking", {{"score", dim("anti_hacking")}, {"failed_guards", failed}}},
          {"cuda_engineering", {{"score", dim("cuda_engineering")}, {"techniques_in_compiled_code", techniques}}},
          {"operator_coverage", rubric.value("operator_coverage", json::object())},
          {"skill_compliance", rubric.value("skill_compliance", json::object())}};
}

}  // namespace

json judgeScore(const JudgeOptions& options, const HostConfig& config, const ScoreInputs& inputs, const json& score) {
  auto settings = agents::llm::resolveSettings(options.provider, options.model, options.baseUrl, config.llm);
  if (!settings) return {{"error", settings.error().message}};
  agents::llm::prompts::JudgeInput in;
  in.taskSource = readText(inputs.reference);
  std::tie(in.candidateCuda, in.candidatePython) = candidateText(inputs.candidate);
  in.deterministic = summary(score).dump(1);
  if (inputs.feedback) in.feedback = inputs.feedback->dump(1);
  if (inputs.previous) in.previousCuda = candidateText(*inputs.previous).first;
  agents::llm::ChatClient client(settings.value().provider, [](const std::string& level, const std::string& message) {
    std::cerr << "judge " << level << ": " << message << "\n";
  });
  auto judged = agents::llm::judgeCandidate(client, in, agents::CancelToken(), settings.value().answerRepairs);
  if (!judged) return {{"error", judged.error().message}};
  return agents::llm::judgementToJson(judged.value(), settings.value().provider);
}
#else
json judgeScore(const JudgeOptions& options, const HostConfig&, const ScoreInputs&, const json&) {
  return {{"error", "this build has no LLM providers (libcurl was not found when it was configured), so the \"" +
                        options.provider + "\" judge is not available"}};
}
#endif

}  // namespace stitch::server
