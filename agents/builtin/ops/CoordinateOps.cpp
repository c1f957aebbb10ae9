// The coordinate family: elementwise by the element's coordinates rather than by its value alone
// (triangles, constant padding, flips, a table's rows chosen by an index). Each reads its input
// from outside the kernel: a value the open kernel computes is written first and read so by the
// next kernel. KernelBuilder::lowerCoordinate builds the entry's CoordinateKind.
#include "agents/builtin/ops/Families.h"

namespace stitch::agents::builtin::ops {
namespace {

// `tests`: each call's overload and arguments, after `torch.ops.aten.<name>.`.
void add(Registry& r, const std::string& name, CoordinateDef def, std::vector<OpTest> tests) {
  OpDef d{name, Family::Coordinate};
  d.coordinate = std::move(def);
  for (OpTest& t : tests) t.call = "torch.ops.aten." + name + "." + t.call;
  d.tests = std::move(tests);
  r.ops.push_back(std::move(d));
}

}  // namespace

// Tests on the [6, 43] inputs of ops_on_cpu.py; the indices are a row's argmax (int64, in [0, 43)),
// which pick rows of the transposed [43, 6] input.
void addCoordinateOps(Registry& r) {
  add(r, "triu", {CoordinateKind::Triangle, "self", true}, {{"default(x0, 1)"}, {"default(x0)"}});
  add(r, "tril", {CoordinateKind::Triangle, "self", false}, {{"default(x0, -1)"}, {"default(x0)"}});
  add(r, "constant_pad_nd", {CoordinateKind::Pad}, {{"default(x0, [1, 2, 3, 0], 0.5)"}, {"default(x0, [2, 2])"}});
  add(r, "flip", {CoordinateKind::Flip}, {{"default(x0, [0, 1])"}, {"default(x0, [-1])"}});
  const std::vector<Domain> tableAndIndex{Domain::Real, Domain::Real};
  add(r, "embedding", {CoordinateKind::Gather, "weight"}, {{"default(x0.t(), x1.argmax(1))", tableAndIndex}});
  add(r, "index", {CoordinateKind::Gather}, {{"Tensor(x0.t(), [x1.argmax(1)])", tableAndIndex}});
}

}  // namespace stitch::agents::builtin::ops
