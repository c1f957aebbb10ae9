// The rubric judge; see RubricJudge.h.
#include "agents/llm/RubricJudge.h"

#include "agents/llm/AnswerParser.h"

namespace stitch::agents::llm {

using nlohmann::json;

builtin::Outcome<Judgement> parseJudgement(const std::string& answer) {
  auto blocks = fencedBlocks(answer);
  if (!blocks) return blocks.error();
  const FencedBlock* block = nullptr;
  for (const auto& b : blocks.value())
    if (b.info == "json") block = &b;
  if (!block) return Failure{"the answer has no ```json block"};
  json j = json::parse(block->text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Failure{"the ```json block (line " + std::to_string(block->line) + ") is not a JSON object"};
  Judgement out;
  for (const char* d : kJudgeDimensions) {
    if (!j.contains(d) || !j[d].is_object()) return Failure{std::string("\"") + d + "\" is missing or not an object"};
    const json& dim = j[d];
    JudgeScore s;
    if (!dim.contains("score")) return Failure{std::string("\"") + d + ".score\" is missing"};
    if (dim["score"].is_number()) {
      const double v = dim["score"].get<double>();
      if (v < 0 || v > 1) return Failure{std::string("\"") + d + ".score\" is " + dim["score"].dump() + ", not in [0, 1]"};
      s.score = v;
    } else if (!dim["score"].is_null()) {
      return Failure{std::string("\"") + d + ".score\" is neither a number nor null"};
    }
    if (!dim.contains("reason") || !dim["reason"].is_string()) return Failure{std::string("\"") + d + ".reason\" is not a string"};
    s.reason = dim["reason"].get<std::string>();
    out.scores[d] = std::move(s);
  }
  if (j.contains("summary") && j["summary"].is_string()) out.summary = j["summary"].get<std::string>();
  return out;
}

builtin::Outcome<Judgement> judgeCandidate(ChatClient& client, const prompts::JudgeInput& input,
                                           const CancelToken& cancel, int repairs) {
  ChatRequest chat{prompts::judgeSystem(), {{"user", prompts::judgeUser(input)}}};
  TokenUsage usage;
  std::string problem;
  for (int round = 0; round <= repairs; ++round) {
    ChatResult r = client.complete(chat, cancel);
    if (!r.ok()) return Failure{"the judge's call failed: " + r.error->message};
    usage.input += r.answer->usage.input;
    usage.output += r.answer->usage.output;
    auto judged = parseJudgement(r.answer->text);
    if (judged) {
      Judgement j = std::move(judged).value();
      j.usage = usage;
      j.answers = round + 1;
      return j;
    }
    problem = judged.error().message;
    chat.messages.push_back({"assistant", r.answer->text});
    chat.messages.push_back({"user", prompts::repair(problem, r.answer->truncated())});
  }
  return Failure{"the judge's answer was invalid: " + problem + " (still invalid after " + std::to_string(repairs + 1) +
                 " answers)"};
}

json judgementToJson(const Judgement& j, const ProviderSettings& provider) {
  json scores = json::object();
  for (const auto& [name, s] : j.scores) scores[name] = {{"score", s.score ? json(*s.score) : json()}, {"reason", s.reason}};
  return {{"provider", providerName(provider.kind)}, {"model", provider.model}, {"scores", scores},
          {"summary", j.summary}, {"usage", {{"input", j.usage.input}, {"output", j.usage.output}}}, {"answers", j.answers}};
}

}  // namespace stitch::agents::llm
