// Job lifecycle, events, waiters and reopening; see JobManager.h.
#include "server/JobManager.h"

#include "server/Uri.h"

#include "server/Logger.h"

#include "agents/UntrustedFiles.h"

#include <boost/asio/post.hpp>

#include <fstream>
#include <random>

namespace stitch::server {

struct JobManager::Job {
  agents::JobState state;
  agents::CancelSource cancel;
  std::unique_ptr<agents::JobLogWriter> log;
  ProgressSink progress;
  FinishedCallback onFinished;
  bool running = false;
  std::vector<std::pair<FinishedCallback, agents::CancelToken>> waiters;
};

class JobManager::Context final : public agents::JobContext {
public:
  Context(JobManager& manager, std::shared_ptr<Job> job) : manager_(manager), job_(std::move(job)) {}
  void emit(agents::JobEvent event) override { manager_.emit(*job_, std::move(event), true, true); }
  void progress(const std::string& message, std::optional<int> percentage) override {
    if (job_->progress) job_->progress(message, percentage);
  }
  const agents::CancelToken& cancelToken() const override { return token_; }

private:
  JobManager& manager_;
  std::shared_ptr<Job> job_;
  agents::CancelToken token_ = job_->cancel.token();
};

JobManager::JobManager(boost::asio::thread_pool& pool, std::filesystem::path jobsDir,
                       RunnerFactory factory, EventSink sink)
    : pool_(pool), jobsDir_(std::move(jobsDir)), factory_(std::move(factory)), sink_(std::move(sink)) {}

JobManager::~JobManager() {
  cancelAll();
  std::unique_lock lock(mutex_);
  runnersDone_.wait(lock, [this] { return runnersActive_ == 0; });
}

std::string JobManager::newJobId() {
  std::string stamp = agents::utcNow();  // 2026-11-22T03:25:01.123Z
  std::string compact;
  for (char c : stamp.substr(0, 19))
    if (std::isdigit(static_cast<unsigned char>(c))) compact += c;
  static std::mt19937 rng{std::random_device{}()};
  char suffix[8];
  std::snprintf(suffix, sizeof suffix, "%04x", static_cast<unsigned>(rng() & 0xffff));
  return compact.substr(0, 8) + "-" + compact.substr(8) + "-" + suffix;
}

std::string JobManager::start(StartRequest request) {
  auto runner = factory_(request.options);
  if (!runner) throw std::runtime_error("the \"" + request.options.brain + "\" brain is not available in this build");

  auto job = std::make_shared<Job>();
  std::string id;
  {
    std::lock_guard lock(mutex_);
    do id = newJobId();
    while (jobs_.count(id));
  }
  std::filesystem::path dir = jobsDir_ / id;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create the job folder " + dir.string() + ": " + ec.message());
  std::filesystem::path taskFile = dir / (request.fileName.empty() ? "task.py" : request.fileName);
  {
    std::ofstream out(taskFile, std::ios::binary);
    out << request.text;
    if (!out) throw std::runtime_error("cannot write the task snapshot " + taskFile.string());
  }
  job->log = std::make_unique<agents::JobLogWriter>(dir / "log.jsonl");
  job->state.jobId = id;
  job->state.uri = request.uri;
  job->state.startedAt = agents::utcNow();
  job->state.logPath = job->log->path().string();
  job->state.phase = "BASELINE";
  job->progress = std::move(request.progress);
  job->onFinished = std::move(request.onFinished);
  job->running = true;

  agents::JobRequest jobRequest{id, request.uri, taskFile, dir, request.documentVersion,
                                std::move(request.options), uriToPath(request.uri).value_or("")};
  {
    std::lock_guard lock(mutex_);
    jobs_[id] = job;
    order_.push_back(id);
    ++runnersActive_;
  }
  logInfo("job " + id + " started for " + request.uri);
  boost::asio::post(pool_, [this, job, jobRequest = std::move(jobRequest),
                            runner = std::shared_ptr<agents::JobRunner>(std::move(runner))] {
    Context context(*this, job);
    protocol::JobFinishedParams result;
    try {
      result = runner->run(jobRequest, context);
    } catch (const std::exception& e) {
      result.state = "failed";
      result.message = std::string("internal error: ") + e.what();
    }
    result.jobId = jobRequest.jobId;
    if (job->cancel.token().cancelled() && result.state != "improved") result.state = "cancelled";
    finish(*job, std::move(result));
    std::lock_guard lock(mutex_);
    if (--runnersActive_ == 0) runnersDone_.notify_all();
  });
  return id;
}

void JobManager::emit(Job& job, agents::JobEvent event, bool writeLog, bool fromRunner) {
  {
    std::lock_guard lock(mutex_);
    // The runner's later word on a candidate (the loop sends one again with its speedup over
    // torch.compile, timed after it was verified) never undoes the user's accept or reject of it.
    if (auto* c = std::get_if<protocol::CandidateParams>(&event); c && fromRunner)
      if (const auto* known = job.state.candidate(c->candidate.id);
          known && (known->status == "accepted" || known->status == "rejected"))
        c->candidate.status = known->status;
    job.state.apply(event);
  }
  if (writeLog && job.log) {
    try {
      job.log->append(event);
    } catch (const std::exception& e) {
      logError("job " + job.state.jobId + ": cannot append to its log: " + e.what());
    }
  }
  if (sink_) sink_(event);
}

void JobManager::finish(Job& job, protocol::JobFinishedParams params) {
  emit(job, params);
  std::vector<std::pair<FinishedCallback, agents::CancelToken>> waiters;
  {
    std::lock_guard lock(mutex_);
    job.running = false;
    waiters.swap(job.waiters);
  }
  logInfo("job " + params.jobId + " finished: " + params.state);
  if (job.onFinished) job.onFinished(params);
  for (auto& [done, token] : waiters)
    if (!token.cancelled()) done(params);
}

bool JobManager::cancel(const std::string& jobId) {
  std::shared_ptr<Job> job;
  {
    std::lock_guard lock(mutex_);
    auto it = jobs_.find(jobId);
    if (it == jobs_.end() || !it->second->running) return false;
    job = it->second;
  }
  logInfo("job " + jobId + " cancelled");
  job->cancel.cancel();
  return true;
}

void JobManager::cancelAll() {
  std::vector<std::shared_ptr<Job>> jobs;
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, job] : jobs_) jobs.push_back(job);
  }
  for (auto& job : jobs) job->cancel.cancel();
}

