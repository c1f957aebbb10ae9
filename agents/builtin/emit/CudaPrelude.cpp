// The device helpers every generated file starts with; their CUDA is agents/builtin/cuda/Prelude.cuh
// and FoldPrelude.cuh, embedded at build time.
#include "agents/builtin/cuda/EmbeddedCuda.h"
#include "agents/builtin/emit/CudaEmitter.h"

namespace stitch::agents::builtin {

std::string emitPrelude() { return cuda::kPrelude; }

std::string emitFoldPrelude() { return cuda::kFoldPrelude; }

}  // namespace stitch::agents::builtin
