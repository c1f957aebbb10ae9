// Chrome-trace timeline analysis (see TorchTrace.h). The CPU side is swept once per thread with
// a stack of open ranges, so each launch finds its operators, line and iteration in O(n log n);
// GPU activities find their launch through the CUPTI correlation id.
#include "profiling/TorchTrace.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace stitch::profiling {
namespace {

using nlohmann::json;

struct CpuEvent {
  std::string cat, name;
  double ts = 0, end = 0;
  long long tid = 0;
  long long correlation = -1;  // cuda_runtime only
};

struct LaunchContext {
  int iteration = -1;
  std::vector<std::string> ops;
  std::optional<int> line;
  long long tid = 0;
};

long long asInt(const json& v) {
  if (v.is_number()) return v.get<long long>();
  if (v.is_string()) try { return std::stoll(v.get<std::string>()); } catch (...) {}
  return 0;
}

std::string dims(const json& v) { return v.is_array() ? v.dump() : ""; }

bool isLaunchApi(const std::string& name) {
  for (const char* p : {"cudaLaunch", "cuLaunch", "cudaMemcpy", "cudaMemset", "cuMemcpy", "cuMemset", "cudaGraphLaunch"})
    if (name.rfind(p, 0) == 0) return true;
  return false;
}

std::optional<int> suffixNumber(const std::string& name, const std::string& prefix) {
  if (name.rfind(prefix, 0) != 0) return std::nullopt;
  try {
    return std::stoi(name.substr(prefix.size()));
  } catch (...) {
    return std::nullopt;
  }
}

std::vector<NamedTime> ranked(const std::map<std::string, NamedTime>& m, int iterations) {
  std::vector<NamedTime> v;
  for (auto [_, t] : m) {
    t.gpuUs /= iterations;
    t.launches /= iterations;
    v.push_back(t);
  }
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.gpuUs > b.gpuUs; });
  return v;
}

}  // namespace

