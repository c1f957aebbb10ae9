// The channels-last layout (NHWC, NDHWC) as strides: what the layout pass (plan/MemoryFormat.h)
// assigns and a library call (lower/LibraryCall.h) reads off its operands.
#pragma once

#include "agents/ir/GraphIR.h"

#include <cstdint>
#include <vector>

namespace stitch::agents::builtin {

// The strides of a dense channels-last tensor of `shape` (rank 4 or 5: channels innermost).
std::vector<int64_t> channelsLastStrides(const std::vector<int64_t>& shape);
bool isChannelsLast(const TensorInfo& t);

}  // namespace stitch::agents::builtin
