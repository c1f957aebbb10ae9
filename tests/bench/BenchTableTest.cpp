// Pins the bench's summary maths on hand-made rows: KernelBench's fast_0 and fast_1 (over all
// tasks, errors included), geometric means and the median over verified tasks only, per level.
#include "server/BenchTable.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace stitch::server::bench;

namespace {

TaskResult verified(const std::string& task, int level, std::optional<double> eager, std::optional<double> compile,
                    std::optional<double> roofline) {
  TaskResult r;
  r.task = task;
  r.level = level;
  r.state = "improved";
  r.best = "c1";
  r.speedupEager = eager;
  r.speedupCompile = compile;
  r.rooflineFraction = roofline;
  r.candidatesTried = 1;
  return r;
}

TaskResult failed(const std::string& task, int level) {
  TaskResult r;
  r.task = task;
  r.level = level;
  r.state = "noImprovement";
  r.firstFailedCheck = "output_mismatch";
  r.candidatesTried = 2;
  return r;
}

TaskResult errored(const std::string& task, int level) {
  TaskResult r;
  r.task = task;
  r.level = level;
  r.error = true;
  r.errorReason = "optimize timed out after 150 s and was killed";
  return r;
}

}  // namespace

TEST(BenchSummary, GeometricMeanIgnoresValuesThatAreNotPositive) {
  EXPECT_NEAR(*geometricMean({2.0, 8.0}), 4.0, 1e-12);
  EXPECT_NEAR(*geometricMean({0.5, 2.0, 1.0}), 1.0, 1e-12);
  EXPECT_NEAR(*geometricMean({4.0, 0.0, -1.0}), 4.0, 1e-12);
  EXPECT_FALSE(geometricMean({}).has_value());
  EXPECT_FALSE(geometricMean({0.0}).has_value());
}

TEST(BenchSummary, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(*median({0.9, 0.1, 0.5}), 0.5);
  EXPECT_DOUBLE_EQ(*median({0.8, 0.2, 0.4, 0.6}), 0.5);
  EXPECT_DOUBLE_EQ(*median({0.7}), 0.7);
  EXPECT_FALSE(median({}).has_value());
}

TEST(BenchSummary, FastPCountsEveryTaskInTheDenominator) {
  // 5 tasks: 3 verified (2.0x/0.8x, 0.5x/1.5x, 4.0x/no compile timing), 1 failed, 1 error.
  std::vector<TaskResult> rows{verified("a", 1, 2.0, 0.8, 0.9), verified("b", 1, 0.5, 1.5, 0.5),
                               verified("c", 2, 4.0, std::nullopt, std::nullopt), failed("d", 2), errored("e", 2)};
  Summary s = summarize(rows);
  EXPECT_EQ(s.tasks, 5);
  EXPECT_EQ(s.verified, 3);
  EXPECT_EQ(s.errors, 1);
  EXPECT_DOUBLE_EQ(s.fast0, 3.0 / 5);
  EXPECT_DOUBLE_EQ(s.fast1Eager, 2.0 / 5);    // a and c are faster than eager, b is not
  EXPECT_DOUBLE_EQ(s.fast1Compile, 1.0 / 5);  // only b beats torch.compile; c has no compile timing
  EXPECT_NEAR(*s.geomeanEager, std::cbrt(2.0 * 0.5 * 4.0), 1e-12);
  EXPECT_NEAR(*s.geomeanCompile, std::sqrt(0.8 * 1.5), 1e-12);
  EXPECT_DOUBLE_EQ(*s.medianRoofline, 0.7);  // of 0.9 and 0.5: the unverified rows add nothing
}

TEST(BenchSummary, ExactlyEagerSpeedIsNotFast1) {
  Summary s = summarize({verified("a", 1, 1.0, 1.0, std::nullopt)});
  EXPECT_DOUBLE_EQ(s.fast0, 1.0);
  EXPECT_DOUBLE_EQ(s.fast1Eager, 0.0);
  EXPECT_DOUBLE_EQ(s.fast1Compile, 0.0);
}

TEST(BenchSummary, NoVerifiedTaskHasNoMeans) {
  TaskResult cpu;
  cpu.task = "x";
  cpu.needsGpu = true;
  Summary s = summarize({cpu, errored("y", 0)});
  EXPECT_EQ(s.tasks, 2);
  EXPECT_EQ(s.needsGpu, 1);
  EXPECT_DOUBLE_EQ(s.fast0, 0.0);
  EXPECT_FALSE(s.geomeanEager.has_value());
  EXPECT_FALSE(s.geomeanCompile.has_value());
  EXPECT_FALSE(s.medianRoofline.has_value());
  EXPECT_DOUBLE_EQ(summarize({}).fast0, 0.0);
}

TEST(BenchSummary, LevelsAreSummarizedApartAndOtherIsLevelZero) {
  auto levels = summarizeLevels({verified("a", 1, 2.0, 1.0, 0.5), failed("b", 2), failed("c", 0), failed("d", 2)});
  ASSERT_EQ(levels.size(), 3u);
  EXPECT_EQ(levels[1].tasks, 1);
  EXPECT_DOUBLE_EQ(levels[1].fast0, 1.0);
  EXPECT_EQ(levels[2].tasks, 2);
  EXPECT_DOUBLE_EQ(levels[2].fast0, 0.0);
  EXPECT_EQ(levels[0].tasks, 1);
  EXPECT_EQ(levelName(0), "other");
  EXPECT_EQ(levelName(3), "level3");
}

TEST(BenchTable, RowsSayWhatHappenedToEachTask) {
  TaskResult ok = verified("level1/01_relu", 1, 2.345, 1.1, 0.812);
  ok.firstVerifiedSeconds = 12.34;
  EXPECT_EQ(taskRow(ok), "| level1/01_relu | level1 | yes (c1) | 2.35x | 1.10x | 81% | 12.3 s | 1 |\n");
  EXPECT_NE(taskRow(failed("t", 2)).find("| no: output_mismatch |"), std::string::npos);
  TaskResult cpu;
  cpu.task = "t";
  cpu.needsGpu = true;
  EXPECT_NE(taskRow(cpu).find("no GPU: verification needs one"), std::string::npos);
  TaskResult pipe = errored("t", 1);
  pipe.errorReason = "a | b\nc";
  EXPECT_NE(taskRow(pipe).find("error: a \\| b c"), std::string::npos) << taskRow(pipe);
}

TEST(BenchTable, SummaryHasALineForEachLevelAndAll) {
  const std::string table = summaryTable({verified("a", 1, 2.0, 1.0, 0.5), failed("b", 2)});
  EXPECT_NE(table.find("| level1 | 1 | 1 (100%) | 0 | 1.00 | 1.00 | 0.00 | 2.00x | 1.00x | 50% |"), std::string::npos)
      << table;
  EXPECT_NE(table.find("| level2 | 1 | 0 (0%) | 0 | 0.00 | 0.00 | 0.00 | — | — | — |"), std::string::npos) << table;
  EXPECT_NE(table.find("| all | 2 | 1 (50%) | 0 | 0.50 | 0.50 | 0.00 | 2.00x | 1.00x | 50% |"), std::string::npos)
      << table;
}
