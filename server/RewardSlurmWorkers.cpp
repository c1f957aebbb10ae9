// serve-reward's Slurm worker jobs, seen from the service; see RewardSlurmWorkers.h.
#include "server/RewardSlurmWorkers.h"

#include "server/Logger.h"
#include "server/RewardAccess.h"
#include "server/RewardRequest.h"

#include <fcntl.h>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

namespace stitch::server {
namespace fs = std::filesystem;
using protocol::json;
using namespace std::chrono_literals;

struct RewardSlurmWorkers::Seat {
  std::unique_ptr<LineSocket> socket;  // set while its worker job is connected
  json hello;                          // the harness's hello on the node
  json placement;                      // node, job, GPU
  std::string job;                     // JOBID_INDEX of its latest submission
  bool inCall = false;                 // a request is on the socket: only its caller closes it
  int missing = 0;                     // polls in a row squeue did not list the job
  int failedStarts = 0;                // jobs in a row that ended before they connected
  bool gaveUp = false;
};

namespace {

agents::WorkerReply failed(std::string code, std::string message) {
  return {std::nullopt, agents::WorkerError{std::move(code), std::move(message), std::nullopt, std::nullopt}};
}

std::string randomToken() {
  std::random_device rd;
  std::string token;
  const char* hex = "0123456789abcdef";
  for (int i = 0; i < 64; ++i) token += hex[rd() % 16];
  return token;
}

// Written readable by its owner alone: it holds the token a worker job proves itself with.
std::optional<std::string> writePrivate(const fs::path& file, const std::string& text) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0 || ::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    if (fd >= 0) ::close(fd);
    return "cannot write " + file.string();
  }
  ::close(fd);
  return std::nullopt;
}

}  // namespace

// A pool slot's worker: whichever job holds its seat now. One call at a time (the slot's thread).
class RewardSlurmWorkers::RemoteWorker final : public IntermittentWorker {
public:
  RemoteWorker(RewardSlurmWorkers& owner, std::size_t seat) : owner_(owner), seat_(seat) {}

  // A seat given up waits for ever, unless every seat is: then requests are taken and answered 503.
  bool awaitReady(const agents::CancelToken& cancel) override {
    std::unique_lock lock(owner_.mutex_);
    while (!seat().socket && !owner_.allGaveUp()) {
      if (cancel.cancelled() || owner_.stopping_) return false;
      owner_.changed_.wait_for(lock, 200ms);
    }
    return true;
  }

  agents::WorkerReply call(const std::string& method, const json& params, std::chrono::milliseconds deadline,
                           const agents::CancelToken& cancel) override {
    LineSocket* socket = nullptr;
    {
      std::lock_guard lock(owner_.mutex_);
      if (!seat().socket && owner_.allGaveUp())
        return failed("worker_start_failed", "no Slurm worker job of the service could start; see " +
                                                 (owner_.run_.dir / "logs").string());
      if (!seat().socket) return failed("worker_not_ready", "the Slurm worker of seat " + std::to_string(seat_) + " is gone");
      if (method == "hello") return {seat().hello, std::nullopt};
      seat().inCall = true;
      socket = seat().socket.get();
    }
    const bool sent = socket->send(json{{"method", method}, {"params", params}}.dump(-1, ' ', false, json::error_handler_t::replace));
    std::string line;
    const auto read = sent ? socket->read(line, std::chrono::steady_clock::now() + deadline, &cancel) : LineSocket::Read::closed;
    json answer = read == LineSocket::Read::line ? json::parse(line, nullptr, false) : json();
    agents::WorkerReply reply;
    {
      std::lock_guard lock(owner_.mutex_);
      seat().inCall = false;
      const std::string who = "the Slurm worker " + seat().job + " (seat " + std::to_string(seat_) + ")";
      if (answer.is_object()) return {answer, std::nullopt};
      if (read == LineSocket::Read::timeout) {
        reply = failed("deadline_exceeded", who + " gave no answer in " + std::to_string(deadline.count() / 1000) + " s");
        owner_.lose(seat_, "no answer in time");
      } else if (read == LineSocket::Read::cancelled) {
        // The service stops: the connection goes (its answer, if one comes, is no longer read), the job
        // with the others at stop().
        reply = failed("cancelled", "the reward service is stopping");
        seat().socket.reset();
        return reply;
      } else {
        reply = failed("worker_lost", who + " was lost while it ran the request");
        owner_.lose(seat_, read == LineSocket::Read::line ? "it answered something unreadable" : "its connection closed");
      }
    }
    owner_.replaceLost();
    return reply;
  }

private:
  Seat& seat() { return *owner_.seats_[seat_]; }
  RewardSlurmWorkers& owner_;
  std::size_t seat_;
};

