// The batch as a run-time parameter of a generated program (design §6). The capture records the
// forward a second time on half the batch where every row is computed from itself alone
// (graph_capture.batch_probe); planned the same way, that graph gives the same kernels and library
// calls but for numbers that scale with the rows. Where that holds for every step, the program takes
// the rows from its tensors at each call: each kernel's dim 0, each GEMM's rows (or batch count)
// and each convolution's images are computed from them, the host checks accept any rows, and ModelNew allocates for them.
#pragma once

#include "agents/builtin/plan/Planner.h"

#include <string>

namespace stitch::agents::builtin {

// Sets `plan.rows` and the per-row sizes of its kernels (FusedKernel::perRow, GemmCall::mPerRow /
// batchPerRow, ConvCall::nPerRow) where `half`, planned from `halfGraph` (the capture at half of `graph`'s rows), is
// `plan` with its rows scaled; otherwise sets `plan.fixedRowsWhy`. Either way the plan's kernels
// are otherwise unchanged.
void makeRowsRuntime(Plan& plan, const Graph& graph, const Plan& half, const Graph& halfGraph);

// makeRowsRuntime with the half-batch capture that `captured` (the graph JSON as the harness sent
// it, before normalizeGraph) carries in batch.graph, planned with `lineTimesUs` and `options` as
// `plan` was; nothing where it carries none.
void planRows(Plan& plan, const Graph& graph, const nlohmann::json& captured, const std::map<int, double>& lineTimesUs,
              const PlannerOptions& options);

// Whether some step of `plan` writes module state (a parameter or buffer, as training-mode batch
// norm's running statistics): a call on part of the batch would then update it once per part.
bool writesModuleState(const Graph& graph, const Plan& plan);

// Whether a reduction kernel may split its rows over several blocks (few long rows, or a column
// reduction's reduced dim over few columns): its
// partial results are then sized for the captured rows, so its rows stay fixed.
bool maySplitRows(const FusedKernel& kernel);

}  // namespace stitch::agents::builtin
