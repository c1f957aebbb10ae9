// What is known about one job, built only by applying its events in order. The editor
// features (hovers, lenses, actions) read it; a reopened log rebuilds it the same way.
#pragma once

#include "agents/JobEvent.h"

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stitch::agents {

struct JobState {
  std::string jobId;
  std::string uri;
  std::string phase;
  std::string startedAt;
  std::string logPath;
  std::optional<protocol::PlanParams> plan;
  std::vector<protocol::Candidate> candidates;          // in arrival order, updated in place
  std::map<std::string, protocol::ProfileParams> profiles;  // by subject
  std::deque<protocol::LogParams> recentLog;            // the last kRecentLog lines
  std::optional<protocol::JobFinishedParams> finished;

  static constexpr std::size_t kRecentLog = 200;

  void apply(const JobEvent& event);
  const protocol::Candidate* candidate(const std::string& id) const;
  // "running" until the job finished, then the finished state.
  std::string state() const;
  protocol::JobSummary summary() const;
};

}  // namespace stitch::agents
