// The built-in Coder (design §6, §8): turns a plan into a fast-path candidate — one `.cu`
// implementing the C ABI (one launch per fused kernel, all on the caller's stream) and a thin
// Python ModelNew that constructs itself as Model does, allocates, and makes one library call per
// compiled segment. A plan that leaves operators in PyTorch gives a partial candidate: the
// forward issues those operators (through torch.ops, as captured) between the segments and
// declares them in STITCH_PYTORCH_OPS.
#pragma once

#include "agents/builtin/emit/CudaEmitter.h"
#include "agents/builtin/emit/ForwardSource.h"
#include "agents/builtin/plan/Planner.h"
#include "agents/program/ProgramFiles.h"

#include <optional>

namespace stitch::agents::builtin {

// Marker lines in candidate.cu: the end of the prelude every kernel needs, and each generated
// kernel's block (its device code and its launcher `static int <launcher>(const StitchTensor*,
// int64_t, cudaStream_t)`), which nothing outside the block names but the host entry's call of the
// launcher. The build splits the file there into translation units compiled in parallel.
inline constexpr const char* kSharedEnd = "// stitch:shared-end";
inline constexpr const char* kKernelBegin = "// stitch:kernel";
inline constexpr const char* kKernelEnd = "// stitch:kernel-end";

struct CandidateSource {
  std::string cuda;    // candidate.cu
  std::string python;  // model_new.py
  std::vector<std::string> slots;  // the ABI's tensor order, as Python expressions
};

// Fails (saying why) when the plan has no compiled step or a tensor cannot be named from Python.
Outcome<CandidateSource> generateCandidate(const Graph& graph, const Plan& plan, const ForwardSource& forward,
                                           const Variant& variant, const std::string& title);

// The user's forward body rewritten to run the program `program` (agents/program) where the inputs
// are those it was generated for, and the original body, kept below, for inputs of other shapes:
// the text of a candidate's edit (its range is the body's lines).
std::string forwardReplacement(const Graph& graph, const Plan& plan, const ForwardSource& forward,
                               const program::ProgramNames& program, std::optional<double> speedupEager = std::nullopt);

}  // namespace stitch::agents::builtin
