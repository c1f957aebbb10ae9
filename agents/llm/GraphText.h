// The facts the prompts carry, as compact text a model reads well: the captured graph one node
// per line, the reference's time per source line, the source with line numbers, the hardware.
#pragma once

#include "agents/ir/GraphIR.h"

#include <map>
#include <set>
#include <string>

namespace stitch::agents::llm {

// "n3 aten::mul.Tensor(self=x:f32[2048,4096], other=y:f32[2048,4096]) -> t5:f32[2048,4096]  @line 12"
std::string graphText(const builtin::Graph& graph);
// The compute ops of the graph, spelled as captured (what a plan must cover).
std::set<std::string> computeOperators(const builtin::Graph& graph);
std::string lineTimesText(const std::map<int, double>& lineTimesUs, bool gpu);
std::string numberedSource(const std::string& source);
std::string hardwareText(bool gpu);

}  // namespace stitch::agents::llm
