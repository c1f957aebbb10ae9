// CUDA source for one FusedKernel: the device kernel(s) (flat elementwise, row reduction with
// warp shuffles, or column reduction) and a host launcher on the caller's stream. Shapes are
// baked in as constants (the captured graph's), so index arithmetic divides by constants, but for
// the extent of dim 0 where the kernel takes the call's rows (FusedKernel::perRow): its loop bounds
// and grid are then computed from them. The launcher picks 16-byte vector accesses when every
// contiguous pointer is aligned.
#pragma once

#include "agents/builtin/FusedKernel.h"
#include "agents/builtin/ops/CudaLiteral.h"  // floatLiteral, for the emitters

#include <map>
#include <string>

namespace stitch::agents::builtin {

// One point of the refine search (design §8): the launch shape of every generated kernel.
struct Variant {
  int block = 256;  // threads per block
  int vec = 4;      // elements per 16-byte access (4) or scalar accesses (1)
  int items = 1;    // flat kernels: vector chunks per thread before the grid strides
  std::string name() const;
};

struct EmittedKernel {
  std::string device;  // kernel definitions and the launcher `static int launch_<name>(const StitchTensor*, cudaStream_t)`
  std::string launcher;  // the launcher's name
};

// `slots`: the ABI slot of each tensor id the kernel reads or writes.
EmittedKernel emitKernel(const FusedKernel& kernel, const std::string& name, const Variant& variant,
                         const std::map<std::string, int>& slots);

// A row reduction (inner() == 1) whose rows are short enough (up to 1024 elements, eight 16-byte
// chunks per lane) to take a warp each rather than a block.
bool warpPerRow(const FusedKernel& kernel);

// Parts a column reduction (inner() > 1) splits its reduced dim into, a block each, when its
// columns are too few to fill the GPU; 1: not split. Its partial results are sized for the
// captured shape, so its rows stay fixed (RuntimeRows.h).
int64_t splitsColumns(const FusedKernel& kernel);

// Device helpers every generated file starts with (math functions, block reductions).
std::string emitPrelude();
// Whether the kernel folds two reductions into one pass over its rows (softmax's max and sum of
// exponentials, a norm's mean and squared deviations); its file then needs emitFoldPrelude().
bool foldsReductions(const FusedKernel& kernel);
// The states of folded reductions and their merges.
std::string emitFoldPrelude();

}  // namespace stitch::agents::builtin
