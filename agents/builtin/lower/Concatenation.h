// cat and stack as layout (design §8): where each input (a piece) lies in the result. The planner
// has the kernel that computes a piece write it straight into its slice of the result, or copies
// the piece there; a kernel that reads the result without it being written reads each element
// from its piece (ValueOp::Concat).
#pragma once

#include "agents/builtin/kernel/FusedKernel.h"
#include "agents/builtin/ops/OpClass.h"

#include <cstdint>
#include <string>
#include <vector>

namespace stitch::agents::builtin {

struct ConcatPiece {
  std::string tensorId;
  int64_t begin = 0, end = 0;    // its range along the result's concatenated dim
  std::vector<int64_t> strides;  // per dim of the piece: its slice of the result, contiguous as the
  int64_t offset = 0;            // generated buffers are; offset in elements from the result's start
};

struct Concatenation {
  std::string result;
  int dim = 0;         // the result's concatenated dim
  bool stack = false;  // stack: each piece is one index of `dim`, which the pieces do not have
  std::vector<ConcatPiece> pieces;  // the non-empty inputs, in order
};

// The pieces of an aten::cat or aten::stack node, or why the generated kernels do not take it
// (a dtype other than float32, a tensor list the capture did not record).
Outcome<Concatenation> concatenation(const Graph& graph, const Node& node);

// `piece` copied into its slice of the result: one thread per element of the piece, read through
// its own strides (a view of a forward input, a library call's output).
Outcome<FusedKernel> copyIntoSlice(const Graph& graph, const Concatenation& cat, const ConcatPiece& piece);

// `out` (a kernel's output of the piece) redirected into the piece's slice of the result.
KernelOutput intoSlice(KernelOutput out, const Concatenation& cat, const ConcatPiece& piece);

}  // namespace stitch::agents::builtin
