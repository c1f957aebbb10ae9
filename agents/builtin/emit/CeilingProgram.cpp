#include "agents/builtin/emit/CeilingProgram.h"

#include "agents/builtin/cuda/EmbeddedCuda.h"
#include "agents/builtin/emit/LibraryEmitter.h"

namespace stitch::agents::builtin {

std::string gemmCeilingProgram() {
  return std::string(cuda::kPrelude) + emitLibraryPrelude(/*gemm=*/true, false, false, false, /*tensorCores=*/false) +
         cuda::kGemmCeiling;
}

}  // namespace stitch::agents::builtin
