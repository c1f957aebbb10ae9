// The view family: layout without data movement. A view of a tensor a kernel reads from outside
// is read through the view's strides and offset; of a value the open kernel computes, it is the
// same value where only size-1 dims are added or removed, and otherwise closes the kernel (the
// value is written and the next kernel reads it through the view). split, chunk and unbind return
// a list of such views, each of which GraphNormalize makes a view of `self`.
#include "agents/builtin/ops/Families.h"

namespace stitch::agents::builtin::ops {
namespace {

void add(Registry& r, const std::string& name, ViewKind kind, const std::vector<std::string>& calls) {
  OpDef d{name, Family::View};
  d.view = kind;
  for (const std::string& call : calls) d.tests.push_back({"torch.ops.aten." + name + "." + call});
  r.ops.push_back(std::move(d));
}

}  // namespace

// Tests on the [6, 43] input of ops_on_cpu.py. reshape and flatten capture as _reshape_alias,
// narrow and tensor_split as slice, chunk and unsafe_chunk as their split: they decompose before
// dispatch.
void addViewOps(Registry& r) {
  add(r, "view", ViewKind::Reshape, {"default(x0, [43, 6])"});
  add(r, "_unsafe_view", ViewKind::Reshape, {"default(x0, [2, 129])"});
  add(r, "reshape", ViewKind::Reshape, {"default(x0, [3, 86])"});
  add(r, "_reshape_alias", ViewKind::Reshape, {"default(x0, [43, 6], [1, 43])"});
  add(r, "flatten", ViewKind::Reshape, {"using_ints(x0[None], 0, 1)"});
  add(r, "unsqueeze", ViewKind::Reshape, {"default(x0, 1)"});
  add(r, "squeeze", ViewKind::Reshape, {"dim(x0[None], 0)", "default(x0[:, None])"});
  add(r, "expand", ViewKind::Reshape, {"default(x0[:1], [4, 43])"});
  add(r, "transpose", ViewKind::Permute, {"int(x0, 0, 1)"});
  add(r, "permute", ViewKind::Permute, {"default(x0, [1, 0])"});
  add(r, "t", ViewKind::Permute, {"default(x0)"});
  add(r, "slice", ViewKind::Part, {"Tensor(x0, 1, 2, 40, 3)"});
  add(r, "select", ViewKind::Part, {"int(x0, 1, 5)"});
  add(r, "narrow", ViewKind::Part, {"default(x0, 1, 3, 20)"});
  add(r, "split", ViewKind::Part, {"Tensor(x0, 10, 1)[2]"});
  add(r, "split_with_sizes", ViewKind::Part, {"default(x0, [20, 23], 1)[1]"});
  add(r, "chunk", ViewKind::Part, {"default(x0, 3, 1)[1]"});
  add(r, "unbind", ViewKind::Part, {"int(x0)[3]"});
  add(r, "tensor_split", ViewKind::Part, {"sections(x0, 3, 1)[2]"});
  add(r, "unsafe_split", ViewKind::Part, {"Tensor(x0, 10, 1)[2]"});
  add(r, "unsafe_split_with_sizes", ViewKind::Part, {"default(x0, [20, 23], 1)[1]"});
  add(r, "unsafe_chunk", ViewKind::Part, {"default(x0, 3, 1)[1]"});
  add(r, "unfold", ViewKind::Part, {"default(x0, 1, 5, 2)"});
}

}  // namespace stitch::agents::builtin::ops
