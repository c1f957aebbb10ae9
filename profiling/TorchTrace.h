// The PyTorch profiler's chrome trace (profileTrace in the harness, torch.profiler's
// export_chrome_trace) read into a typed timeline: each GPU activity with the operator chain
// that launched it and the source line that was executing (kernel -> operators -> line), and
// the timeline facts per forward: GPU time per operator and per kernel, kernel count, launch
// gaps, GPU idle share and the CPU-side cost of launching.
#pragma once

#include "profiling/ProfileResult.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace stitch::profiling {

struct TraceActivity {
  std::string kind;  // kernel | memcpy | memset
  std::string name;
  double startUs = 0;
  double durationUs = 0;
  int stream = 0;
  long long correlation = 0;
  int iteration = -1;               // index of the enclosing stitchcuda.iteration range, -1 if none
  std::vector<std::string> ops;     // operators around the launch, outermost first ("" none: e.g. a ctypes call)
  std::optional<int> line;          // one-based line of the profiled file, from stitchcuda.line:N
  std::optional<int> registersPerThread;
  std::optional<int> sharedMemoryBytes;
  std::string grid, block;          // "[1024, 1, 1]"
  std::string op() const { return ops.empty() ? "" : ops.back(); }  // the one that launched it
};

struct NamedTime {
  std::string name;
  double gpuUs = 0;        // per forward
  double launches = 0;     // per forward
};

struct TraceSummary {
  int iterations = 0;                     // stitchcuda.iteration ranges found
  std::vector<TraceActivity> activities;  // every GPU activity inside an iteration, in time order
  std::vector<NamedTime> perKernel;       // by kernel name, largest first
  std::vector<NamedTime> perOperator;     // by launching operator ("(no operator)" for direct launches), largest first
  std::vector<NamedTime> perLine;         // by line ("15"), largest first
  double kernelsPerForward = 0;
  double gpuBusyUs = 0;        // per forward: union of GPU activity
  double wallUs = 0;           // per forward: the iteration range (CPU start to the end of its synchronize)
  double idleShare = 0;        // 1 - busy / wall
  double launchGapMeanUs = 0;  // between consecutive GPU activities of one forward
  double launchGapMaxUs = 0;
  double launchApiUs = 0;      // per forward: time inside CUDA launch/copy/set API calls on the CPU
  double cpuBeforeFirstKernelUs = 0;  // per forward: from the forward's start to its first GPU work
};

// `iterationPrefix` / `linePrefix`: the range names the harness opens (profile_trace.py).
ProfileResult<TraceSummary> parseTorchTrace(const nlohmann::json& trace,
                                            const std::string& iterationPrefix = "stitchcuda.iteration:",
                                            const std::string& linePrefix = "stitchcuda.line:");

}  // namespace stitch::profiling
