// The order in which a local batch's workers (one per GPU) take rows: each keeps to the reference
// its last row named while that reference has rows left, and otherwise starts the reference the
// fewest workers are on (the one with the most work left among those, then the earliest). A
// worker's harness process then meets each reference's model, shapes and library plans once where
// it can: rows taken in file order put every worker on every reference (40 rows of 10 references on
// 4 GPUs scored in 0.33x the one-GPU time where serve-reward took 0.28x,
// bench/results/reward_throughput_2026-11-28_h100). Work is each row's estimated cost: the
// references with the most start first, so that the batch does not end on its longest rows (the
// largest task's rows, taken last in file order, kept one GPU busy 6-15 s after the others had
// finished, reward_throughput_2026-11-29b_h200). Each row is taken exactly once.
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace stitch::server {

class RowQueue {
public:
  // `references[i]`: row i's reference; rows left out by `take` are not queued; `costs[i]`: row i's
  // estimated cost in any unit (none: every row alike).
  RowQueue(const std::vector<std::string>& references, const std::vector<bool>& take,
           const std::vector<double>& costs = {});

  // The next row for the worker whose last reference is `current` (none before its first row);
  // `current` becomes the row's. Nothing once every row is taken.
  std::optional<std::size_t> next(std::optional<std::string>& current);

private:
  std::mutex mutex_;
  std::vector<std::string> order_;                      // references by cost, then by their first row
  std::map<std::string, std::deque<std::size_t>> left_;  // rows not yet taken, per reference
  std::map<std::string, double> work_;                   // the cost of those rows, per reference
  std::vector<double> costs_;
  std::map<std::string, int> workers_;                   // workers whose current reference it is
};

}  // namespace stitch::server
