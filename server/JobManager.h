// Owns every job of this host: starts runners on the worker pool, gives each a log, a state
// and a cancel source, streams their events, wakes waiters, and reopens finished jobs from
// their logs. Jobs are independent: one failing or cancelled leaves the others running.
#pragma once

#include "agents/Job.h"
#include "agents/JobLog.h"
#include "agents/JobState.h"

#include <boost/asio/thread_pool.hpp>

#include <condition_variable>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace stitch::server {

class JobManager {
public:
  using RunnerFactory =
      std::function<std::unique_ptr<agents::JobRunner>(const protocol::OptimizeParams&)>;
  using EventSink = std::function<void(const agents::JobEvent&)>;
  using ProgressSink = std::function<void(const std::string& message, std::optional<int> percentage)>;
  using FinishedCallback = std::function<void(const protocol::JobFinishedParams&)>;

  JobManager(boost::asio::thread_pool& pool, std::filesystem::path jobsDir, RunnerFactory factory,
             EventSink sink);
  // Cancels every job and waits for their runners to return (they check the token between
  // steps, and worker calls notice a cancel within 100 ms).
  ~JobManager();

  struct StartRequest {
    std::string uri;
    std::string fileName;  // the document's base name, kept for the snapshot
    std::string text;
    int documentVersion = 0;
    protocol::OptimizeParams options;
    ProgressSink progress;
    FinishedCallback onFinished;  // after the jobFinished event went out
  };
  // Returns the job id. Throws std::runtime_error when the job cannot be set up (no runner
  // for the brain, the job folder cannot be written); nothing is left running then.
  std::string start(StartRequest request);
  // False when no such job is running.
  bool cancel(const std::string& jobId);
  void cancelAll();

  std::vector<protocol::JobSummary> list() const;
  std::optional<agents::JobState> state(const std::string& jobId) const;
  // Calls `read` with the most recently started or reopened job about `uri` (nullptr when
  // none), under the manager's lock: hovers and lenses read a large state without copying
  // it, so `read` must be quick and must not call back into the manager.
  template <typename Read>
  auto readLatestFor(const std::string& uri, Read read) const {
    std::lock_guard lock(mutex_);
    return read(latestLocked(uri));
  }

  // Calls `done` once the job has finished (at once when it already has). False when the
  // job is unknown. Cancelling `cancel` drops the wait, not the job.
  bool whenFinished(const std::string& jobId, FinishedCallback done, const agents::CancelToken& cancel);

  // Rebuilds a job from its JSONL log and re-sends its events. Throws std::runtime_error
  // when the log cannot be read or holds no event. Only a log under the jobs folder is
  // written to again (accept/reject records).
  std::string reopen(const std::filesystem::path& logPath);

  // Records an event that did not come from the runner (accept/reject of a candidate).
  void record(const agents::JobEvent& event);

  const std::filesystem::path& jobsDir() const { return jobsDir_; }

private:
  struct Job;
  class Context;
  std::string newJobId();
  const agents::JobState* latestLocked(const std::string& uri) const;
  // `fromRunner`: the job's own event, not an accept or reject recorded for it.
  void emit(Job& job, agents::JobEvent event, bool writeLog = true, bool fromRunner = false);
  void finish(Job& job, protocol::JobFinishedParams params);

  boost::asio::thread_pool& pool_;
  std::filesystem::path jobsDir_;
  RunnerFactory factory_;
  EventSink sink_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Job>> jobs_;
  std::vector<std::string> order_;  // job ids, oldest first
  int runnersActive_ = 0;           // runners on the pool; the destructor waits for zero
  std::condition_variable runnersDone_;
};

}  // namespace stitch::server
