// The LLM brain; see LlmBrain.h.
#include "agents/llm/LlmBrain.h"

#include "agents/llm/AnswerParser.h"
#include "agents/llm/GraphText.h"
#include "agents/llm/prompts/Prompts.h"
#include "agents/program/ProgramImport.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace stitch::agents::llm {
namespace {

std::string readFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string planToJson(const protocol::PlanParams& plan) {
  protocol::json tasks = protocol::json::array();
  for (const auto& t : plan.tasks) {
    protocol::json j{{"id", t.id}, {"title", t.title}, {"operators", t.operators}, {"technique", t.technique},
                     {"lines", {t.range.start.line + 1, t.range.end.line}}};
    if (t.expectedGainPct) j["expectedGainPct"] = *t.expectedGainPct;
    tasks.push_back(j);
  }
  return protocol::json{{"tasks", tasks}, {"uncovered", plan.uncovered}}.dump(1);
}

// The body of ModelNew.forward in `python`, dedented; "" when it cannot be found.
std::vector<std::string> forwardBody(const std::string& python) {
  std::istringstream in(python);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  auto indentOf = [](const std::string& l) { return l.find_first_not_of(' '); };
  std::vector<std::string> body;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto at = lines[i].find("def forward(");
    if (at == std::string::npos) continue;
    const std::size_t defIndent = indentOf(lines[i]);
    std::size_t bodyIndent = std::string::npos;
    for (std::size_t k = i + 1; k < lines.size(); ++k) {
      if (lines[k].find_first_not_of(" \t") == std::string::npos) {
        body.push_back("");
        continue;
      }
      const std::size_t ind = indentOf(lines[k]);
      if (ind <= defIndent) break;
      if (bodyIndent == std::string::npos) bodyIndent = ind;
      body.push_back(lines[k].substr(std::min(ind, bodyIndent)));
    }
    break;
  }
  while (!body.empty() && body.back().empty()) body.pop_back();
  return body;
}

double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

LlmBrain::LlmBrain(const LlmSettings& settings, CancelToken cancel, Log log, std::shared_ptr<UsageMeter> meter)
    : settings_(settings),
      cancel_(std::move(cancel)),
      log_(std::move(log)),
      meter_(std::move(meter)),
      client_(settings.provider, [this](const std::string& level, const std::string& message) {
        log_(level, "LLM", message);
      }) {}

bool LlmBrain::converse(const std::string& role, const std::string& phase, ChatRequest chat,
                        const std::function<std::string(const std::string&)>& parse, std::string& error) {
  const std::string who = providerName(settings_.provider.kind) + " " + role;
  for (int round = 0; round <= settings_.answerRepairs; ++round) {
    if (auto spent = meter_->exhausted()) {
      error = *spent;
      log_("warning", phase, "stopping: " + *spent);
      return false;
    }
    const auto start = std::chrono::steady_clock::now();
    ChatResult r = client_.complete(chat, cancel_);
    if (!r.ok()) {
      error = r.error->kind == ChatError::Kind::Cancelled ? "cancelled while waiting for the model"
                                                          : "the " + who + " call failed: " + r.error->message;
      return false;
    }
    meter_->add(r.answer->usage);
    char took[32];
    std::snprintf(took, sizeof took, "%.1f s", secondsSince(start));
    log_("info", phase, who + " answered in " + took + " (" + std::to_string(r.answer->usage.input) + " in, " +
                            std::to_string(r.answer->usage.output) + " out tokens; job so far: " + meter_->summary() + ")");
    const std::string problem = parse(r.answer->text);
    if (problem.empty()) return true;
    memory_.recordInvalidAnswer(role, problem);
    error = "the " + who + "'s answer was invalid: " + problem;
    if (round == settings_.answerRepairs) break;
    log_("warning", phase, error + "; sending it back (" + std::to_string(round + 1) + " of " +
                               std::to_string(settings_.answerRepairs) + ")");
    chat.messages.push_back({"assistant", r.answer->text});
    chat.messages.push_back({"user", prompts::repair(problem, r.answer->truncated())});
  }
  error += " (still invalid after " + std::to_string(settings_.answerRepairs + 1) + " answers)";
  return false;
}

