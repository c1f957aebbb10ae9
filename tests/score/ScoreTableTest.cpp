// The scored batch's table: one row per scored candidate, errors counted, and among correct
// candidates of equal speed the pairs whose rewards differ, each credited to the dimension whose
// weighted difference was largest; unequal speeds and equal rewards are not pairs that count.
#include "server/ScoreTable.h"

#include <gtest/gtest.h>

namespace stitch::server {
namespace {

using protocol::json;

json scored(const std::string& id, double speedup, double engineering, double coverage, double reward) {
  return {{"id", id}, {"verdictStatus", "passed"}, {"reward", reward},
          {"weights", {{"rule", 0.5}, {"cuda_engineering", 0.2}, {"operator_coverage", 0.2}, {"skill_compliance", 0.2}}},
          {"rule", {{"score", 0.8}, {"correct", true}, {"speedupVsEager", speedup}}},
          {"rubric", {{"anti_hacking", {{"score", 1.0}}}, {"cuda_engineering", {{"score", engineering}}},
                      {"operator_coverage", {{"score", coverage}}}, {"skill_compliance", {{"score", nullptr}}}}}};
}

TEST(ScoreTable, EqualSpeedsRewardedDifferentlyAreCreditedToTheDimensionThatSeparatedThem) {
  const std::vector<json> lines = {
      scored("tiled", 2.00, 0.30, 1.0, 0.80),
      scored("naive", 2.04, 0.00, 1.0, 0.73),     // equal speed, engineering separates
      scored("partial", 1.98, 0.30, 0.5, 0.70),   // equal speed, coverage separates it from both others
      scored("slow", 1.20, 0.00, 1.0, 0.60),      // not of equal speed with anyone
      {{"row", 7}, {"error", {{"code", "invalid_row"}, {"message", "missing field 'candidate'"}}}},
  };
  const auto s = separation(lines);
  EXPECT_EQ(s.equalSpeedPairs, 3);
  EXPECT_EQ(s.separated, 3);
  EXPECT_EQ(s.byDimension.at("cuda_engineering"), 1);
  EXPECT_EQ(s.byDimension.at("operator_coverage"), 2);
  const std::string t = scoreTable(lines);
  EXPECT_NE(t.find("| tiled | passed | 2.00× | 0.80 | 1.00 | 0.30 | 1.00 | — | 0.80 |"), std::string::npos) << t;
  EXPECT_NE(t.find("4 scored, 1 not scored. 3 pairs of correct candidates of equal speed (within 5%); 3 of them rewarded "
                   "differently (by 0.02 or more), separated by: cuda_engineering 1, operator_coverage 2."),
            std::string::npos)
      << t;
}

TEST(ScoreTable, EqualRewardsAndIncorrectCandidatesAreNotSeparations) {
  json wrong = scored("wrong", 2.0, 0.3, 1.0, 0.1);
  wrong["rule"]["correct"] = false;
  const auto s = separation({scored("a", 2.0, 0.3, 1.0, 0.8), scored("b", 2.0, 0.3, 1.0, 0.81), wrong});
  EXPECT_EQ(s.equalSpeedPairs, 1);
  EXPECT_EQ(s.separated, 0);
}

}  // namespace
}  // namespace stitch::server