RewardSlurmWorkers::RewardSlurmWorkers(const SlurmOptions& options, std::size_t seats, fs::path dir)
    : options_(options), submitter_(options_, run_) {
  run_.dir = std::move(dir);
  for (std::size_t i = 0; i < seats; ++i) {
    run_.keys.push_back("serve-reward worker " + std::to_string(i));
    seats_.push_back(std::make_unique<Seat>());
  }
}

RewardSlurmWorkers::~RewardSlurmWorkers() { stop(); }

std::optional<std::string> RewardSlurmWorkers::start() {
  if (auto error = submitter_.prepare()) return error;
  auto listener = LineListener::open();
  if (auto* error = std::get_if<std::string>(&listener)) return *error;
  listener_ = std::move(std::get<0>(listener));
  token_ = randomToken();
  const json service{{"host", hostName()}, {"port", listener_->port()}, {"token", token_}};
  if (auto error = writePrivate(run_.dir / "service.json", service.dump(1) + "\n")) return error;
  std::vector<std::size_t> all;
  for (std::size_t i = 0; i < seats_.size(); ++i) all.push_back(i);
  {
    std::lock_guard submitLock(submitMutex_);
    if (auto error = submitter_.submit(all)) return error;
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < seats_.size(); ++i) seats_[i]->job = submitter_.lastJob(i);
  }
  started_ = true;
  logInfo("serve-reward: " + std::to_string(seats_.size()) + " Slurm worker job(s) " + submitter_.jobName() +
          " connect to " + hostName() + ":" + std::to_string(listener_->port()));
  acceptThread_ = std::thread(&RewardSlurmWorkers::acceptLoop, this);
  watchThread_ = std::thread(&RewardSlurmWorkers::watchLoop, this);
  return std::nullopt;
}

bool RewardSlurmWorkers::allGaveUp() const {
  for (const auto& s : seats_)
    if (!s->gaveUp) return false;
  return true;
}

RewardPool::WorkerFactory RewardSlurmWorkers::factory() {
  return [this](std::size_t slot, std::optional<int>) -> std::unique_ptr<agents::Worker> {
    return std::make_unique<RemoteWorker>(*this, slot);
  };
}

void RewardSlurmWorkers::acceptLoop() {
  while (!stopping_)
    if (auto socket = listener_->accept(200ms)) admit(std::move(socket));
}

// A worker job's first line: the token, its seat and job, where it runs and its harness's hello. Anything
// else (a stranger, a job replaced meanwhile) is closed, which ends that job.
void RewardSlurmWorkers::admit(std::unique_ptr<LineSocket> socket) {
  std::string line;
  if (socket->read(line, std::chrono::steady_clock::now() + 10s) != LineSocket::Read::line) return;
  const json hi = json::parse(line, nullptr, false);
  if (!hi.is_object() || !hi.contains("token") || !hi["token"].is_string() ||
      !tokenMatches(hi["token"].get<std::string>(), token_) || !hi.contains("seat") ||
      !hi["seat"].is_number_unsigned() || !hi.contains("job") || !hi["job"].is_string())
    return;
  const std::size_t seat = hi["seat"];
  const std::string job = hi["job"];
  std::lock_guard lock(mutex_);
  if (seat >= seats_.size() || stopping_) return;
  Seat& s = *seats_[seat];
  if (s.socket || s.job != job) {
    logWarning("serve-reward: refused a worker of job " + job + " for seat " + std::to_string(seat) + ", which " +
               (s.socket ? "is taken" : "waits for job " + s.job));
    return;
  }
  s.socket = std::move(socket);
  s.hello = hi.value("hello", json());
  s.placement = hi.value("placement", json::object());
  s.failedStarts = 0;
  s.missing = 0;
  logInfo("serve-reward: Slurm worker " + job + " (seat " + std::to_string(seat) + ") connected from " +
          s.placement.value("node", std::string("?")));
  changed_.notify_all();
}

void RewardSlurmWorkers::lose(std::size_t seat, const std::string& why) {
  Seat& s = *seats_[seat];
  if (!s.socket) return;
  s.socket.reset();
  s.hello = nullptr;
  if (stopping_) return;
  ++lost_;
  logWarning("serve-reward: Slurm worker " + s.job + " (seat " + std::to_string(seat) + ") lost: " + why +
             "; a replacement is submitted");
  toCancel_.push_back(s.job);
  toReplace_.push_back(seat);
}

void RewardSlurmWorkers::replaceLost() {
  std::vector<std::size_t> seats;
  std::vector<std::string> jobs;
  {
    std::lock_guard lock(mutex_);
    seats.swap(toReplace_);
    jobs.swap(toCancel_);
  }
  if (!jobs.empty()) slurmCancel(jobs);  // a job whose worker went away may still hold its GPU
  if (seats.empty() || stopping_) return;
  std::lock_guard submitLock(submitMutex_);
  if (auto error = submitter_.submit(seats)) {
    logError("serve-reward: " + *error + "; trying again at the next poll");
    std::lock_guard lock(mutex_);
    toReplace_.insert(toReplace_.end(), seats.begin(), seats.end());
    return;
  }
  std::lock_guard lock(mutex_);
  for (std::size_t i : seats) {
    seats_[i]->job = submitter_.lastJob(i);
    seats_[i]->missing = 0;
  }
}

