// Hovers, lenses and actions from job state; see EditorFeatures.h.
#include "server/EditorFeatures.h"

#include "protocol/NumberText.h"

#include <algorithm>
#include <cstdio>

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

}  // namespace

std::optional<std::string> hoverMarkdown(const agents::JobState& job, int line) {
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
        details += "- " + subjectName(job, p->subject) + " kernels:";
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

json candidateEdit(const std::string& uri, const protocol::Candidate& c, const std::vector<NewFile>& files,
                   bool documentChanges) {
  json edit{{"range", c.range}, {"newText", c.newText}};
  if (!documentChanges) return json{{"changes", {{uri, json::array({edit})}}}};
  json changes = json::array();
  for (const auto& f : files) {
    changes.push_back(json{{"kind", "create"}, {"uri", f.uri}, {"options", {{"overwrite", true}}}});
    changes.push_back(json{{"textDocument", {{"uri", f.uri}, {"version", nullptr}}},
                           {"edits", json::array({json{{"range", protocol::Range{}}, {"newText", f.text}}})}});
  }
  changes.push_back(json{{"textDocument", {{"uri", uri}, {"version", c.documentVersion}}}, {"edits", json::array({edit})}});
  return json{{"documentChanges", changes}};
}

}  // namespace stitch::server
