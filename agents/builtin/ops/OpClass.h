// What the brain can generate for an ATen operator, by the registry's families: the first question
// the normalization (is a functional form lowered?), the kernel builder and the planner ask.
#pragma once

#include <string>

namespace stitch::agents::builtin {

// Allocation: aten::empty and kin, whose uninitialized result moves no data (batch norm makes one
// it never reads). Concatenation: cat and stack (lower/Concatenation.h).
enum class OpClass { Elementwise, Reduction, View, Allocation, Concatenation, Unsupported };
OpClass classifyOp(const std::string& op);

bool isConcatenation(const std::string& op);

}  // namespace stitch::agents::builtin
