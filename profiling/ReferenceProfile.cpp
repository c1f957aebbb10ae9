// Parsing profileReference's JSON at the edge (see ReferenceProfile.h).
#include "profiling/ReferenceProfile.h"

namespace stitch::profiling {

ProfileResult<ReferenceProfile> parseReferenceProfile(const nlohmann::json& j) {
  ReferenceProfile p;
  try {
    p.timeKind = j.value("timeKind", "gpu");
    p.iterations = j.value("iterations", 0);
    p.totalUs = j.at("totalUs").get<double>();
    for (const auto& l : j.at("lines")) {
      LineTime t{l.value("file", ""), l.at("line").get<int>(), l.value("code", ""),
                 l.at("timeUs").get<double>(), l.value("share", 0.0), {}};
      for (const auto& op : l.value("ops", nlohmann::json::array()))
        t.ops.push_back({op.at("name").get<std::string>(), op.value("timeUs", 0.0), op.value("calls", 0.0)});
      p.lines.push_back(std::move(t));
    }
    if (j.contains("unattributed")) p.unattributedUs = j["unattributed"].value("timeUs", 0.0);
  } catch (const nlohmann::json::exception& e) {
    return ProfileError{"parse_error", std::string("profileReference result: ") + e.what()};
  }
  if (p.timeKind != "gpu" && p.timeKind != "cpu")
    return ProfileError{"parse_error", "profileReference result: timeKind must be \"gpu\" or \"cpu\", got \"" + p.timeKind + "\""};
  return p;
}

}  // namespace stitch::profiling
