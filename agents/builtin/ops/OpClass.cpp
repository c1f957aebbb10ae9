// Operator classes from the registry; see OpClass.h.
#include "agents/builtin/ops/OpClass.h"

#include "agents/builtin/kernel/NodeArgs.h"
#include "agents/builtin/ops/OpDef.h"

namespace stitch::agents::builtin {

bool isConcatenation(const std::string& op) {
  const std::string b = baseName(op);
  return b == "cat" || b == "stack" || b == "concat" || b == "concatenate";
}

OpClass classifyOp(const std::string& op) {
  const std::string b = baseName(op);
  if (b == "copy_") return OpClass::Elementwise;  // only as a write-back (writeBackTarget)
  if (ops::inFamily(op, ops::Family::View)) return OpClass::View;
  if (isConcatenation(op)) return OpClass::Concatenation;
  // scalar_tensor holds the number it is given (`torch.where(c, x, 0.0)`): a kernel reads the number.
  if (b == "empty" || b == "empty_like" || b == "empty_strided" || b == "new_empty" || b == "scalar_tensor")
    return OpClass::Allocation;
  if (ops::inFamily(op, ops::Family::Unary) || ops::inFamily(op, ops::Family::Binary) || ops::inFamily(op, ops::Family::Fill) ||
      ops::inFamily(op, ops::Family::Coordinate))
    return OpClass::Elementwise;
  if (const ops::OpDef* d = ops::findOp(op); d && (d->reduce || d->composite)) return OpClass::Reduction;
  return OpClass::Unsupported;
}

}  // namespace stitch::agents::builtin
