// The built-in Coder (design §6, §8): turns a whole-forward plan into a fast-path candidate —
// one `.cu` implementing the C ABI (one launch per fused kernel, all on the caller's stream)
// and a thin Python ModelNew that only allocates and makes one library call per forward.
#pragma once

#include "agents/builtin/CudaEmitter.h"
#include "agents/builtin/ForwardSource.h"
#include "agents/builtin/Planner.h"

namespace stitch::agents::builtin {

struct CandidateSource {
  std::string cuda;    // candidate.cu
  std::string python;  // model_new.py
  std::vector<std::string> slots;  // the ABI's tensor order, as Python expressions
};

// Fails (saying why) when the plan does not cover the whole forward or a tensor the ABI needs
// cannot be named from Python.
Outcome<CandidateSource> generateCandidate(const Graph& graph, const Plan& plan, const ForwardSource& forward,
                                           const Variant& variant, const std::string& title);

// The user's forward body rewritten to call the built library at `libraryPath`: the text of a
// candidate's edit (its range is the body's lines).
std::string forwardReplacement(const Graph& graph, const Plan& plan, const ForwardSource& forward,
                               const std::string& libraryPath);

}  // namespace stitch::agents::builtin
