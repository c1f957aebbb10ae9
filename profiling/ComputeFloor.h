// The compute roofline's floor of a program's library calls (design §10, §12): each call's math at
// the ceiling of the units it can run on, so that no measured time beats it. A call that computes
// in TF32 (eager's precision for it) runs on TF32 tensor cores; an exact-fp32 call on fp32 CUDA
// cores, or, where the job allows its 3xTF32 form, three TF32 passes, whichever is faster.
#pragma once

#include "profiling/Roofline.h"

#include <optional>
#include <string>
#include <vector>

namespace stitch::profiling {

// One library call's math as a candidate may run it.
struct LibraryMath {
  double flops = 0;        // 2 x the multiply-adds of the operator as written
  bool tf32 = false;       // may compute in TF32 on tensor cores
  bool splitTf32 = false;  // exact fp32 that may take its 3xTF32 form: three TF32 products for each
  // The fewest FLOPs an exact-fp32 algorithm of the library may do for it, where that is fewer
  // than `flops` (a Winograd convolution); 0: `flops`.
  double fewestFp32Flops = 0;
};

// The TF32 tensor-core ceiling: the measured TF32 GEMM where one was measured (faster than the
// fp32 one: a measurement with TF32 off is none), else the datasheet's dense TF32 peak of a known
// GPU, which no kernel exceeds; 0 where neither is known.
struct Tf32Ceiling {
  double tflops = 0;
  bool measured = false;
};
Tf32Ceiling tf32Ceiling(const Ceilings& c);

struct ComputeFloor {
  double seconds = 0;
  // "2.0 GFLOP at 409.0 TFLOP/s TF32 tensor cores + 0.5 GFLOP at 51.3 TFLOP/s FP32"
  std::string basis;
};

// The calls run one after another: the sum of each call's fastest time on its units. TF32 math
// without a TF32 ceiling counts nothing (said in the basis), so the floor stays a floor. nullopt
// when no call has math to bound.
std::optional<ComputeFloor> computeFloor(const std::vector<LibraryMath>& calls, const Ceilings& c);

}  // namespace stitch::profiling
