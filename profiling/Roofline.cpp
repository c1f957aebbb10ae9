// Kernel classification against measured ceilings (see Roofline.h).
#include "profiling/Roofline.h"

#include <algorithm>

namespace stitch::profiling {

ProfileResult<Ceilings> ceilingsFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return ProfileError{"parse_error", "roofline ceilings must be a JSON object"};
  Ceilings c;
  try {
    c.gpu = j.at("gpu").get<std::string>();
    c.copyGBps = j.at("copyGBps").get<double>();
    c.fp32Tflops = j.at("fp32Tflops").get<double>();
    c.tf32Tflops = j.value("tf32Tflops", 0.0);
    c.bf16Tflops = j.value("bf16Tflops", 0.0);
    c.measuredAt = j.value("measuredAt", "");
    c.multiprocessors = j.value("multiprocessors", 0);
  } catch (const nlohmann::json::exception& e) {
    return ProfileError{"parse_error", std::string("roofline ceilings: ") + e.what()};
  }
  if (c.copyGBps <= 0 || c.fp32Tflops <= 0)
    return ProfileError{"parse_error", "roofline ceilings must be positive (copyGBps, fp32Tflops)"};
  return c;
}

nlohmann::json ceilingsToJson(const Ceilings& c) {
  return {{"gpu", c.gpu},           {"copyGBps", c.copyGBps},     {"fp32Tflops", c.fp32Tflops},
          {"tf32Tflops", c.tf32Tflops}, {"bf16Tflops", c.bf16Tflops}, {"multiprocessors", c.multiprocessors},
          {"measuredAt", c.measuredAt}};
}

std::string boundName(Bound b) {
  switch (b) {
    case Bound::Memory: return "memory";
    case Bound::Compute: return "compute";
    case Bound::Latency: return "latency";
  }
  return "latency";
}

std::optional<RooflinePoint> classify(const KernelMetrics& k, const std::optional<Ceilings>& ceilings,
                                      double latencyBelow) {
  RooflinePoint p;
  const bool timed = k.durationUs && *k.durationUs > 0;
  std::optional<double> memory, compute;
  if (ceilings && timed && k.dramBytes) {
    memory = *k.dramBytes / (*k.durationUs * 1e-6) / (ceilings->copyGBps * 1e9);
    p.basis = "DRAM bytes / duration vs measured copy bandwidth";
  } else if (k.dramThroughputPct) {
    memory = *k.dramThroughputPct / 100.0;
    p.basis = "ncu DRAM throughput % of peak";
  }
  if (ceilings && timed && k.fp32Flops) {
    compute = *k.fp32Flops / (*k.durationUs * 1e-6) / (ceilings->fp32Tflops * 1e12);
    p.basis += "; FP32 FLOP/s vs measured SGEMM";
  }
  if (k.tensorPipePct && *k.tensorPipePct / 100.0 > compute.value_or(0)) {
    compute = *k.tensorPipePct / 100.0;
    p.basis += "; tensor pipe % of peak";
  }
  if (!compute && k.smThroughputPct) {
    compute = *k.smThroughputPct / 100.0;
    p.basis += "; ncu SM throughput % of peak";
  }
  if (!memory && !compute) return std::nullopt;
  if (!p.basis.empty() && p.basis.front() == ';') p.basis = p.basis.substr(2);
  p.memoryFraction = memory.value_or(0);
  p.computeFraction = compute.value_or(0);
  if (std::max(p.memoryFraction, p.computeFraction) < latencyBelow) {
    p.bound = Bound::Latency;
    p.achievedFraction = std::max(p.memoryFraction, p.computeFraction);
  } else if (p.memoryFraction >= p.computeFraction) {
    p.bound = Bound::Memory;
    p.achievedFraction = p.memoryFraction;
  } else {
    p.bound = Bound::Compute;
    p.achievedFraction = p.computeFraction;
  }
  return p;
}

}  // namespace stitch::profiling
