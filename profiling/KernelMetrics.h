// One kernel launch as Nsight Compute measured it: the counters the roofline, the Verifier's
// feedback and the editor's hovers read. A field is empty when this ncu or GPU did not report it.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace stitch::profiling {

struct WarpStall {
  std::string reason;        // ncu's name: long_scoreboard, math_pipe_throttle, barrier, ...
  double cyclesPerIssue = 0;  // average warp cycles spent in this state per issued instruction
};

struct KernelMetrics {
  int id = 0;                 // ncu's launch index inside the profiled range
  std::string name;           // demangled, as ncu prints it
  std::string blockSize;      // "(256, 1, 1)"
  std::string gridSize;
  std::optional<double> durationUs;
  std::optional<double> dramThroughputPct;    // of peak, elapsed
  std::optional<double> smThroughputPct;      // of peak, elapsed
  std::optional<double> memoryThroughputPct;  // the busiest memory unit, of peak
  std::optional<double> achievedOccupancyPct;
  std::optional<double> theoreticalOccupancyPct;
  std::string occupancyLimiter;  // registers | shared_memory | blocks | warps | none (100% theoretical) | "" (unknown)
  std::optional<double> registersPerThread;
  std::optional<double> sharedMemPerBlockBytes;  // static + dynamic
  std::optional<double> l1HitPct;
  std::optional<double> l2HitPct;
  std::optional<double> fp32PipePct;    // FMA pipe, of peak while active
  std::optional<double> tensorPipePct;  // busiest tensor pipe, of peak while active
  std::optional<double> instructionsExecuted;
  std::optional<double> dramBytes;      // read + written
  std::optional<double> fp32Flops;      // 2*FFMA + FADD + FMUL, thread instructions
  std::vector<WarpStall> stalls;        // largest first
};

}  // namespace stitch::profiling
