// Transitions as JSON Lines; see TransitionLog.h.
#include "agents/loop/TransitionLog.h"

#include <stdexcept>

namespace stitch::agents::loop {

using protocol::json;

json toJson(const Transition& t) {
  json j{{"schema", kTransitionSchema},
         {"jobId", t.jobId},
         {"step", t.step},
         {"skill", t.skill},
         {"candidateId", t.candidateId},
         {"context", {{"taskFile", t.taskFile}, {"taskSource", t.taskSource}, {"plan", t.plan},
                      {"feedback", t.feedback ? *t.feedback : json()},
                      {"previousCandidateId", t.previousCandidateId ? json(*t.previousCandidateId) : json()}}},
         {"candidate", {{"dir", t.candidateDir}, {"title", t.title}, {"variant", t.variant}, {"files", t.files}}},
         {"verdict", t.verdict},
         {"profile", t.profile ? *t.profile : json()},
         {"reward", t.reward ? *t.reward : json()}};
  return j;
}

namespace {

const json& field(const json& j, const char* name, json::value_t type, const std::string& where) {
  auto it = j.find(name);
  if (it == j.end()) throw std::invalid_argument("missing \"" + where + name + "\"");
  const bool fits = it->type() == type || (type == json::value_t::number_integer && it->is_number_integer());
  if (!fits) throw std::invalid_argument("\"" + where + name + "\" is a " + it->type_name());
  return *it;
}

std::optional<json> optionalObject(const json& j, const char* name, const std::string& where) {
  auto it = j.find(name);
  if (it == j.end()) throw std::invalid_argument("missing \"" + where + name + "\" (null when absent)");
  if (it->is_null()) return std::nullopt;
  if (!it->is_object()) throw std::invalid_argument("\"" + where + name + "\" is a " + it->type_name());
  return *it;
}

}  // namespace

protocol::Result<Transition, std::string> transitionFromJson(const json& j) {
  using T = json::value_t;
  try {
    if (!j.is_object()) throw std::invalid_argument("a transition is a JSON object");
    if (field(j, "schema", T::string, "") != kTransitionSchema)
      throw std::invalid_argument("schema is " + j["schema"].get<std::string>() + ", not " + kTransitionSchema);
    Transition t;
    t.jobId = field(j, "jobId", T::string, "").get<std::string>();
    t.step = field(j, "step", T::number_integer, "").get<int>();
    t.skill = field(j, "skill", T::string, "").get<std::string>();
    if (t.skill != "generate" && t.skill != "refine") throw std::invalid_argument("skill is neither generate nor refine");
    t.candidateId = field(j, "candidateId", T::string, "").get<std::string>();
    const json& c = field(j, "context", T::object, "");
    t.taskFile = field(c, "taskFile", T::string, "context.").get<std::string>();
    t.taskSource = field(c, "taskSource", T::string, "context.").get<std::string>();
    t.plan = field(c, "plan", T::object, "context.");
    t.feedback = optionalObject(c, "feedback", "context.");
    if (!c.contains("previousCandidateId")) throw std::invalid_argument("missing \"context.previousCandidateId\"");
    if (!c["previousCandidateId"].is_null()) t.previousCandidateId = field(c, "previousCandidateId", T::string, "context.");
    if ((t.skill == "refine") != t.feedback.has_value())
      throw std::invalid_argument("a refine step has the feedback it answers, a generate step none");
    const json& cand = field(j, "candidate", T::object, "");
    t.candidateDir = field(cand, "dir", T::string, "candidate.").get<std::string>();
    t.title = field(cand, "title", T::string, "candidate.").get<std::string>();
    t.variant = field(cand, "variant", T::string, "candidate.").get<std::string>();
    for (const auto& [name, text] : field(cand, "files", T::object, "candidate.").items()) {
      if (!text.is_string()) throw std::invalid_argument("\"candidate.files." + name + "\" is not text");
      t.files[name] = text.get<std::string>();
    }
    t.verdict = field(j, "verdict", T::object, "");
    t.profile = optionalObject(j, "profile", "");
    t.reward = optionalObject(j, "reward", "");
    return t;
  } catch (const std::exception& e) {
    return std::string(e.what());
  }
}

TransitionLog::TransitionLog(const std::filesystem::path& dir, const std::string& jobId)
    : path_(dir / (jobId + ".transitions.jsonl")) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  out_.open(path_, std::ios::app);
}

void TransitionLog::append(const Transition& t) { out_ << toJson(t).dump() << "\n" << std::flush; }

protocol::Result<std::vector<Transition>, std::string> readTransitions(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return "cannot read " + path.string();
  std::vector<Transition> out;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded()) return path.string() + ":" + std::to_string(number) + ": not JSON";
    auto t = transitionFromJson(j);
    if (!t.ok()) return path.string() + ":" + std::to_string(number) + ": " + t.error();
    out.push_back(std::move(t).value());
  }
  return out;
}

}  // namespace stitch::agents::loop
