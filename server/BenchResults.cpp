// Task rows from optimize runs, and their JSON; see BenchResults.h.
#include "server/BenchResults.h"

#include "protocol/LspTypes.h"
#include "protocol/NumberText.h"

#include <algorithm>
#include <cstdlib>

namespace stitch::server::bench {
namespace {

constexpr std::size_t kLogLines = 40;
constexpr std::size_t kLogChars = 400;

template <typename T>
json orNull(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

std::optional<std::string> stringOrNull(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string() || it->get<std::string>().empty()) return std::nullopt;
  return it->get<std::string>();
}

std::optional<double> numberOrNull(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

// The loop's PROFILE line ends in "[roofline_fraction=0.812]" and starts with the candidate's id.
std::optional<std::pair<std::string, double>> rooflineOf(const std::string& message) {
  const std::string marker = "[roofline_fraction=";
  auto at = message.rfind(marker);
  auto space = message.find(' ');
  if (at == std::string::npos || space == std::string::npos || space == 0) return std::nullopt;
  const char* begin = message.c_str() + at + marker.size();
  char* end = nullptr;
  double value = std::strtod(begin, &end);
  if (end == begin || *end != ']') return std::nullopt;
  return std::make_pair(message.substr(0, space), value);
}

std::string lastLineOf(const std::string& text) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
  auto nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

std::string shorten(std::string text, std::size_t n) {
  if (text.size() > n) text = text.substr(0, n) + "…";
  return text;
}

}  // namespace

BenchEnvironment BenchEnvironment::fromHello(const json& hello) {
  BenchEnvironment e;
  e.gpu = stringOrNull(hello, "gpu");
  e.driver = stringOrNull(hello, "driver");
  e.cuda = stringOrNull(hello, "torchCuda");
  e.torch = stringOrNull(hello, "torch");
  e.python = stringOrNull(hello, "python");
  return e;
}

std::string BenchEnvironment::describe() const {
  return (gpu ? *gpu : std::string("no GPU")) + ", driver " + driver.value_or("—") + ", CUDA " + cuda.value_or("—") +
         ", PyTorch " + torch.value_or("?");
}

void OptimizeRunReader::line(std::string_view text) {
  json message;
  try {
    message = json::parse(text);
  } catch (const json::exception&) {
    if (text.empty()) return;
    if (notJson_++ == 0) firstNotJson_ = shorten(std::string(text), 200);
    return;
  }
  if (!message.is_object() || !message.contains("method") || !message["method"].is_string()) {
    if (notJson_++ == 0) firstNotJson_ = shorten(std::string(text), 200);
    return;
  }
  const std::string method = message["method"].get<std::string>();
  const json params = message.value("params", json::object());
  if (method == "stitchcuda/candidate" && params.contains("candidate") && params["candidate"].is_object()) {
    const json& c = params["candidate"];
    CandidateRow row;
    row.id = c.value("id", "");
    row.title = c.value("title", "");
    row.status = c.value("status", "unverified");
    row.speedupEager = numberOrNull(c, "speedupEager");
    row.speedupCompile = numberOrNull(c, "speedupCompile");
    if (c.contains("failedChecks") && c["failedChecks"].is_array())
      for (const json& check : c["failedChecks"])
        if (check.is_string()) row.failedChecks.push_back(check.get<std::string>());
    auto same = std::find_if(candidates_.begin(), candidates_.end(), [&](const auto& r) { return r.id == row.id; });
    if (same == candidates_.end()) candidates_.push_back(std::move(row));
    else {
      row.rooflineFraction = same->rooflineFraction;
      *same = std::move(row);
    }
  } else if (method == "stitchcuda/log") {
    const std::string text = params.value("message", "");
    const std::string level = params.value("level", "info");
    const std::string phase = params.value("phase", "");
    if (auto roof = rooflineOf(text))
      for (auto& c : candidates_)
        if (c.id == roof->first) c.rooflineFraction = roof->second;
    if ((level == "warning" || level == "error" || phase == "DONE") && log_.size() < kLogLines)
      log_.push_back(shorten((phase.empty() ? "" : "[" + phase + "] ") + text, kLogChars));
  } else if (method == "stitchcuda/jobFinished") {
    finished_ = params;
  }
}

TaskResult OptimizeRunReader::result(const BenchTask& task, const process::ChildOutcome& outcome,
                                     const std::optional<json>& report) const {
  TaskResult r;
  r.task = task.key;
  r.level = task.level;
  r.exitCode = outcome.exitCode;
  r.seconds = outcome.seconds;
  r.candidates = candidates_;
  r.candidatesTried = static_cast<int>(candidates_.size());
  r.log = log_;
  for (const auto& c : candidates_)
    if (c.status == "failed") {
      r.firstFailedCheck = c.failedChecks.empty() ? "failed" : c.failedChecks.front();
      break;
    }
  if (finished_) {
    r.state = finished_->value("state", "");
    r.message = finished_->value("message", "");
  }
  // Past the timeout the job is cancelled and still says how it ended: a candidate it verified by
  // then is the task's result, as a job's wall-time budget keeps its best (the note says it was cut).
  const bool cutShort = outcome.timedOut && finished_;
  if (!outcome.startError.empty() || !finished_) {
    r.error = true;
    std::string why = "optimize " + outcome.describe();
    if (outcome.startError.empty() && !outcome.timedOut) why += " without a result";
    if (notJson_ > 0) why += "; " + std::to_string(notJson_) + " line(s) of its output were not JSON: " + firstNotJson_;
    if (const std::string last = lastLineOf(outcome.stderrTail); !last.empty()) why += "; stderr: " + shorten(last, 300);
    r.errorReason = why;
    return r;
  }
  if (auto best = stringOrNull(*finished_, "bestCandidateId")) {
    auto c = std::find_if(candidates_.begin(), candidates_.end(), [&](const auto& row) { return row.id == *best; });
    if (c != candidates_.end() && c->status == "verified") {
      r.best = *best;
      r.speedupEager = c->speedupEager;
      r.speedupCompile = c->speedupCompile;
      r.rooflineFraction = c->rooflineFraction;
    }
  }
  if (cutShort && r.verified()) {
    r.log.push_back("optimize " + outcome.describe() + "; its best verified candidate is kept");
  } else if (cutShort || r.state == "failed" || r.state == "cancelled") {
    r.best.reset(), r.speedupEager.reset(), r.speedupCompile.reset(), r.rooflineFraction.reset();
    r.error = true;
    r.errorReason = cutShort ? "optimize " + outcome.describe()
                    : r.message.empty() ? "the job " + r.state : r.message;
    return r;
  }
  if (!r.verified()) r.needsGpu = r.message.find("need a GPU") != std::string::npos;
  if (report && report->is_object() && report->contains("timing") && (*report)["timing"].is_object())
    r.firstVerifiedSeconds = numberOrNull((*report)["timing"], "firstVerifiedSeconds");
  return r;
}

void to_json(json& j, const BenchEnvironment& e) {
  j = json{{"gpu", orNull(e.gpu)},     {"driver", orNull(e.driver)}, {"cuda", orNull(e.cuda)},
           {"torch", orNull(e.torch)}, {"python", orNull(e.python)}};
}

void from_json(const json& j, BenchEnvironment& e) {
  e.gpu = protocol::optional<std::string>(j, "gpu");
  e.driver = protocol::optional<std::string>(j, "driver");
  e.cuda = protocol::optional<std::string>(j, "cuda");
  e.torch = protocol::optional<std::string>(j, "torch");
  e.python = protocol::optional<std::string>(j, "python");
}

void to_json(json& j, const TaskResult& r) {
  json candidates = json::array();
  for (const auto& c : r.candidates)
    candidates.push_back(json{{"id", c.id},
                              {"title", c.title},
                              {"status", c.status},
                              {"speedupEager", orNull(c.speedupEager)},
                              {"speedupCompile", orNull(c.speedupCompile)},
                              {"rooflineFraction", orNull(c.rooflineFraction)},
                              {"failedChecks", c.failedChecks}});
  j = json{{"task", r.task},
           {"level", r.level},
           {"verified", r.verified()},
           {"error", r.error ? json(r.errorReason) : json(nullptr)},
           {"needsGpu", r.needsGpu},
           {"state", r.state},
           {"message", r.message},
           {"exit", orNull(r.exitCode)},
           {"seconds", r.seconds},
           {"best", orNull(r.best)},
           {"speedupEager", orNull(r.speedupEager)},
           {"speedupCompile", orNull(r.speedupCompile)},
           {"rooflineFraction", orNull(r.rooflineFraction)},
           {"firstVerifiedSeconds", orNull(r.firstVerifiedSeconds)},
           {"candidatesTried", r.candidatesTried},
           {"firstFailedCheck", r.firstFailedCheck.empty() ? json(nullptr) : json(r.firstFailedCheck)},
           {"candidates", candidates},
           {"log", r.log}};
  if (!r.slurm.is_null()) j["slurm"] = r.slurm;
}

void from_json(const json& j, TaskResult& r) {
  using protocol::optional;
  using protocol::required;
  r.task = required<std::string>(j, "task");
  r.level = optional<int>(j, "level").value_or(0);
  auto error = optional<std::string>(j, "error");
  r.error = error.has_value();
  r.errorReason = error.value_or("");
  r.needsGpu = optional<bool>(j, "needsGpu").value_or(false);
  r.state = optional<std::string>(j, "state").value_or("");
  r.message = optional<std::string>(j, "message").value_or("");
  r.exitCode = optional<int>(j, "exit");
  r.seconds = optional<double>(j, "seconds").value_or(0.0);
  r.best = optional<std::string>(j, "best");
  r.speedupEager = optional<double>(j, "speedupEager");
  r.speedupCompile = optional<double>(j, "speedupCompile");
  r.rooflineFraction = optional<double>(j, "rooflineFraction");
  r.firstVerifiedSeconds = optional<double>(j, "firstVerifiedSeconds");
  r.candidatesTried = optional<int>(j, "candidatesTried").value_or(0);
  r.firstFailedCheck = optional<std::string>(j, "firstFailedCheck").value_or("");
  r.log = optional<std::vector<std::string>>(j, "log").value_or(std::vector<std::string>{});
  r.slurm = j.value("slurm", json());
  r.candidates.clear();
  for (const json& c : optional<json>(j, "candidates").value_or(json::array())) {
    CandidateRow row;
    row.id = required<std::string>(c, "id");
    row.title = optional<std::string>(c, "title").value_or("");
    row.status = optional<std::string>(c, "status").value_or("");
    row.speedupEager = optional<double>(c, "speedupEager");
    row.speedupCompile = optional<double>(c, "speedupCompile");
    row.rooflineFraction = optional<double>(c, "rooflineFraction");
    row.failedChecks = optional<std::vector<std::string>>(c, "failedChecks").value_or(std::vector<std::string>{});
    r.candidates.push_back(std::move(row));
  }
}

}  // namespace stitch::server::bench
