// The numbers and tables of `stitchcuda bench`: KernelBench's metrics per level and overall
// (fast_0: fraction correct; fast_1: correct and faster), geometric means over verified tasks, the
// median fraction of the roofline floor, and the Markdown the terminal and results.md show.
#pragma once

#include "server/BenchResults.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stitch::server::bench {

// Geometric mean of the positive values; nullopt when there is none.
std::optional<double> geometricMean(const std::vector<double>& values);
// Median (the mean of the two middle values for an even count); nullopt for no values.
std::optional<double> median(std::vector<double> values);

struct Summary {
  int tasks = 0;
  int verified = 0;
  int errors = 0;
  int needsGpu = 0;
  double fast0 = 0;         // verified / tasks (KernelBench's fast_0: the fraction correct)
  double fast1Eager = 0;    // verified and faster than eager, / tasks
  double fast1Compile = 0;  // verified and faster than torch.compile, / tasks
  std::optional<double> geomeanEager;    // over verified tasks with a measured speedup
  std::optional<double> geomeanCompile;  // same, vs torch.compile
  std::optional<double> medianRoofline;  // over verified tasks with a roofline fraction
};

Summary summarize(const std::vector<TaskResult>& results);
// Per level (0 is "other"), in level order.
std::map<int, Summary> summarizeLevels(const std::vector<TaskResult>& results);

json toJson(const Summary& s);

std::string levelName(int level);  // "level1" … "other"

// The per-task table: a header, and a row per task.
std::string taskTableHeader();
std::string taskRow(const TaskResult& r);
// The per-level and overall summary table, with a line on what needs a GPU.
std::string summaryTable(const std::vector<TaskResult>& results);

}  // namespace stitch::server::bench
