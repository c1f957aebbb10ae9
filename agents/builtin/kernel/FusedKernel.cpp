// Index arithmetic of a FusedKernel's iteration space; see FusedKernel.h.
#include "agents/builtin/kernel/FusedKernel.h"

namespace stitch::agents::builtin {
namespace {

int64_t product(const std::vector<int64_t>& shape, int begin, int end) {
  int64_t n = 1;
  for (int d = begin; d < end; ++d) n *= shape[d];
  return n;
}

}  // namespace

// Written out: PoolSpec holds KernelValues, which hold a PoolSpec, and an out-of-line defaulted
// comparison of that recursion crashed clang 14.
bool PoolSpec::operator==(const PoolSpec& o) const {
  return max == o.max && weights == o.weights && weightStrides == o.weightStrides && inSize == o.inSize &&
         kernel == o.kernel && stride == o.stride && padding == o.padding && dilation == o.dilation &&
         countIncludePad == o.countIncludePad && divisorOverride == o.divisorOverride && prologue == o.prologue &&
         windowDims == o.windowDims && channelDim == o.channelDim;
}

int64_t FusedKernel::numel() const { return product(shape, 0, static_cast<int>(shape.size())); }
// Scanned ranges split the iteration space like reduced ones.
int64_t FusedKernel::outer() const { return reduceBegin >= 0 ? product(shape, 0, reduceBegin) : numel(); }
int64_t FusedKernel::reduced() const { return reduceBegin >= 0 ? product(shape, reduceBegin, reduceEnd) : 1; }
int64_t FusedKernel::inner() const {
  return reduceBegin >= 0 ? product(shape, reduceEnd, static_cast<int>(shape.size())) : 1;
}

bool KernelOutput::vectorStores() const {
  if (dtype != kComputeType) return false;
  if (!strided()) return true;
  if (offset % 4 != 0) return false;
  int last = -1;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d)
    if (shape[d] != 1) last = d;
  if (last < 0 || strides[last] != 1 || shape[last] % 4 != 0) return false;
  for (int d = 0; d < last; ++d)
    if (shape[d] != 1 && strides[d] % 4 != 0) return false;
  return true;
}

bool FusedKernel::variesOverReduced(int value) const {
  if (reduceBegin < 0) return true;
  for (int d : values[value].dimMap)
    if (d >= reduceBegin && d < reduceEnd) return true;
  return false;
}

}  // namespace stitch::agents::builtin
