// The GPU part of the profiling suite (record_fixtures.sh builds it with g++ on the GPU machine,
// where GoogleTest is absent): runs the real NcuRunner on each case, keeps ncu's CSV as a
// fixture, and prints one JSON report of the parsed metrics, their roofline class against the
// measured ceilings, the Verifier's feedback, the tool probe and the missing-profiler fallback.
// Usage: gpu_profile_probe --out DIR --harness DIR --ceilings FILE --cache-dir DIR NAME=TASK[,CANDIDATE]...
#include "profiling/NcuRunner.h"
#include "profiling/ProfilerFallback.h"
#include "profiling/ProfilerTools.h"
#include "profiling/Roofline.h"
#include "profiling/VerifierFeedback.h"

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

using namespace stitch::profiling;
using nlohmann::json;

namespace {

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json metricsJson(const KernelMetrics& k, const std::optional<Ceilings>& ceilings) {
  json stalls = json::array();
  for (const auto& s : k.stalls) stalls.push_back({{"reason", s.reason}, {"cyclesPerIssue", s.cyclesPerIssue}});
  json j = {{"id", k.id}, {"name", k.name.substr(0, 120)}, {"block", k.blockSize}, {"grid", k.gridSize},
            {"durationUs", opt(k.durationUs)}, {"dramPct", opt(k.dramThroughputPct)}, {"smPct", opt(k.smThroughputPct)},
            {"achievedOccupancyPct", opt(k.achievedOccupancyPct)}, {"theoreticalOccupancyPct", opt(k.theoreticalOccupancyPct)},
            {"occupancyLimiter", k.occupancyLimiter}, {"registersPerThread", opt(k.registersPerThread)},
            {"sharedMemPerBlockBytes", opt(k.sharedMemPerBlockBytes)}, {"l1HitPct", opt(k.l1HitPct)},
            {"l2HitPct", opt(k.l2HitPct)}, {"fp32PipePct", opt(k.fp32PipePct)}, {"tensorPipePct", opt(k.tensorPipePct)},
            {"instructions", opt(k.instructionsExecuted)}, {"dramBytes", opt(k.dramBytes)}, {"fp32Flops", opt(k.fp32Flops)},
            {"stalls", stalls}};
  if (auto p = classify(k, ceilings))
    j["roofline"] = {{"bound", boundName(p->bound)}, {"achievedPct", 100 * p->achievedFraction},
                     {"memoryPct", 100 * p->memoryFraction}, {"computePct", 100 * p->computeFraction}, {"basis", p->basis}};
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  std::string out = ".", harness = "harness", ceilingsFile, cacheDir = "/tmp/stitch-cache";
  std::vector<std::string> cases;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--out" && i + 1 < argc) out = argv[++i];
    else if (a == "--harness" && i + 1 < argc) harness = argv[++i];
    else if (a == "--ceilings" && i + 1 < argc) ceilingsFile = argv[++i];
    else if (a == "--cache-dir" && i + 1 < argc) cacheDir = argv[++i];
    else cases.push_back(a);
  }
  json report = {{"tools", json::array()}, {"cases", json::array()}};
  for (const char* name : {"ncu", "nsys"}) {
    ToolStatus t = probeTool(name, defaultToolDirs(name));
    report["tools"].push_back({{"name", t.name}, {"available", t.available()}, {"version", t.version}, {"message", t.message}});
  }
  std::optional<Ceilings> ceilings;
  if (!ceilingsFile.empty()) {
    std::ifstream f(ceilingsFile);
    auto c = ceilingsFromJson(json::parse(f, nullptr, false));
    if (c) ceilings = c.value();
    report["ceilings"] = c ? ceilingsToJson(c.value()) : json{{"error", c.error().message}};
  }
  auto ncu = findExecutable("ncu", defaultToolDirs("ncu"));
  FallbackNotices notices;
  // A profiler that is not there: the runner's error and the job's one message.
  NcuRequest missing;
  missing.ncu = "/nonexistent/ncu";
  auto gone = runNcu(missing);
  report["missingProfiler"] = {{"ok", gone.ok()}, {"code", gone ? "" : gone.error().code},
                               {"notice", gone ? "" : notices.first("Nsight Compute", gone.error()).value_or("")},
                               {"noticeAgain", gone ? "" : notices.first("Nsight Compute", gone.error()).value_or("(not repeated)")}};
  int failures = 0;
  for (const std::string& c : cases) {
    auto eq = c.find('=');
    std::string name = c.substr(0, eq), rest = c.substr(eq + 1);
    auto comma = rest.find(',');
    NcuRequest r;
    r.ncu = ncu.value_or("");
    r.harnessDir = harness;
    r.task = rest.substr(0, comma);
    if (comma != std::string::npos) r.candidate = rest.substr(comma + 1);
    r.cacheDir = cacheDir;
    auto t0 = std::chrono::steady_clock::now();
    auto run = runNcu(r);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    json entry = {{"name", name}, {"task", r.task.string()}, {"candidate", r.candidate ? r.candidate->string() : ""},
                  {"seconds", seconds}, {"ok", run.ok()}};
    if (!run) {
      ++failures;
      entry["error"] = {{"code", run.error().code}, {"message", run.error().message}};
    } else {
      std::ofstream(out + "/ncu_" + name + ".csv") << run.value().csv;
      std::string cmd;
      for (const auto& a : run.value().command) cmd += (cmd.empty() ? "" : " ") + a;
      entry["command"] = cmd;
      entry["kernels"] = json::array();
      for (const auto& k : run.value().kernels) entry["kernels"].push_back(metricsJson(k, ceilings));
      if (auto fb = verifierFeedback(run.value().kernels, ceilings)) entry["feedback"] = feedbackToJson(*fb);
    }
    report["cases"].push_back(entry);
  }
  std::cout << report.dump(1) << std::endl;
  return failures == 0 ? 0 : 1;
}
