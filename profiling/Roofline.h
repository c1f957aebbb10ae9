// The roofline model (design §10, §12): the GPU's measured ceilings (memory bandwidth, GEMM
// FLOP/s) and, for each kernel, which one bounds it and how close it gets. Memory- or
// compute-bound when the kernel reaches a real share of that ceiling; latency-bound when it
// reaches neither (too little work in flight, launch- or dependency-limited).
#pragma once

#include "profiling/KernelMetrics.h"
#include "profiling/ProfileResult.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace stitch::profiling {

struct Ceilings {
  std::string gpu;
  double copyGBps = 0;    // memory: the fastest stream measured (copies, read-only sums), bytes per second
  double fp32Tflops = 0;  // SGEMM, TF32 off: the faster of torch.matmul and our configuration search
  double tf32Tflops = 0;
  double bf16Tflops = 0;
  int multiprocessors = 0;  // SMs, to judge whether a grid fills the GPU
  std::string measuredAt;  // ISO 8601, UTC
};

// The harness's measureCeilings result (or a cached copy of it).
ProfileResult<Ceilings> ceilingsFromJson(const nlohmann::json& j);
nlohmann::json ceilingsToJson(const Ceilings& c);

enum class Bound { Memory, Compute, Latency };
std::string boundName(Bound b);  // "memory" | "compute" | "latency"

struct RooflinePoint {
  Bound bound = Bound::Latency;
  double memoryFraction = 0;   // achieved DRAM bandwidth / memory ceiling
  double computeFraction = 0;  // achieved FP32 FLOP/s / SGEMM ceiling, or the tensor pipe's share
  double achievedFraction = 0; // of the bounding ceiling (for latency: the larger of the two)
  std::string basis;           // how the fractions were computed, for the evidence line
};

// Below this share of both ceilings a kernel is latency-bound.
inline constexpr double kLatencyBoundBelow = 0.4;

// With ceilings and the kernel's DRAM bytes / FP32 operations: fractions of the measured
// ceilings. Without them: ncu's own DRAM and SM throughput (% of the hardware peak).
// nullopt when the metrics hold neither.
std::optional<RooflinePoint> classify(const KernelMetrics& k, const std::optional<Ceilings>& ceilings,
                                      double latencyBelow = kLatencyBoundBelow);

}  // namespace stitch::profiling
