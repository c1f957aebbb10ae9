// How a generated kernel is launched, as far as the stages before the emitter must know it: the
// refine search's launch variant, and the launch shapes the planner describes and RuntimeRows
// checks (a warp, a few lanes or a block per row, a column reduction split over blocks). The emitter
// (emit/CudaEmitter.h) generates what these decide.
#pragma once

#include "agents/builtin/kernel/FusedKernel.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stitch::agents::builtin {

// One point of the refine search (design §8): the launch shape of every generated kernel.
struct Variant {
  int block = 256;  // threads per block
  int vec = 4;      // elements per 16-byte access (4) or scalar accesses (1)
  int items = 1;    // flat kernels: vector chunks per thread before the grid strides; row scans: 4 elements each
  std::string name() const;
};

// A row reduction (inner() == 1) that takes a warp a row rather than a block: rows short enough
// (up to 1024 elements, eight 16-byte chunks per lane) for a lane to hold its part for every pass;
// and where the row is read once (`onePass`: nothing held for a later pass, nothing written per
// element), rows up to 4096 elements when they are many enough to give each SM 32 warps. A block
// per row of 4096 spent as many instructions on its block-wide merge (two shuffle trees, shared
// memory, three barriers) as on the row's 16 elements per thread: cross-entropy's one-pass
// log-sum-exp over 32768 rows of 4096 took 0.267 ms (48% of the memory floor) with a block a row
// and 0.197 ms (65%) with a warp, on an H200 (bench/results/reductions_2026-11-29_h200). Rows of
// 8192 with three inputs (level1/99's triplet loss) ran faster by block: 0.785 ms against 0.823.
bool warpPerRow(const FusedKernel& kernel, bool onePass);

// Lanes of a warp that take one row of a warpPerRow kernel: a power of two from 2 to 32, about four
// 16-byte chunks each. A row of 64 floats on a whole warp left half its lanes idle, had one load in
// flight per row and spent five shuffle steps on 256 bytes (level2/25's minimum over 64 channels of
// an NHWC tensor ran at 0.75 TB/s on an H200, Inductor's at 2.4); on 4 lanes, 8 rows share a warp.
int lanesPerRow(const FusedKernel& kernel);

// Parts a column reduction (inner() > 1) splits its reduced dim into, a block each, when its
// columns are too few to fill the GPU; 1: not split. Its partial results are sized for the
// captured shape, so its rows stay fixed (RuntimeRows.h).
int64_t splitsColumns(const FusedKernel& kernel);

// An elementwise kernel that reads a tensor across its iteration order: contiguous along another
// dim than the innermost one, as a kernel writing NCHW reads an NHWC activation (a channels-last
// region's last kernel) or a copy to NHWC reads an NCHW input. Read element by element, a warp
// touches 32 sectors for 128 useful bytes; the emitter instead moves tiles through shared
// memory, each tensor read along its own contiguous dim and the outputs written along theirs.
// A tile is 1024 elements: 32x32, or where the inner dim is shorter (the 8 or 16 channels of an
// NHWC copy) as few along it as it has, rounded up to a power of two, and more along `across`, so
// that no thread idles in either pass.
struct TiledTranspose {
  int inner = -1;           // the iteration's innermost dim of more than one element (the outputs' contiguous one)
  int across = -1;          // the dim the staged inputs are contiguous along
  std::vector<int> staged;  // the inputs read through the tiles
  int innerTile = 32;       // elements of a tile along `inner`: 8, 16 or 32
  int acrossTile() const { return 1024 / innerTile; }
};
// The tiling of a flat kernel (no reduction, scan or pooling window), or nothing where no float
// input crosses the order or the two dims are too short (under 8 elements) for a tile to pay.
std::optional<TiledTranspose> tiledTranspose(const FusedKernel& kernel);

}  // namespace stitch::agents::builtin
