// The launch shapes the planner and the emitter share; see LaunchShape.h.
#include "agents/builtin/kernel/LaunchShape.h"

#include <algorithm>

namespace stitch::agents::builtin {

bool warpPerRow(const FusedKernel& kernel) { return kernel.reduced() <= 1024; }

// Only where the column blocks are fewer than an H100's SMs (132), as measured (128 blocks: 44% to
// 55% of the floor); between one and four blocks per SM it is not measured yet, and it would cost
// a program its run-time rows there (channels-last spatial means). Parts of 256 rows at least (32 rows for
// each of 8 row groups, four unrolled steps), so that a part's loads outweigh its combine; about four
// blocks per SM, as the emitter's rowSplits().
int64_t splitsColumns(const FusedKernel& kernel) {
  if (!kernel.reduces() || kernel.inner() == 1 || kernel.perRow > 0) return 1;
  const int64_t blocks = (kernel.outer() * kernel.inner() + 31) / 32;
  if (blocks > 132) return 1;
  const int64_t want = (4 * 132 + blocks - 1) / blocks, most = kernel.reduced() / 256;
  return std::max<int64_t>(1, std::min({want, most, int64_t{1024}}));
}

std::string Variant::name() const {
  return "b" + std::to_string(block) + "v" + std::to_string(vec) + "i" + std::to_string(items);
}

}  // namespace stitch::agents::builtin
