// The built-in brain's view of a capture (GraphNormalize.cpp), applied before parseGraph:
// `_unsafe_view` and whole-range slices are views; addmm/baddbmm become mm/bmm followed by
// explicit scale and add nodes; a convolution's bias becomes an add of a [C, 1, ...] view after a
// bias-free convolution. Library calls then carry no epilogue of their own, and the planner
// decides where each epilogue op runs (the library's epilogue or a fused generated kernel). The
// LLM brain reads the capture as it is: the operators the user's code really issued.
#pragma once

#include "agents/ir/GraphIR.h"

namespace stitch::agents::builtin {

nlohmann::json normalizeGraph(nlohmann::json graph);

}  // namespace stitch::agents::builtin
