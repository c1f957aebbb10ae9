// The harness's profileReference result (HARNESS.md) as a struct: per source line of the user's
// file, the GPU time of the operators it launched and its share of the forward.
#pragma once

#include "profiling/ProfileResult.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace stitch::profiling {

struct OperatorTime {
  std::string name;  // aten::addmm
  double timeUs = 0;
  double calls = 0;  // per forward
};

struct LineTime {
  std::string file;
  int line = 0;  // one-based, as the harness reports it
  std::string code;
  double timeUs = 0;
  double share = 0;
  std::vector<OperatorTime> ops;
};

struct ReferenceProfile {
  std::string timeKind = "gpu";  // gpu | cpu (no GPU visible)
  int iterations = 0;
  double totalUs = 0;
  std::vector<LineTime> lines;
  double unattributedUs = 0;
};

ProfileResult<ReferenceProfile> parseReferenceProfile(const nlohmann::json& result);

}  // namespace stitch::profiling
