// The launch shapes the planner and the emitter share; see LaunchShape.h.
#include "agents/builtin/kernel/LaunchShape.h"

#include <algorithm>

namespace stitch::agents::builtin {

bool warpPerRow(const FusedKernel& kernel, bool onePass) {
  constexpr int64_t kWarpsToFill = 32 * 132;  // half an H100's (or H200's) resident warps
  return kernel.reduced() <= 1024 || (onePass && kernel.reduced() <= 4096 && kernel.outer() >= kWarpsToFill);
}

int lanesPerRow(const FusedKernel& kernel) {
  const int64_t chunks = (kernel.reduced() + 3) / 4;
  int lanes = 2;
  while (lanes < 32 && lanes * 4 < chunks) lanes *= 2;
  return lanes;
}

// Where the column blocks are fewer than two per SM of an H100 (132): with fewer than one, 44% to
// 55% of the floor (128 blocks); with two (level2/67's GELU and mean over the 64516 pixels of an
// NHWC [128, 64] output, 256 blocks) 1.25 ms on an H200 where Inductor's split reduction took
// 0.82. Four per SM (argmin over [64, 1024, 256], 512 blocks) stay whole: not measured split. It
// costs a program its run-time rows (RuntimeRows.h). Parts of 256 rows at least (32 rows
// for each of 8 row groups, four unrolled steps), so that a part's loads outweigh its combine;
// about four blocks per SM, as the emitter's rowSplits().
int64_t splitsColumns(const FusedKernel& kernel) {
  if (!kernel.reduces() || kernel.inner() == 1 || kernel.perRow > 0) return 1;
  const int64_t blocks = (kernel.outer() * kernel.inner() + 31) / 32;
  if (blocks >= 2 * 132) return 1;
  const int64_t want = (4 * 132 + blocks - 1) / blocks, most = kernel.reduced() / 256;
  return std::max<int64_t>(1, std::min({want, most, int64_t{1024}}));
}

std::optional<TiledTranspose> tiledTranspose(const FusedKernel& k) {
  if (k.reduceBegin >= 0) return std::nullopt;
  // Inputs that a concatenation, a padding or a gather loads at shifted coordinates, or that a
  // pooling window reads, are loaded where they are used, not staged.
  std::vector<bool> plain(k.inputs.size(), true);
  for (const KernelValue& v : k.values) {
    if (v.op == ValueOp::Pool) return std::nullopt;
    if (v.op == ValueOp::Concat || v.op == ValueOp::Pad || v.op == ValueOp::Gather)
      for (int a : v.args)
        if (k.values[a].op == ValueOp::Input) plain[k.values[a].input] = false;
  }
  constexpr int64_t kShortest = 8;
  TiledTranspose t;
  for (int d = static_cast<int>(k.shape.size()); d-- > 0 && t.inner < 0;)
    if (k.shape[d] > 1) t.inner = d;
  if (t.inner <= 0 || k.shape[t.inner] < kShortest) return std::nullopt;
  for (std::size_t i = 0; i < k.inputs.size(); ++i) {
    const KernelInput& in = k.inputs[i];
    if (!plain[i] || in.window || in.linear || in.dtype != kComputeType || in.strides[t.inner] == 1 ||
        in.strides[t.inner] == 0)
      continue;
    int along = -1;
    for (int d = 0; d < static_cast<int>(k.shape.size()); ++d)
      if (k.shape[d] > 1 && in.strides[d] == 1) along = d;
    // Dim 0 is the batch a call may change (RuntimeRows): tiles never span it.
    if (along <= 0 || k.shape[along] < kShortest || (t.across >= 0 && along != t.across)) continue;
    t.across = along;
    t.staged.push_back(static_cast<int>(i));
  }
  if (t.staged.empty()) return std::nullopt;
  while (t.innerTile > 8 && t.innerTile / 2 >= k.shape[t.inner]) t.innerTile /= 2;
  return t;
}

std::string Variant::name() const {
  return "b" + std::to_string(block) + "v" + std::to_string(vec) + "i" + std::to_string(items);
}

}  // namespace stitch::agents::builtin
