// The table of a scored batch (`stitchcuda score --batch|--jobs … --table FILE.md`): each scored
// candidate's speedup beside its rule reward, rubric dimensions and combined reward, and, for
// candidates of equal speed (correct, speedups within 5% of each other) whose rewards differ, which
// rubric dimension separated them — what a reward adds over speed alone.
#pragma once

#include "protocol/JsonRpc.h"

#include <map>
#include <string>
#include <vector>

namespace stitch::server {

struct Separation {
  int equalSpeedPairs = 0;                 // correct pairs with speedups within 5%
  int separated = 0;                       // of those, rewards at least 0.02 apart
  std::map<std::string, int> byDimension;  // the dimension whose weighted difference was largest
};

// `lines`: the batch's output lines (errors are counted, not tabulated).
Separation separation(const std::vector<protocol::json>& lines);
std::string scoreTable(const std::vector<protocol::json>& lines);

}  // namespace stitch::server