ProfileResult<TraceSummary> parseTorchTrace(const json& trace, const std::string& iterationPrefix,
                                            const std::string& linePrefix) {
  if (!trace.is_object() || !trace.contains("traceEvents") || !trace["traceEvents"].is_array())
    return ProfileError{"parse_error", "not a PyTorch profiler chrome trace (no \"traceEvents\" array); "
                                       "torch.profiler's export_chrome_trace writes one when CUDA activity is recorded"};
  std::vector<CpuEvent> cpu;
  std::vector<const json*> gpu;
  for (const json& e : trace["traceEvents"]) {
    if (!e.is_object() || e.value("ph", "") != "X") continue;
    std::string cat = e.value("cat", "");
    if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
      gpu.push_back(&e);
    } else if (cat == "cpu_op" || cat == "user_annotation" || cat == "cuda_runtime" || cat == "cuda_driver") {
      double ts = e.value("ts", 0.0);
      CpuEvent c{cat, e.value("name", ""), ts, ts + e.value("dur", 0.0), asInt(e.value("tid", json(0))), -1};
      if ((cat == "cuda_runtime" || cat == "cuda_driver") && e.contains("args"))
        c.correlation = asInt(e["args"].value("correlation", json(-1)));
      cpu.push_back(std::move(c));
    }
  }
  // Outer ranges first at equal start, so the stack nests.
  std::sort(cpu.begin(), cpu.end(), [](const CpuEvent& a, const CpuEvent& b) {
    if (a.tid != b.tid) return a.tid < b.tid;
    if (a.ts != b.ts) return a.ts < b.ts;
    return a.end > b.end;
  });
  std::unordered_map<long long, LaunchContext> launches;  // correlation -> context
  std::map<int, std::pair<double, double>> iterationSpans;  // index -> (start, end)
  double launchApiTotal = 0;
  std::vector<const CpuEvent*> stack;
  long long tid = -1;
  for (const CpuEvent& e : cpu) {
    if (e.tid != tid) {
      stack.clear();
      tid = e.tid;
    }
    while (!stack.empty() && stack.back()->end <= e.ts) stack.pop_back();
    if (e.cat == "user_annotation")
      if (auto i = suffixNumber(e.name, iterationPrefix)) iterationSpans[*i] = {e.ts, e.end};
    if (e.correlation >= 0) {
      LaunchContext ctx;
      ctx.tid = e.tid;
      for (const CpuEvent* open : stack) {
        if (open->cat == "cpu_op") ctx.ops.push_back(open->name);
        if (open->cat != "user_annotation") continue;
        if (auto i = suffixNumber(open->name, iterationPrefix)) ctx.iteration = *i;
        if (auto l = suffixNumber(open->name, linePrefix)) ctx.line = l;
      }
      if (isLaunchApi(e.name) && ctx.iteration >= 0) launchApiTotal += e.end - e.ts;
      launches[e.correlation] = std::move(ctx);
    }
    stack.push_back(&e);
  }
  if (iterationSpans.empty())
    return ProfileError{"parse_error", "the trace has no \"" + iterationPrefix + "N\" ranges: it was not recorded by "
                                       "the harness's profileTrace, so forwards cannot be told apart"};

  TraceSummary s;
  s.iterations = static_cast<int>(iterationSpans.size());
  for (const json* g : gpu) {
    const json& e = *g;
    const json& args = e.contains("args") ? e["args"] : json::object();
    auto it = launches.find(asInt(args.value("correlation", json(-1))));
    if (it == launches.end() || it->second.iteration < 0) continue;  // warm-up or outside the forwards
    TraceActivity a;
    std::string cat = e.value("cat", "");
    a.kind = cat == "kernel" ? "kernel" : cat == "gpu_memcpy" ? "memcpy" : "memset";
    a.name = e.value("name", "");
    a.startUs = e.value("ts", 0.0);
    a.durationUs = e.value("dur", 0.0);
    a.stream = static_cast<int>(asInt(args.value("stream", json(0))));
    a.correlation = it->first;
    a.iteration = it->second.iteration;
    a.ops = it->second.ops;
    a.line = it->second.line;
    if (args.contains("registers per thread")) a.registersPerThread = static_cast<int>(asInt(args["registers per thread"]));
    if (args.contains("shared memory")) a.sharedMemoryBytes = static_cast<int>(asInt(args["shared memory"]));
    a.grid = dims(args.value("grid", json()));
    a.block = dims(args.value("block", json()));
    s.activities.push_back(std::move(a));
  }
  std::sort(s.activities.begin(), s.activities.end(), [](const auto& a, const auto& b) { return a.startUs < b.startUs; });

  std::map<std::string, NamedTime> byKernel, byOp, byLine;
  double busy = 0, gapSum = 0, gapMax = 0, beforeFirst = 0;
  int gaps = 0, kernels = 0;
  std::map<int, double> coveredUntil;  // per iteration: end of the union so far
  for (const TraceActivity& a : s.activities) {
    if (a.kind == "kernel") {
      ++kernels;
      auto& k = byKernel[a.name];
      k.name = a.name;
      k.gpuUs += a.durationUs;
      k.launches += 1;
    }
    std::string op = a.op().empty() ? "(no operator)" : a.op();
    auto& o = byOp[op];
    o.name = op;
    o.gpuUs += a.durationUs;
    o.launches += 1;
    if (a.line) {
      auto& l = byLine[std::to_string(*a.line)];
      l.name = std::to_string(*a.line);
      l.gpuUs += a.durationUs;
      l.launches += 1;
    }
    const double end = a.startUs + a.durationUs;
    auto [cov, first] = coveredUntil.try_emplace(a.iteration, a.startUs);
    if (first) {
      beforeFirst += std::max(0.0, a.startUs - iterationSpans[a.iteration].first);
    } else {
      double gap = a.startUs - cov->second;
      if (gap > 0) {
        gapSum += gap;
        gapMax = std::max(gapMax, gap);
      }
      ++gaps;
    }
    busy += std::max(0.0, end - std::max(a.startUs, cov->second));
    cov->second = std::max(cov->second, end);
  }
  double wall = 0;
  for (const auto& [_, span] : iterationSpans) wall += span.second - span.first;
  const double n = s.iterations;
  s.perKernel = ranked(byKernel, s.iterations);
  s.perOperator = ranked(byOp, s.iterations);
  s.perLine = ranked(byLine, s.iterations);
  s.kernelsPerForward = kernels / n;
  s.gpuBusyUs = busy / n;
  s.wallUs = wall / n;
  s.idleShare = wall > 0 ? std::clamp(1.0 - busy / wall, 0.0, 1.0) : 0.0;
  s.launchGapMeanUs = gaps ? gapSum / gaps : 0;
  s.launchGapMaxUs = gapMax;
  s.launchApiUs = launchApiTotal / n;
  s.cpuBeforeFirstKernelUs = beforeFirst / n;
  return s;
}

}  // namespace stitch::profiling
