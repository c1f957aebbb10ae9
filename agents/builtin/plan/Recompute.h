// Computing a cheap elementwise producer again where it is read instead of writing it (issue 32).
// A convolution's bias add that a training BatchNorm's statistics and its normalization both read
// was a kernel of its own, written and read back twice (level2/73), where Inductor computes it in
// both readers from the convolution's output. The planner holds such a kernel back; each reader's
// kernel takes the producer's nodes as its prologue and computes the elements from the producer's
// inputs, which are no larger than what it would have read. Where a reader's kernel cannot take
// them, the held-back kernel is planned after all, before that reader. A producer that calls math
// functions stays a kernel of its own: computing it is what its time goes to (Recompute.cpp).
#pragma once

#include "agents/builtin/kernel/FusedKernel.h"
#include "agents/ir/GraphIR.h"

#include <vector>

namespace stitch::agents::builtin {

// Whether `kernel` (the finished kernel of `nodeIds`) may be held back for its readers to compute:
// it only maps elements (no reduction, window, scan, gather or concatenation) by arithmetic,
// comparisons, min, max and magnitudes (no math function: exp, tanh, an activation), writes no
// module state, reads no more bytes than it writes (small broadcast parameters aside), has few
// operators, and each tensor it writes is an intermediate that at most four nodes read, all
// directly (not through views) and all of a kind a generated kernel takes (elementwise or
// reduction operators, no library call, pooling window or concatenation). Its inputs are tensors
// no node writes back into, so each reader finds the values the producer would have read.
bool recomputable(const Graph& graph, const FusedKernel& kernel, const std::vector<int>& nodeIds);

}  // namespace stitch::agents::builtin
