// The fill family: tensors of one value that read nothing but their size (zeros_like, full, ...).
// KernelBuilder::lowerFill writes the entry's value over the result's shape.
#include "agents/builtin/kernel/NodeArgs.h"
#include "agents/builtin/ops/Families.h"

namespace stitch::agents::builtin::ops {
namespace {

void add(Registry& r, const std::string& name, std::function<double(const Node&)> value, const std::string& test) {
  OpDef d{name, Family::Fill};
  d.fillValue = std::move(value);
  d.tests = {{"torch.ops.aten." + name + ".default(" + test + ")"}};
  r.ops.push_back(std::move(d));
}

}  // namespace

// Tests on the [6, 43] input of ops_on_cpu.py, the factories placed on its device.
void addFillOps(Registry& r) {
  auto zero = [](const Node&) { return 0.0; };
  auto one = [](const Node&) { return 1.0; };
  auto given = [](const Node& node) { return number(node, "fill_value", 0.0); };
  add(r, "zeros_like", zero, "x0");
  add(r, "ones_like", one, "x0");
  add(r, "full_like", given, "x0, 2.5");
  add(r, "zeros", zero, "[6, 43], device=x0.device");
  add(r, "ones", one, "[6, 43], device=x0.device");
  add(r, "full", given, "[6, 43], -1.5, device=x0.device");
  add(r, "new_zeros", zero, "x0, [6, 43]");
  add(r, "new_ones", one, "x0, [6, 43]");
  add(r, "new_full", given, "x0, [6, 43], 0.25");
}

}  // namespace stitch::agents::builtin::ops
