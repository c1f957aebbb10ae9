// Layout as a whole-program decision (design §8): which tensors of a convolution network run
// channels-last (NHWC, NDHWC), where the conversions go, and the order generated kernels iterate
// in for that layout. The pass rewrites the normalized graph's strides before planning; every
// later stage reads layout as strides, so the cuDNN calls, the generated kernels and the buffers
// ModelNew makes all follow what it assigns.
#pragma once

#include "agents/builtin/kernel/ChannelsLast.h"
#include "agents/builtin/plan/Planner.h"

#include <nlohmann/json.hpp>

namespace stitch::agents::builtin {

// Why convolution `node` keeps NCHW whatever its network does, or "" where it runs channels-last
// when its region does: the one policy to tune by measurement (bench/run_selected.sh with
// --layout nchw and --layout channels_last).
std::string whyNotChannelsLast(const Graph& graph, const Node& node, const PlannerOptions& options);
bool convolutionPrefersChannelsLast(const Graph& graph, const Node& node, const PlannerOptions& options);
// Whether a connected region of activations around `convolutions` such convolutions runs
// channels-last, where `copiedInputs` of the activations they read come from outside it (copies).
bool regionWorthChannelsLast(int convolutions, int copiedInputs, const PlannerOptions& options);

// `graph` with its memory format chosen: the connected regions of 4-D and 5-D activations between
// convolutions that prefer channels-last get channels-last strides, where every operator that
// produces or reads them reads and writes through strides (elementwise operators, inference batch
// norm, pooling, reductions, the generated depthwise convolution). The forward's inputs, results
// and parameters keep their layout: a convolution reading one reads a channels-last copy (its
// filter always), made by a clone node before it, and a region's last kernels write the forward's
// layout; asked for channels-last (the job or the layout trial), a convolution whose result the
// forward returns as it is writes its own channels-last activation, which a clone node after it
// copies into the result. A region without a convolution that runs channels-last keeps the captured
// layout, so a graph without one is returned as it is.
Graph layOut(Graph graph, const PlannerOptions& options);

// `k` iterating in the memory order of the largest channels-last tensor it writes (else reads),
// so that neighbouring threads touch neighbouring channels: its dims permuted, its reads' strides,
// its values' dim maps and its full-size outputs with them. Unchanged where no channels-last
// tensor is involved, and where the permutation would split its reduced range or reorder its rows.
// A pooling window then slides over dims that are no longer the trailing ones (PoolSpec::windowDims).
FusedKernel inMemoryOrder(FusedKernel k, const Graph& graph);

// A planned graph: the graph laid out and the plan made on it.
struct LaidOutPlan {
  Graph graph;
  Plan plan;
};

// The built-in brain's planning of a parsed, normalized capture: the layout pass, the partition,
// the batch as a run-time parameter (planRows, over `captured`), and the captured layout again
// where a channels-last tensor would reach an operator left in PyTorch (whose results take their
// inputs' layout, which the program does not check for).
LaidOutPlan planLaidOut(const Graph& graph, const nlohmann::json& captured, const std::map<int, double>& lineTimesUs,
                        const PlannerOptions& options);

}  // namespace stitch::agents::builtin
