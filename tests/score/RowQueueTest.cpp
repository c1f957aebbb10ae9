// RowQueue: how a local batch's workers share its rows (server/RowQueue.h).
#include "server/RowQueue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <thread>

namespace stitch::server {
namespace {

// Four workers over 10 references of 4 rows each, the rows in file order (a reference's rows
// together, as bench/reward_throughput.py writes them): a worker moves to a reference another has
// started only once every reference is started (the last two then get a second worker each
// rather than leaving two idle), and every row is taken once.
TEST(RowQueue, WorkersKeepToTheirReference) {
  std::vector<std::string> refs;
  for (int t = 0; t < 10; ++t)
    for (int c = 0; c < 4; ++c) refs.push_back("task" + std::to_string(t) + ".py");
  RowQueue q(refs, std::vector<bool>(refs.size(), true));
  std::vector<std::optional<std::string>> current(4);
  std::vector<std::string> starts;  // the reference of each worker's move, in order
  std::set<std::size_t> taken;
  for (bool any = true; any;) {  // round robin, as four equal workers would go
    any = false;
    for (int w = 0; w < 4; ++w) {
      const auto before = current[w];
      if (auto row = q.next(current[w])) {
        any = true;
        EXPECT_TRUE(taken.insert(*row).second) << "row " << *row << " taken twice";
        EXPECT_EQ(refs[*row], *current[w]);
        if (current[w] != before) starts.push_back(*current[w]);
      }
    }
  }
  EXPECT_EQ(taken.size(), refs.size());
  ASSERT_EQ(starts.size(), 12u);
  EXPECT_EQ(std::set<std::string>(starts.begin(), starts.begin() + 10).size(), 10u) << "each reference started once first";
  EXPECT_EQ(std::set<std::string>(starts.begin() + 10, starts.end()), (std::set<std::string>{"task8.py", "task9.py"}));
}

// The batch's wall time when `workers` equal workers take the rows as they free up, each row
// taking its cost.
double makespan(RowQueue& q, const std::vector<double>& costs, int workers) {
  std::vector<double> freeAt(workers, 0.0);
  std::vector<std::optional<std::string>> current(workers);
  for (;;) {
    const int w = static_cast<int>(std::min_element(freeAt.begin(), freeAt.end()) - freeAt.begin());
    auto row = q.next(current[w]);
    if (!row) break;
    freeAt[w] += costs[*row];
  }
  return *std::max_element(freeAt.begin(), freeAt.end());
}

// Rows of unequal cost (the reward benchmark's tasks: 3 s rows of small elementwise candidates
// first in the file, 11 s rows of a network last): the costliest references start first, and the
// batch ends no later than its average load plus one short row, where file order ended on the
// network's rows with the other workers idle.
TEST(RowQueue, TheCostliestReferencesStartFirst) {
  const std::vector<double> perTask = {3, 3, 3, 3, 3, 3, 6, 6, 7, 11};
  std::vector<std::string> refs;
  std::vector<double> costs;
  for (std::size_t t = 0; t < perTask.size(); ++t)
    for (int c = 0; c < 4; ++c) refs.push_back("task" + std::to_string(t) + ".py"), costs.push_back(perTask[t]);
  const std::vector<bool> all(refs.size(), true);
  RowQueue byCost(refs, all, costs);
  std::optional<std::string> first;
  ASSERT_TRUE(byCost.next(first));
  EXPECT_EQ(*first, "task9.py");
  RowQueue fresh(refs, all, costs), inFileOrder(refs, all);
  const double total = 4 * (6 * 3 + 6 + 6 + 7 + 11);
  EXPECT_LE(makespan(fresh, costs, 4), total / 4 + 3);
  EXPECT_GT(makespan(inFileOrder, costs, 4), total / 4 + 3);
}

// Rows left out (blank, or done by an earlier run) are never handed out; the rest come once each,
// with one worker in file order.
TEST(RowQueue, OneWorkerTakesTheRowsInFileOrder) {
  RowQueue q({"", "", "", "", ""}, {true, false, true, true, false});
  std::optional<std::string> current;
  std::vector<std::size_t> order;
  while (auto row = q.next(current)) order.push_back(*row);
  EXPECT_EQ(order, (std::vector<std::size_t>{0, 2, 3}));
}

// Under threads every row is taken exactly once.
TEST(RowQueue, ThreadsTakeEachRowOnce) {
  std::vector<std::string> refs;
  for (int i = 0; i < 1000; ++i) refs.push_back("r" + std::to_string(i % 7));
  RowQueue q(refs, std::vector<bool>(refs.size(), true));
  std::vector<std::vector<std::size_t>> got(8);
  std::vector<std::thread> threads;
  for (int w = 0; w < 8; ++w)
    threads.emplace_back([&, w] {
      std::optional<std::string> current;
      while (auto row = q.next(current)) got[w].push_back(*row);
    });
  for (auto& t : threads) t.join();
  std::set<std::size_t> all;
  std::size_t count = 0;
  for (const auto& g : got) count += g.size(), all.insert(g.begin(), g.end());
  EXPECT_EQ(count, refs.size());
  EXPECT_EQ(all.size(), refs.size());
}

}  // namespace
}  // namespace stitch::server
