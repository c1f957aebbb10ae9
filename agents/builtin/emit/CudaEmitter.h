// CUDA source for one FusedKernel: the device kernel(s) (flat elementwise, row reduction with
// warp shuffles, or column reduction) and a host launcher on the caller's stream. Shapes are
// baked in as constants (the captured graph's), so index arithmetic divides by constants, but for
// the extent of dim 0 where the kernel takes the call's rows (FusedKernel::perRow): its loop bounds
// and grid are then computed from them. The launcher picks 16-byte vector accesses when every
// contiguous pointer is aligned.
#pragma once

#include "agents/builtin/kernel/FusedKernel.h"
#include "agents/builtin/kernel/LaunchShape.h"
#include "agents/builtin/ops/CudaLiteral.h"  // floatLiteral, for the emitters

#include <map>
#include <string>

namespace stitch::agents::builtin {

struct EmittedKernel {
  std::string device;  // kernel definitions and the launcher `static int launch_<name>(const StitchTensor*, cudaStream_t)`
  std::string launcher;  // the launcher's name
};

// `slots`: the ABI slot of each tensor id the kernel reads or writes.
EmittedKernel emitKernel(const FusedKernel& kernel, const std::string& name, const Variant& variant,
                         const std::map<std::string, int>& slots);

// Device helpers every generated file starts with (math functions, block reductions).
std::string emitPrelude();
// Whether the kernel folds two reductions into one pass over its rows (softmax's max and sum of
// exponentials, a norm's mean and squared deviations); its file then needs emitFoldPrelude().
bool foldsReductions(const FusedKernel& kernel);
// The states of folded reductions and their merges.
std::string emitFoldPrelude();

}  // namespace stitch::agents::builtin
