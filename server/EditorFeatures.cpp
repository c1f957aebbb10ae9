// Hovers, lenses and actions from job state; see EditorFeatures.h.
#include "server/EditorFeatures.h"

#include "protocol/NumberText.h"

#include <algorithm>
#include <cstdio>
#include <regex>

namespace stitch::server {
namespace {

using protocol::fixed;

std::string duration(double us) {
  if (us >= 1000.0) return fixed(us / 1000.0, 3) + " ms";
  return fixed(us, 1) + " µs";
}

std::string subjectName(const agents::JobState& job, const std::string& subject) {
  if (subject == "reference") return "reference (eager)";
  if (const auto* c = job.candidate(subject)) return "candidate " + c->title;
  return subject;
}

json commandArgs(const agents::JobState& job, const protocol::Candidate& c) {
  return json::array({json{{"jobId", job.jobId}, {"candidateId", c.id}}});
}

// Accept runs on the host for a verified candidate; any other goes through the client's
// confirmation, which is told why the candidate is not verified.
json acceptCommand(const agents::JobState& job, const protocol::Candidate& c, const std::string& title) {
  if (c.status == "verified") return json{{"title", title}, {"command", kAcceptCommand}, {"arguments", commandArgs(job, c)}};
  return json{{"title", title},
              {"command", kAcceptUnverifiedCommand},
              {"arguments", json::array({json{{"jobId", job.jobId},
                                              {"candidateId", c.id},
                                              {"title", c.title},
                                              {"status", c.status},
                                              {"failedChecks", c.failedChecks}}})}};
}

bool overlaps(const protocol::Range& a, const protocol::Range& b) {
  return !(a.end < b.start || b.end < a.start);
}

// Operator names (`aten::add`), as the reference profile lists them, rather than kernel names.
bool namesOperators(const std::vector<std::string>& names) {
  static const std::regex op(R"(^[A-Za-z_]\w*::[A-Za-z_][\w.]*$)");
  return std::all_of(names.begin(), names.end(), [](const std::string& n) { return std::regex_match(n, op); });
}

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    lines.push_back(text.substr(start, end - start));
  lines.push_back(text.substr(start));
  return lines;
}

std::size_t indentOf(const std::string& line) { return line.find_first_not_of(" \t"); }

// Blank or a comment: says nothing about which block a line is in.
bool noCode(const std::string& line) {
  const auto i = indentOf(line);
  return i == std::string::npos || line[i] == '#' || line[i] == '\r';
}

// "Model" on the model's class line, "Model.forward" on its forward's; nullopt on any other line.
// Indentation is enough to tell: a `def forward` belongs to the class of the nearest less indented
// line above it.
std::optional<std::string> modelHeaderAt(const std::string& text, int line) {
  static const std::regex classLine(R"(^\s*class\s+([A-Za-z_]\w*))");
  static const std::regex forwardLine(R"(^\s*(async\s+)?def\s+forward\s*\()");
  const auto lines = linesOf(text);
  if (line < 0 || static_cast<std::size_t>(line) >= lines.size()) return std::nullopt;
  const std::string model = modelClassName(text);
  std::smatch m;
  if (std::regex_search(lines[line], m, classLine)) return m[1] == model ? std::optional(model) : std::nullopt;
  if (!std::regex_search(lines[line], forwardLine)) return std::nullopt;
  const auto indent = indentOf(lines[line]);
  for (int i = line - 1; i >= 0; --i) {
    if (noCode(lines[i]) || indentOf(lines[i]) >= indent) continue;
    if (std::regex_search(lines[i], m, classLine) && m[1] == model) return model + ".forward";
    return std::nullopt;
  }
  return std::nullopt;
}

std::string jobOutcome(const agents::JobState& job) {
  if (!job.finished) return "running";
  if (job.finished->state == "noImprovement") return job.finished->needsGpu ? "not measured (no GPU)" : "no improvement";
  return job.finished->state;
}

std::string candidateStatus(const agents::JobState& job, const protocol::Candidate& c) {
  const auto speedups = [&] {
    std::string s = c.speedupEager ? fixed(*c.speedupEager, 2) + "× over eager" : "";
    if (c.speedupCompile) s += (s.empty() ? "" : ", ") + fixed(*c.speedupCompile, 2) + "× over torch.compile";
    return s;
  };
  if (c.status == "accepted") return "accepted" + (c.speedupEager ? " (" + speedups() + ")" : std::string(" (never timed)"));
  if (c.status == "verified") return "verified" + (c.speedupEager ? ", " + speedups() : std::string());
  if (c.status == "unverified" && job.finished && job.finished->needsGpu)
    return "unverified: no GPU ran it, so it was never timed or checked against the original";
  return candidateBadge(c);
}

// The hover of the model's class and forward: the whole forward's time, where it goes, and what
// became of the candidates (the accepted one first, then the fastest verified, then the newest).
std::string forwardSummary(const agents::JobState& job, const std::string& what) {
  std::string md = "**StitchCUDA** · `" + what + "` · job " + job.jobId + ": " + jobOutcome(job) + "\n\n";
  if (auto it = job.profiles.find("reference"); it != job.profiles.end() && !it->second.lines.empty()) {
    const auto& p = it->second;
    std::vector<const protocol::ProfileLine*> hot;
    for (const auto& l : p.lines) hot.push_back(&l);
    std::sort(hot.begin(), hot.end(), [](const auto* a, const auto* b) { return a->share > b->share; });
    md += "Whole forward: **" + duration(p.totalGpuTimeUs) + "** of " + (p.timeKind == "cpu" ? "CPU time (no GPU)" : "GPU time") +
          " per call in eager PyTorch; most of it on ";
    for (std::size_t i = 0; i < hot.size() && i < 3; ++i)
      md += (i ? ", " : "") + std::string("line ") + std::to_string(hot[i]->line + 1) + " (" + fixed(hot[i]->share * 100.0, 0) + "%)";
    md += ".\n\n";
  }
  std::vector<const protocol::Candidate*> shown;
  for (auto it = job.candidates.rbegin(); it != job.candidates.rend(); ++it)
    if (it->status != "rejected") shown.push_back(&*it);
  const auto rank = [](const protocol::Candidate* c) { return c->status == "accepted" ? 0 : c->status == "verified" ? 1 : 2; };
  std::stable_sort(shown.begin(), shown.end(), [&](const auto* a, const auto* b) {
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    return rank(a) == 1 && a->speedupEager.value_or(0) > b->speedupEager.value_or(0);
  });
  constexpr std::size_t kShown = 3;
  for (std::size_t i = 0; i < shown.size() && i < kShown; ++i)
    md += "- candidate " + shown[i]->id + (shown[i]->title.empty() ? "" : " *" + shown[i]->title + "*") + ": " +
          candidateStatus(job, *shown[i]) + "\n";
  if (shown.size() > kShown) md += "- and " + std::to_string(shown.size() - kShown) + " more in the plan view\n";
  const auto rejected = job.candidates.size() - shown.size();
  if (shown.empty() && rejected) md += "No candidate left: " + std::to_string(rejected) + " rejected.\n";
  else if (shown.empty()) md += job.finished ? "No candidate.\n" : "No candidate yet.\n";
  return md;
}

}  // namespace

