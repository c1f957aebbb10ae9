// The reward service's metrics; see RewardMetrics.h.
#include "server/RewardMetrics.h"

#include <algorithm>
#include <cstdio>
#include <tuple>

namespace stitch::server {
namespace {

using protocol::json;

// The nearest-rank percentile `p` (0..1) of `values`, 0 when there are none.
double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(p * static_cast<double>(values.size()) + 0.999999);
  return values[std::clamp<std::size_t>(rank, 1, values.size()) - 1];
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

void RewardMetrics::answered(const std::string& endpoint, int status) {
  std::lock_guard lock(mutex_);
  ++answers_[{endpoint, status}];
}

void RewardMetrics::ran(double waitedSeconds, double ranSeconds) {
  std::lock_guard lock(mutex_);
  if (total_.size() < kWindow) {
    total_.push_back(waitedSeconds + ranSeconds);
    run_.push_back(ranSeconds);
  } else {
    total_[next_] = waitedSeconds + ranSeconds;
    run_[next_] = ranSeconds;
  }
  next_ = (next_ + 1) % kWindow;
  ++ranCount_;
}

double RewardMetrics::medianRunSeconds() const {
  std::lock_guard lock(mutex_);
  return percentile(run_, 0.5);
}

json RewardMetrics::toJson(const RewardPool::Snapshot& pool) const {
  std::lock_guard lock(mutex_);
  protocol::json answers = protocol::json::object();
  std::uint64_t served = 0;
  for (const auto& [key, count] : answers_) {
    answers[key.first][std::to_string(key.second)] = count;
    if (key.second == 200 && (key.first == "score" || key.first == "verify")) served += count;
  }
  protocol::json workers = protocol::json::array();
  bool gpus = false;
  for (const auto& s : pool.slots) {
    workers.push_back({{"gpu", s.gpu ? protocol::json(*s.gpu) : protocol::json()}, {"busy", s.busy}, {"served", s.served},
                       {"device", s.hello.is_object() ? s.hello.value("gpu", protocol::json()) : protocol::json()}});
    gpus = gpus || (s.hello.is_object() && s.hello.value("cudaAvailable", false));
  }
  return {{"queueDepth", pool.queued},
          {"queueCapacity", pool.capacity},
          {"workers", pool.slots.size()},
          {"busy", pool.busy},
          {"gpusBusy", gpus ? protocol::json(pool.busy) : protocol::json(0)},
          {"requestsServed", served},
          {"requestsRun", ranCount_},
          {"answers", answers},
          {"latencySeconds", {{"p50", percentile(total_, 0.5)}, {"p95", percentile(total_, 0.95)}, {"window", total_.size()}}},
          {"runSeconds", {{"p50", percentile(run_, 0.5)}, {"p95", percentile(run_, 0.95)}}},
          {"workerStates", workers},
          {"stopping", pool.stopping}};
}

std::string RewardMetrics::toPrometheus(const RewardPool::Snapshot& pool) const {
  const json j = toJson(pool);
  std::string out;
  auto gauge = [&out](const std::string& name, const std::string& help, const std::string& type, const std::string& value) {
    out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n" + name + " " + value + "\n";
  };
  gauge("stitchcuda_reward_queue_depth", "Requests in the queue.", "gauge", number(j["queueDepth"].get<double>()));
  gauge("stitchcuda_reward_queue_capacity", "Requests that may wait for a worker.", "gauge",
        number(j["queueCapacity"].get<double>()));
  gauge("stitchcuda_reward_workers", "Workers (one per GPU, or CPU slots).", "gauge", number(j["workers"].get<double>()));
  gauge("stitchcuda_reward_workers_busy", "Workers running a request.", "gauge", number(j["busy"].get<double>()));
  gauge("stitchcuda_reward_gpus_busy", "GPUs running a request.", "gauge", number(j["gpusBusy"].get<double>()));
  out += "# HELP stitchcuda_reward_responses_total Responses by endpoint and HTTP status.\n"
         "# TYPE stitchcuda_reward_responses_total counter\n";
  for (const auto& [endpoint, byStatus] : j["answers"].items())
    for (const auto& [status, count] : byStatus.items())
      out += "stitchcuda_reward_responses_total{endpoint=\"" + endpoint + "\",status=\"" + status + "\"} " +
             number(count.get<double>()) + "\n";
  for (const auto& [name, key, help] :
       {std::tuple{"stitchcuda_reward_latency_seconds", "latencySeconds", "Seconds from taking a request to its answer"},
        {"stitchcuda_reward_run_seconds", "runSeconds", "Seconds a request ran on its worker"}}) {
    out += std::string("# HELP ") + name + " " + help + ", over the last 1024 requests run.\n# TYPE " + name + " gauge\n";
    for (const char* q : {"0.5", "0.95"})
      out += std::string(name) + "{quantile=\"" + q + "\"} " +
             number(j[key][q == std::string("0.5") ? "p50" : "p95"].get<double>()) + "\n";
  }
  gauge("stitchcuda_reward_requests_run_total", "Requests a worker ran.", "counter", number(j["requestsRun"].get<double>()));
  return out;
}

}  // namespace stitch::server
