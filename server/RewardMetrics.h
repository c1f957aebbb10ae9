// What the reward service tells about itself at GET /v1/metrics: its answers by endpoint and status,
// the latency of the requests its workers ran (p50 and p95, end to end and on the worker, over the
// last 1024), and the pool's state (queue depth, workers busy), as JSON or Prometheus' text format.
#pragma once

#include "server/RewardPool.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace stitch::server {

class RewardMetrics {
public:
  // Every response the service sends, by endpoint ("score", "verify", "health", "metrics", "other").
  void answered(const std::string& endpoint, int status);
  // Every request a worker ran.
  void ran(double waitedSeconds, double ranSeconds);

  // The median seconds on a worker so far, 0 before any.
  double medianRunSeconds() const;

  protocol::json toJson(const RewardPool::Snapshot& pool) const;
  std::string toPrometheus(const RewardPool::Snapshot& pool) const;

private:
  static constexpr std::size_t kWindow = 1024;
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, std::uint64_t> answers_;
  std::vector<double> total_, run_;  // rings of kWindow
  std::size_t next_ = 0;
  std::uint64_t ranCount_ = 0;
};

}  // namespace stitch::server