std::string modelClassName(const std::string& text) {
  static const std::regex directive(R"(^[ \t]*#[ \t]*stitchcuda:[ \t]*(.*)$)");
  std::string name = "Model";
  std::smatch m;
  for (const auto& line : linesOf(text)) {
    if (!std::regex_search(line, m, directive)) continue;
    static const std::regex model(R"((?:^|\s)model=(\S+))");
    std::smatch v;
    const std::string body = m[1];
    if (std::regex_search(body, v, model)) name = v[1];
  }
  return name;
}

std::optional<std::string> hoverMarkdown(const agents::JobState& job, int line, const std::string& text) {
  if (auto what = modelHeaderAt(text, line)) return forwardSummary(job, *what);
  std::string rows;
  std::string details;
  bool cpuTimes = false;
  // The reference first, then candidates in arrival order: the user compares down a column.
  std::vector<const protocol::ProfileParams*> profiles;
  if (auto it = job.profiles.find("reference"); it != job.profiles.end()) profiles.push_back(&it->second);
  for (const auto& [subject, p] : job.profiles)
    if (subject != "reference") profiles.push_back(&p);
  for (const auto* p : profiles)
    for (const auto& l : p->lines) {
      if (l.line != line) continue;
      cpuTimes = cpuTimes || p->timeKind == "cpu";
      std::string achieved = l.achievedPct ? fixed(*l.achievedPct, 0) + "% of peak" : "—";
      rows += "| " + subjectName(job, p->subject) + " | " + duration(l.gpuTimeUs) + " | " +
              fixed(l.share * 100.0, 1) + "% | " + (l.bound.empty() ? "—" : l.bound) + " | " +
              achieved + " |\n";
      if (l.topStall) details += "- " + subjectName(job, p->subject) + ": top stall " + *l.topStall + "\n";
      if (!l.kernels.empty()) {
        details += "- " + subjectName(job, p->subject) + (namesOperators(l.kernels) ? " operators:" : " kernels:");
        for (const auto& k : l.kernels) details += " `" + k + "`";
        details += "\n";
      }
    }
  if (rows.empty()) return std::nullopt;
  return "**StitchCUDA profile** · line " + std::to_string(line + 1) + "\n\n" +
         "| run | " + (cpuTimes ? "CPU time (no GPU)" : "GPU time") +
         " | share of forward | bound | achieved |\n|---|---|---|---|---|\n" + rows +
         (details.empty() ? "" : "\n" + details);
}

