// Reading an ATen node's name and scalar arguments, shared by the lowering files: the base
// name without namespace and overload, and numbers or None with a fallback.
#pragma once

#include "agents/ir/GraphIR.h"

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

}  // namespace stitch::agents::builtin
