// Test helpers: the recorded GPU fixtures (fixtures/recorded) read as text, JSON or parsed results.
#pragma once

#include "profiling/KernelMetrics.h"
#include "profiling/NcuCsvParser.h"
#include "profiling/Roofline.h"
#include "profiling/TorchTrace.h"

#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace stitch::profiling::testing {

inline std::string fixturePath(const std::string& name) { return std::string(STITCH_PROFILING_FIXTURES) + "/recorded/" + name; }

inline std::string readFixture(const std::string& name) {
  std::ifstream f(fixturePath(name), std::ios::binary);
  EXPECT_TRUE(f) << "missing fixture " << name;
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

inline nlohmann::json jsonFixture(const std::string& name) { return nlohmann::json::parse(readFixture(name)); }

inline std::vector<KernelMetrics> ncuFixture(const std::string& name) {
  auto r = parseNcuCsv(readFixture(name));
  EXPECT_TRUE(r.ok()) << (r ? "" : r.error().message);
  return r ? r.value() : std::vector<KernelMetrics>{};
}

inline TraceSummary traceFixture(const std::string& name) {
  auto r = parseTorchTrace(jsonFixture(name));
  EXPECT_TRUE(r.ok()) << (r ? "" : r.error().message);
  return r ? r.value() : TraceSummary{};
}

inline Ceilings recordedCeilings() {
  auto c = ceilingsFromJson(jsonFixture("ceilings.json"));
  EXPECT_TRUE(c.ok());
  return c ? c.value() : Ceilings{};
}

}  // namespace stitch::profiling::testing