std::string candidateBadge(const protocol::Candidate& c) {
  if (c.status == "verified")
    return c.speedupEager ? fixed(*c.speedupEager, 2) + "×, verified" : std::string("verified");
  if (c.status == "failed") {
    std::string checks;
    for (const auto& f : c.failedChecks) checks += (checks.empty() ? "" : ", ") + f;
    return "failed" + (checks.empty() ? std::string() : ": " + checks);
  }
  return "unverified";
}

bool isOpen(const protocol::Candidate& c) { return c.status != "accepted" && c.status != "rejected"; }

// Of the open candidates that replace the same code, the one worth a lens: the fastest verified,
// else the newest. The refine step makes several variants of one range; one lens row each would
// stack Accept links the user cannot tell apart. The others stay one code action away, and the
// lens says how many there were.
bool preferredOver(const protocol::Candidate& a, const protocol::Candidate& b) {
  const bool av = a.status == "verified", bv = b.status == "verified";
  if (av != bv) return av;
  if (av) return a.speedupEager.value_or(0) > b.speedupEager.value_or(0);
  return true;  // the newer of two unverified or failed candidates
}

json codeLenses(const agents::JobState& job) {
  std::vector<const protocol::Candidate*> shown;
  for (const auto& c : job.candidates) {
    if (!isOpen(c)) continue;
    auto same = std::find_if(shown.begin(), shown.end(), [&](const auto* s) { return s->range == c.range; });
    if (same == shown.end()) shown.push_back(&c);
    else if (preferredOver(c, **same)) *same = &c;
  }
  json lenses = json::array();
  for (const auto* c : shown) {
    const int others = static_cast<int>(std::count_if(job.candidates.begin(), job.candidates.end(), [&](const auto& o) {
      return isOpen(o) && o.range == c->range && &o != c;
    }));
    protocol::Range at{c->range.start, c->range.start};
    json diffArgs = json::array({json{{"jobId", job.jobId},
                                      {"candidateId", c->id},
                                      {"uri", job.uri},
                                      {"range", c->range},
                                      {"newText", c->newText}}});
    const std::string badge = candidateBadge(*c) +
                              (others ? (c->status == "verified" ? "; best of " : "; newest of ") + std::to_string(others + 1) : "");
    const std::string accept = c->status == "verified" ? "Accept (" + badge + ")" : "Accept anyway… (" + badge + ")";
    lenses.push_back(json{{"range", at}, {"command", acceptCommand(job, *c, accept)}});
    lenses.push_back(json{{"range", at},
                          {"command", {{"title", "Reject"}, {"command", kRejectCommand},
                                       {"arguments", commandArgs(job, *c)}}}});
    lenses.push_back(json{{"range", at},
                          {"command", {{"title", "Diff"}, {"command", kDiffCommand},
                                       {"arguments", diffArgs}}}});
  }
  return lenses;
}

json codeActions(const agents::JobState& job, const protocol::Range& range) {
  json actions = json::array();
  for (const auto& c : job.candidates) {
    if (!isOpen(c) || !overlaps(c.range, range)) continue;
    std::string title = "StitchCUDA: apply " + c.title + " (" + candidateBadge(c) + ")";
    actions.push_back(json{{"title", title},
                           {"kind", "refactor.rewrite"},
                           {"isPreferred", c.status == "verified"},
                           {"command", acceptCommand(job, c, title)}});
  }
  return actions;
}

json candidateEdit(const std::string& uri, const protocol::Candidate& c, bool documentChanges) {
  json edit{{"range", c.range}, {"newText", c.newText}};
  if (!documentChanges) return json{{"changes", {{uri, json::array({edit})}}}};
  return json{{"documentChanges",
               json::array({json{{"textDocument", {{"uri", uri}, {"version", c.documentVersion}}}, {"edits", json::array({edit})}}})}};
}

std::optional<protocol::CandidateParams> undoOrRedoOfAccept(const AcceptedEdit& edit, const agents::JobState& job,
                                                            const std::string& text, int version) {
  const protocol::Candidate* c = job.candidate(edit.candidateId);
  if (!c) return std::nullopt;
  protocol::CandidateParams event{job.jobId, job.uri, *c};
  if (c->status == "accepted" && text == edit.textBefore) {
    event.candidate.status = edit.openStatus;
    event.candidate.documentVersion = version;  // the text it was made for, at this version
    return event;
  }
  if (c->status == edit.openStatus && text == edit.textAfter) {
    event.candidate.status = "accepted";
    return event;
  }
  return std::nullopt;
}

}  // namespace stitch::server