loop::BrainPlan LlmBrain::plan(const BaselineFacts& facts, const JobRequest& request, bool replan) {
  loop::BrainPlan out;
  out.plan.jobId = request.jobId;
  out.plan.uri = request.uri;
  jobDir_ = request.jobDir;
  fileName_ = request.taskFile.filename().string();
  source_ = readFile(request.taskFile);
  gpu_ = facts.cuda;
  auto graph = builtin::parseGraph(facts.graph);
  if (!graph) {
    out.reason = graph.error().message;
    return out;
  }
  auto forward = builtin::findForward(source_);
  if (!forward) forward = builtin::findForward(source_, "");  // a model class named by a directive
  if (!forward) {
    out.reason = fileName_ + ": " + forward.error().message;
    return out;
  }
  forward_ = forward.value();
  graph_ = graphText(graph.value());
  previous_.reset();
  builtinStart_.reset();

  // The built-in planner is cheap and deterministic: its plan guides the model, and when it can
  // generate a candidate that candidate becomes the Coder's starting point.
  const loop::BrainPlan builtinPlan = builtin_.plan(facts, request, replan);
  builtinReady_ = builtinPlan.generatable;

  prompts::PlannerInput in{fileName_,
                           numberedSource(source_),
                           graph_,
                           lineTimesText(facts.lineTimesUs, facts.cuda),
                           builtinPlan.plan.tasks.empty() ? "" : planToJson(builtinPlan.plan),
                           hardwareText(facts.cuda),
                           memory_.render(),
                           replan};
  PlanContext context{computeOperators(graph.value()), 0};
  for (char c : source_) context.lineCount += c == '\n';
  if (!source_.empty() && source_.back() != '\n') ++context.lineCount;

  protocol::PlanParams parsed;
  std::string error;
  const bool ok = converse("planner", replan ? "REPLAN" : "PLAN", {prompts::plannerSystem(), {{"user", prompts::plannerUser(in)}}},
                           [&](const std::string& answer) {
                             auto p = parsePlan(answer, context);
                             if (!p) return p.error().message;
                             parsed = p.value();
                             return std::string();
                           },
                           error);
  if (!ok) {
    out.reason = error;
    return out;
  }
  out.plan.tasks = parsed.tasks;
  out.plan.uncovered = parsed.uncovered;
  planJson_ = planToJson(out.plan);
  out.generatable = true;
  return out;
}

std::string LlmBrain::startingPoint() {
  if (builtinStart_) return *builtinStart_;
  builtinStart_ = "";
  if (!builtinReady_) return "";
  std::string error;
  auto draft = builtin_.next(std::nullopt, jobDir_ / "llm" / "builtin-start", error);
  if (!draft) {
    log_("info", "CODE", "the built-in brain has no starting point to offer: " + error);
    return "";
  }
  builtinStart_ = "```cuda candidate.cu\n" + readFile(draft->dir / "candidate.cu") + "```\n```python model_new.py\n" +
                  readFile(draft->dir / "model_new.py") + "```\n";
  return *builtinStart_;
}

std::optional<loop::Draft> LlmBrain::next(const std::optional<loop::Feedback>& last, const std::filesystem::path& dir,
                                          std::string& error) {
  if (last && previous_) memory_.recordVerdict(previous_->id, previous_->strategy, *last);
  const bool refine = last && previous_;
  const std::string phase = refine ? "REFINE" : "CODE";
  prompts::CoderInput task{fileName_, numberedSource(source_), graph_, planJson_, hardwareText(gpu_), "", memory_.render()};
  std::string user;
  if (refine) {
    user = prompts::coderRefine({task, previous_->cuda, previous_->python, prompts::advice(*last)});
  } else {
    task.startingPoint = startingPoint();
    user = prompts::coderFromScratch(task);
  }
  CandidateText candidate;
  const bool ok = converse("coder", phase, {prompts::coderSystem(), {{"user", user}}},
                           [&](const std::string& answer) {
                             auto c = parseCandidate(answer);
                             if (!c) return c.error().message;
                             candidate = c.value();
                             return std::string();
                           },
                           error);
  if (!ok) return std::nullopt;

  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::ofstream(dir / "candidate.cu") << candidate.cuda;
  std::ofstream(dir / "model_new.py") << candidate.python;
  if (ec || !std::filesystem::exists(dir / "model_new.py")) {
    error = "cannot write the candidate into " + dir.string();
    return std::nullopt;
  }
  ++drafts_;
  std::string title = candidate.strategy.empty() ? "LLM candidate " + std::to_string(drafts_) : candidate.strategy;
  if (title.size() > 100) title = title.substr(0, 97) + "...";
  previous_ = Previous{dir.filename().string(), candidate.strategy, candidate.cuda, candidate.python};
  return loop::Draft{title, refine ? "llm-refine" : "llm", dir, std::nullopt};  // no changed plan to announce
}

protocol::Range LlmBrain::editRange() const { return {{forward_.bodyFirst - 1, 0}, {forward_.bodyLast, 0}}; }

std::string LlmBrain::editText(const program::ProgramNames& program, std::optional<double>) const {
  if (!previous_) return "";
  const auto body = forwardBody(previous_->python);
  if (body.empty()) return "";
  const std::string& in = forward_.bodyIndent;
  std::string py = forward_.header + in + "# StitchCUDA: the LLM brain's candidate, compiled into " + program.folder + "/" + program.cuda +
                   ", built with nvcc on first use\n" + in + "if not hasattr(self, \"_stitch_lib\"):\n" +
                   program::importLoader(program, in + "    ") + in + "    self._stitch_lib = load_program(\"" + program.cuda + "\")\n";
  for (std::string line : body) {
    for (auto at = line.find("self.lib"); at != std::string::npos; at = line.find("self.lib", at + 16))
      if (at + 8 == line.size() || !(std::isalnum(static_cast<unsigned char>(line[at + 8])) || line[at + 8] == '_'))
        line.replace(at, 8, "self._stitch_lib");
    py += line.empty() ? "\n" : in + line + "\n";
  }
  return py;
}

}  // namespace stitch::agents::llm
