// A batch's rows grouped by reference for its workers; see RowQueue.h.
#include "server/RowQueue.h"

#include <algorithm>

namespace stitch::server {

RowQueue::RowQueue(const std::vector<std::string>& references, const std::vector<bool>& take,
                   const std::vector<double>& costs)
    : costs_(costs) {
  costs_.resize(references.size(), 1.0);
  for (std::size_t i = 0; i < references.size(); ++i) {
    if (i >= take.size() || !take[i]) continue;
    if (!left_.count(references[i])) order_.push_back(references[i]);
    left_[references[i]].push_back(i);
    work_[references[i]] += costs_[i];
  }
  std::stable_sort(order_.begin(), order_.end(),
                   [&](const std::string& a, const std::string& b) { return work_[a] > work_[b]; });
}

std::optional<std::size_t> RowQueue::next(std::optional<std::string>& current) {
  std::lock_guard lock(mutex_);
  auto mine = current ? left_.find(*current) : left_.end();
  if (mine == left_.end() || mine->second.empty()) {
    if (current) --workers_[*current];
    const std::string* pick = nullptr;
    for (const auto& reference : order_) {
      if (left_[reference].empty()) continue;
      if (!pick || workers_[reference] < workers_[*pick] ||
          (workers_[reference] == workers_[*pick] && work_[reference] > work_[*pick]))
        pick = &reference;
    }
    if (!pick) return std::nullopt;
    current = *pick;
    ++workers_[*current];
    mine = left_.find(*current);
  }
  const std::size_t row = mine->second.front();
  mine->second.pop_front();
  work_[*current] -= costs_[row];
  return row;
}

}  // namespace stitch::server