// Every 2 s: a connected worker whose connection closed while idle, or whose job left squeue, is lost; a
// job that left squeue before it connected is submitted again, at most --slurm-retries times in a row.
void RewardSlurmWorkers::watchLoop() {
  while (!stopping_) {
    for (int i = 0; i < 10 && !stopping_; ++i) std::this_thread::sleep_for(200ms);
    if (stopping_) return;
    std::string error;
    const auto alive = slurmAliveElements(submitter_.jobName(), error);
    std::vector<std::string> ended;  // jobs that left the queue: sacct says why, outside the lock
    {
      std::lock_guard lock(mutex_);
      for (std::size_t i = 0; i < seats_.size(); ++i) {
        Seat& s = *seats_[i];
        if (s.gaveUp) continue;
        if (s.socket && !s.inCall && s.socket->readableNow()) {
          lose(i, "its connection closed");
          continue;
        }
        if (!alive || alive->count(i) || ++s.missing < 2) continue;
        s.missing = 0;
        if (s.socket) {
          if (s.inCall) s.socket->shutdown();  // its caller sees the connection close and loses it
          else lose(i, "its job left the queue");
          ended.push_back(s.job);
        } else if (++s.failedStarts > options_.retries) {
          s.gaveUp = true;
          logError("serve-reward: Slurm worker seat " + std::to_string(i) + ": " + std::to_string(s.failedStarts) +
                   " jobs in a row ended before they connected, the last " + s.job + "; see " +
                   (run_.dir / "logs").string());
          ended.push_back(s.job);
        } else {
          logWarning("serve-reward: Slurm worker job " + s.job + " ended before it connected; submitted again");
          ended.push_back(s.job);
          toReplace_.push_back(i);
        }
      }
    }
    for (const auto& job : ended) logWarning("serve-reward: Slurm worker job " + job + ": " + slurmLostReason(job));
    replaceLost();
  }
}

void RewardSlurmWorkers::stop() {
  if (stopping_.exchange(true)) return;
  changed_.notify_all();
  if (acceptThread_.joinable()) acceptThread_.join();
  if (watchThread_.joinable()) watchThread_.join();
  {
    std::lock_guard lock(mutex_);
    for (auto& s : seats_)
      if (s->socket && s->inCall) s->socket->shutdown();
      else s->socket.reset();  // the worker sees its connection close and exits
  }
  std::error_code ec;
  fs::remove(run_.dir / "service.json", ec);
  if (!started_) return;
  slurmCancel({"--name=" + submitter_.jobName()});
  std::string error;
  for (int i = 0; i < 30; ++i) {
    const auto alive = slurmAliveElements(submitter_.jobName(), error);
    if (alive && alive->empty()) return;
    std::this_thread::sleep_for(500ms);
  }
  logWarning("serve-reward: the Slurm worker jobs " + submitter_.jobName() + " are still listed by squeue after scancel");
}

json RewardSlurmWorkers::snapshot() const {
  std::lock_guard lock(mutex_);
  json seats = json::array();
  std::size_t pending = 0, running = 0, failed = 0;
  for (std::size_t i = 0; i < seats_.size(); ++i) {
    const Seat& s = *seats_[i];
    const char* state = s.gaveUp ? "failed" : s.socket ? "running" : "pending";
    (s.gaveUp ? failed : s.socket ? running : pending)++;
    json seat{{"seat", i}, {"state", state}, {"job", s.job}};
    if (s.socket) seat["node"] = s.placement.value("node", json());
    seats.push_back(seat);
  }
  return {{"jobName", submitter_.jobName()}, {"pending", pending}, {"running", running}, {"lost", lost_},
          {"failed", failed}, {"seats", seats}};
}

RewardWork slurmWork(std::string endpoint, json body, std::chrono::milliseconds deadline) {
  return [endpoint = std::move(endpoint), body = std::move(body), deadline](
             agents::Worker& worker, const agents::CancelToken& cancel) -> RewardOutcome {
    const auto reply = worker.call(endpoint, body, deadline, cancel);
    if (!reply.ok()) {
      const auto& e = *reply.error;
      if (e.code != "worker_lost" && e.code != "worker_not_ready") return failureOf(e);
      RewardFailure f{503, "worker_lost", e.message};
      f.loss = e.code == "worker_lost" ? WorkerLoss::whileRunning : WorkerLoss::beforeSending;
      return f;
    }
    const json& answer = *reply.result;
    if (!answer.contains("failure")) return answer.value("result", json());
    const json& f = answer["failure"];
    return RewardFailure{f.value("status", 500), f.value("code", std::string("internal_error")), f.value("message", std::string()),
                         f.value("detail", json::object())};
  };
}

}  // namespace stitch::server
