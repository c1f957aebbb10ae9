// The ncu runner's command line and its failure handling, with fake `ncu` scripts standing in
// for the real one (missing binary, no counter permission, a target that fails, a good run).
#include "Fixtures.h"

#include "profiling/NcuRunner.h"
#include "profiling/ProfilerFallback.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

using namespace stitch::profiling;
using namespace stitch::profiling::testing;
namespace fs = std::filesystem;

namespace {

fs::path fakeTool(const std::string& body) {
  static int n = 0;
  fs::path dir = fs::temp_directory_path() / ("stitch-fake-ncu-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
  fs::create_directories(dir);
  fs::path p = dir / "ncu";
  std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
  fs::permissions(p, fs::perms::owner_all);
  return p;
}

// A fake ncu that finds its --log-file argument and writes `file` there.
std::string writesLog(const std::string& file) {
  return "while [ $# -gt 0 ]; do if [ \"$1\" = --log-file ]; then cp '" + file + "' \"$2\"; fi; shift; done";
}

bool has(const std::vector<std::string>& c, const std::string& a, const std::string& b) {
  for (std::size_t i = 0; i + 1 < c.size(); ++i)
    if (c[i] == a && c[i + 1] == b) return true;
  return false;
}

NcuRequest request(const fs::path& ncu) {
  NcuRequest r;
  r.ncu = ncu;
  r.harnessDir = "/repo/harness";
  r.task = "/repo/task.py";
  r.candidate = "/repo/cand";
  r.timeout = std::chrono::seconds(20);
  return r;
}

}  // namespace

TEST(NcuRunner, CommandProfilesOnlyTheNvtxRangeWithClocksUntouched) {
  auto c = ncuCommand(request("/usr/local/cuda/bin/ncu"), "/tmp/log.csv");
  EXPECT_EQ(c.front(), "/usr/local/cuda/bin/ncu");
  EXPECT_TRUE(has(c, "--clock-control", "none"));
  EXPECT_TRUE(has(c, "--nvtx-include", "stitchcuda.forward/"));
  EXPECT_NE(std::find(c.begin(), c.end(), "--nvtx"), c.end());
  EXPECT_NE(std::find(c.begin(), c.end(), "--csv"), c.end());
  EXPECT_TRUE(has(c, "--page", "raw"));
  EXPECT_TRUE(has(c, "--log-file", "/tmp/log.csv"));
  EXPECT_TRUE(has(c, "--section", "WarpStateStats"));
  EXPECT_TRUE(has(c, "--section", "Occupancy"));
  EXPECT_TRUE(has(c, "-m", "stitchcuda_harness.ncu_target"));
  EXPECT_TRUE(has(c, "--candidate", "/repo/cand"));
}

TEST(NcuRunner, ParsesWhatTheProfilerWrote) {
  auto r = runNcu(request(fakeTool(writesLog(fixturePath("ncu_memory_bound.csv")))));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r.value().kernels.size(), 1u);
  EXPECT_EQ(r.value().kernels[0].stalls[0].reason, "long_scoreboard");
  EXPECT_FALSE(r.value().command.empty());
}

TEST(NcuRunner, MissingBinaryIsToolMissing) {
  auto r = runNcu(request("/nonexistent/bin/ncu"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "tool_missing");
  EXPECT_NE(r.error().message.find("/nonexistent/bin/ncu"), std::string::npos);
}

TEST(NcuRunner, CounterPermissionErrorIsRecognised) {
  auto r = runNcu(request(fakeTool(
      "echo '==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters' >&2; exit 1")));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "counters_permission");
  EXPECT_NE(r.error().message.find("ERR_NVGPUCTRPERM"), std::string::npos);
}

TEST(NcuRunner, TargetErrorLineIsReportedAsTargetFailed) {
  auto r = runNcu(request(fakeTool("echo '{\"error\": {\"code\": \"build_error\", \"message\": \"nvcc failed\"}}'; exit 2")));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "target_failed");
  EXPECT_NE(r.error().message.find("nvcc failed"), std::string::npos);
}

TEST(NcuRunner, ProfilerErrorLineIsQuoted) {
  auto r = interpretNcuRun(1, false, "==ERROR== Failed to initialize the profiler: LibraryNotLoaded\n", "", "");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "profiler_error");
  EXPECT_NE(r.error().message.find("LibraryNotLoaded"), std::string::npos);
}

TEST(NcuRunner, NothingProfiledCarriesNcusWarning) {
  auto r = interpretNcuRun(0, false, "==WARNING== No kernels were profiled.\n", "", "");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("No kernels were profiled"), std::string::npos);
}

TEST(NcuRunner, HangingProfilerTimesOut) {
  auto req = request(fakeTool("sleep 30"));
  req.timeout = std::chrono::milliseconds(300);
  auto t0 = std::chrono::steady_clock::now();
  auto r = runNcu(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "timeout");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
}

TEST(NcuRunner, ACancelledJobStopsTheProfiler) {
  auto req = request(fakeTool("sleep 30"));
  const auto t0 = std::chrono::steady_clock::now();
  req.cancelled = [&] { return std::chrono::steady_clock::now() - t0 > std::chrono::milliseconds(300); };
  auto r = runNcu(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "cancelled");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
}

TEST(ProfilerFallback, EachCauseIsSaidOncePerJobAndNamesTheFallback) {
  FallbackNotices notices;
  ProfileError perm{"counters_permission", "no permission (ERR_NVGPUCTRPERM)"};
  auto first = notices.first("Nsight Compute", perm);
  ASSERT_TRUE(first);
  EXPECT_NE(first->find("CUDA events"), std::string::npos);
  EXPECT_NE(first->find("ERR_NVGPUCTRPERM"), std::string::npos);
  EXPECT_FALSE(notices.first("Nsight Compute", perm));
  EXPECT_TRUE(notices.first("Nsight Compute", ProfileError{"timeout", "slow"}));
  EXPECT_TRUE(notices.first("Nsight Systems", perm));
}
