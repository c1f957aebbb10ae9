// Event application for JobState.
#include "agents/JobState.h"

namespace stitch::agents {

void JobState::apply(const JobEvent& event) {
  struct Visitor {
    JobState& s;
    void operator()(const protocol::PlanParams& p) {
      s.uri = p.uri;
      s.plan = p;
    }
    void operator()(const protocol::CandidateParams& p) {
      s.uri = p.uri;
      for (auto& c : s.candidates)
        if (c.id == p.candidate.id) {
          c = p.candidate;
          return;
        }
      s.candidates.push_back(p.candidate);
    }
    void operator()(const protocol::ProfileParams& p) {
      s.uri = p.uri;
      s.profiles[p.subject] = p;
    }
    void operator()(const protocol::LogParams& p) {
      if (!p.phase.empty()) s.phase = p.phase;
      s.recentLog.push_back(p);
      if (s.recentLog.size() > kRecentLog) s.recentLog.pop_front();
    }
    void operator()(const protocol::JobFinishedParams& p) {
      s.finished = p;
      s.phase = "DONE";
    }
  };
  if (jobId.empty()) jobId = jobIdOf(event);
  std::visit(Visitor{*this}, event);
}

const protocol::Candidate* JobState::candidate(const std::string& id) const {
  for (const auto& c : candidates)
    if (c.id == id) return &c;
  return nullptr;
}

std::string JobState::state() const { return finished ? finished->state : "running"; }

protocol::JobSummary JobState::summary() const {
  protocol::JobSummary s;
  s.jobId = jobId;
  s.uri = uri;
  s.state = state();
  s.phase = phase;
  s.startedAt = startedAt;
  s.logPath = logPath;
  if (finished) s.bestCandidateId = finished->bestCandidateId;
  return s;
}

}  // namespace stitch::agents