std::vector<protocol::JobSummary> JobManager::list() const {
  std::lock_guard lock(mutex_);
  std::vector<protocol::JobSummary> out;
  for (const auto& id : order_) out.push_back(jobs_.at(id)->state.summary());
  return out;
}

std::optional<agents::JobState> JobManager::state(const std::string& jobId) const {
  std::lock_guard lock(mutex_);
  auto it = jobs_.find(jobId);
  if (it == jobs_.end()) return std::nullopt;
  return it->second->state;
}

const agents::JobState* JobManager::latestLocked(const std::string& uri) const {
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
    const auto& job = jobs_.at(*it);
    if (job->state.uri == uri) return &job->state;
  }
  return nullptr;
}

bool JobManager::whenFinished(const std::string& jobId, FinishedCallback done,
                              const agents::CancelToken& cancel) {
  std::optional<protocol::JobFinishedParams> already;
  {
    std::lock_guard lock(mutex_);
    auto it = jobs_.find(jobId);
    if (it == jobs_.end()) return false;
    if (it->second->state.finished && !it->second->running)
      already = it->second->state.finished;
    else
      it->second->waiters.emplace_back(std::move(done), cancel);
  }
  if (already) done(*already);
  return true;
}

std::string JobManager::reopen(const std::filesystem::path& logPath) {
  agents::JobLogContents contents = agents::readJobLog(logPath);
  for (const auto& problem : contents.problems) logWarning("reopening: " + problem);
  if (contents.events.empty()) throw std::runtime_error("the job log " + logPath.string() + " holds no event");
  std::string id = agents::jobIdOf(contents.events.front());
  // Resolved: the job's folder, where its candidates' files must lie, is the one the log is really in.
  std::error_code ec;
  const std::filesystem::path realPath = std::filesystem::weakly_canonical(logPath, ec);
  if (ec) throw std::runtime_error("cannot resolve the job log " + logPath.string() + ": " + ec.message());
  auto job = std::make_shared<Job>();
  {
    std::lock_guard lock(mutex_);
    if (jobs_.count(id)) return id;  // already open: one state per job
    jobs_[id] = job;
    order_.push_back(id);
    job->state.jobId = id;
    job->state.logPath = realPath.string();
  }
  // Accept/reject keep appending to a log of the host's own; one opened from elsewhere (a file from
  // anyone) is only read.
  if (!agents::liesInside(jobsDir_, logPath)) {
    logInfo("job " + id + ": its log lies outside " + jobsDir_.string() + ", so it is not written to");
  } else {
    try {
      job->log = std::make_unique<agents::JobLogWriter>(logPath);
    } catch (const std::exception& e) {
      logWarning(std::string("reopened job is read-only: ") + e.what());
    }
  }
  for (auto& event : contents.events) {
    if (agents::jobIdOf(event) != id) continue;  // a log holds one job
    emit(*job, std::move(event), /*writeLog=*/false);
  }
  if (!job->state.finished) {
    protocol::JobFinishedParams ended{id, "failed", std::nullopt, std::nullopt,
                                      "the job's log ends before the job finished"};
    emit(*job, ended, /*writeLog=*/false);
  }
  logInfo("job " + id + " reopened from " + logPath.string());
  return id;
}

void JobManager::record(const agents::JobEvent& event) {
  std::shared_ptr<Job> job;
  {
    std::lock_guard lock(mutex_);
    auto it = jobs_.find(agents::jobIdOf(event));
    if (it == jobs_.end()) return;
    job = it->second;
  }
  emit(*job, event);
}

}  // namespace stitch::server
