// The library calls' compute floor; see ComputeFloor.h.
#include "profiling/ComputeFloor.h"

#include "protocol/NumberText.h"

#include <algorithm>
#include <array>

namespace stitch::profiling {
namespace {

// Dense TF32 tensor-core peaks from NVIDIA's datasheets (TFLOP/s, without sparsity), matched as
// parts of the name PyTorch gives the device, first match wins. A variant with a lower peak (an
// H100 NVL, an A10G) takes its family's higher one: the floor is then lower, never above the truth.
struct Datasheet {
  const char* name;
  double tf32Tflops;
};
constexpr std::array<Datasheet, 9> kDatasheets{{{"H100 PCIe", 378.0},
                                                {"H100", 494.7},
                                                {"H200", 494.7},  // GH200 too
                                                {"A100", 156.0},
                                                {"A30", 82.0},
                                                {"A10", 62.5},
                                                {"L40S", 183.0},
                                                {"L40", 90.5},
                                                {"L4", 60.0}}};

// A TF32 GEMM no faster than this share above the fp32 one ran with TF32 off (or on a GPU without
// TF32 tensor cores): it measured the fp32 units again.
constexpr double kTf32MeasuredAbove = 1.5;

struct Unit {
  const char* name;
  double tflops = 0;
  double flops = 0;  // the math the floor puts on it
};

}  // namespace

Tf32Ceiling tf32Ceiling(const Ceilings& c) {
  if (c.tf32Tflops > kTf32MeasuredAbove * c.fp32Tflops) return {c.tf32Tflops, true};
  for (const auto& d : kDatasheets)
    if (c.gpu.find(d.name) != std::string::npos) return {d.tf32Tflops, false};
  return {};
}

std::optional<ComputeFloor> computeFloor(const std::vector<LibraryMath>& calls, const Ceilings& c) {
  const Tf32Ceiling tf32 = tf32Ceiling(c);
  Unit fp32Cores{"FP32", c.fp32Tflops}, tensorCores{tf32.measured ? "TF32 tensor cores" : "TF32 tensor cores (datasheet peak)",
                                                   tf32.tflops};
  double splitFlops = 0;  // the 3xTF32 forms' share of tensorCores.flops
  double unbounded = 0;   // TF32 math without a TF32 ceiling
  for (const LibraryMath& m : calls) {
    if (m.flops <= 0) continue;
    const double fp32Flops = m.fewestFp32Flops > 0 ? std::min(m.fewestFp32Flops, m.flops) : m.flops;
    // The fastest unit this call may use; TF32 math of an unknown ceiling could take no time.
    const double onTensorCores = m.tf32 ? m.flops : m.splitTf32 ? 3 * m.flops : 0;
    if (onTensorCores > 0 && tf32.tflops <= 0) {
      unbounded += m.flops;
      continue;
    }
    if (onTensorCores > 0 && onTensorCores / tf32.tflops < fp32Flops / fp32Cores.tflops) {
      tensorCores.flops += onTensorCores;
      if (!m.tf32) splitFlops += onTensorCores;
      continue;
    }
    fp32Cores.flops += fp32Flops;
  }
  if (fp32Cores.flops <= 0 && tensorCores.flops <= 0) return std::nullopt;
  ComputeFloor f;
  using protocol::fixed;
  for (const Unit* u : {&tensorCores, &fp32Cores}) {
    if (u->flops <= 0) continue;
    f.seconds += u->flops / (u->tflops * 1e12);
    f.basis += (f.basis.empty() ? "" : " + ") + fixed(u->flops / 1e9, 1) + " GFLOP at " + fixed(u->tflops, 1) +
               " TFLOP/s " + u->name;
    if (u == &tensorCores && splitFlops > 0) f.basis += " (" + fixed(splitFlops / 1e9, 1) + " of them 3xTF32's three passes)";
  }
  if (unbounded > 0)
    f.basis += "; " + fixed(unbounded / 1e9, 1) + " GFLOP of TF32 math left out (no TF32 ceiling for " + c.gpu + ")";
  return f;
}

}  // namespace stitch::profiling
