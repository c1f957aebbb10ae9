// The program the harness's measureCeilings builds to measure the roofline's FP32 GEMM ceiling
// with the same cuBLASLt configuration search the candidates' GEMMs run (cuda/GemmCeiling.cuh), so
// that no GEMM of ours is measured past its compute floor.
#pragma once

#include <string>

namespace stitch::agents::builtin {

// A whole .cu: the prelude, the fp32 GEMM library code, and `stitch_gemm_ceiling`.
std::string gemmCeilingProgram();

}  // namespace stitch::agents::builtin
