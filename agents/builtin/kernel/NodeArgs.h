// Reading an ATen node's name and scalar arguments, shared by the lowering files: the base
// name without namespace and overload, and numbers or None with a fallback.
#pragma once

#include "agents/ir/GraphIR.h"

#include <set>
#include <string>

namespace stitch::agents::builtin {

inline std::string baseName(const std::string& op) {
  std::string s = op.rfind("aten::", 0) == 0 ? op.substr(6) : op;
  return s.substr(0, s.find('.'));
}

inline std::string overload(const std::string& op) {
  auto dot = op.find('.');
  return dot == std::string::npos ? "" : op.substr(dot + 1);
}

inline double number(const Node& node, const std::string& name, double fallback) {
  const Argument* a = node.arg(name);
  if (!a) return fallback;
  return asNumber(a->value).value_or(fallback);
}

inline bool isNone(const Node& node, const std::string& name) {
  const Argument* a = node.arg(name);
  return !a || (!a->tensor && std::holds_alternative<std::monostate>(a->value));
}

// torch.flip's dims as non-negative dims of a tensor of `rank`, or why not (no list, a dim out of
// range): what the kernel builder flips by reading and the planner by writing (placeFlip).
inline Outcome<std::set<int64_t>> flipDims(const Node& node, int64_t rank) {
  const Argument* dimsArg = node.arg("dims");
  const auto dims = dimsArg ? asIntList(dimsArg->value) : std::nullopt;
  if (!dims) return Failure{node.where() + ": flip without a list of dims"};
  std::set<int64_t> flipped;
  for (int64_t d : *dims) {
    if (d < -rank || d >= rank) return Failure{node.where() + ": flip dim " + std::to_string(d) + " out of range"};
    flipped.insert(d < 0 ? d + rank : d);
  }
  return flipped;
}

}  // namespace stitch::agents::builtin
