// The built-in brain's view of a capture (GraphNormalize.cpp and the files Normalizer.h names),
// rewritten on the typed graph: `_unsafe_view` and whole-range slices are views; addmm/baddbmm
// become mm/bmm followed by explicit scale and add nodes; a convolution's bias becomes an add of a
// [C, 1, ...] view after a bias-free convolution. Library calls then carry no epilogue of their
// own, and the planner decides where each epilogue op runs (the library's epilogue or a fused
// generated kernel). The LLM brain reads the capture as it is: the operators the user's code
// really issued.
#pragma once

#include "agents/ir/GraphIR.h"

namespace stitch::agents::builtin {

void normalizeGraph(Graph& g);

// The capture as the built-in brain plans it: parsed, then normalized.
Outcome<Graph> parseNormalized(const nlohmann::json& capture);

// The same as stitchcuda.graph/1 JSON (writeGraph), for the readers of the capture's JSON (the
// coverage bench's cost estimate, normalize_graph). A capture the rewrites leave as it is comes
// back as it was given, and one that does not parse too (parseGraph says what does not fit).
nlohmann::json normalizeGraph(const nlohmann::json& capture);

}  // namespace stitch::agents::builtin
