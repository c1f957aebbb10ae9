// The composite family: operators lowered into several kernel values (reductions, windows, scans
// and the elementwise steps around them) by KernelBuilder's CompositeLowering.cpp, each by the
// lowering its entry names (CompositeDef.h) so that they fuse with what surrounds them.
#include "agents/builtin/ops/Families.h"

namespace stitch::agents::builtin::ops {
namespace {

// `tests`: each call's overload and arguments, after `torch.ops.aten.<name>.`.
OpDef& add(Registry& r, const std::string& name, Composite lowering, std::vector<OpTest> tests) {
  OpDef d{name, Family::Composite};
  d.composite = std::move(lowering);
  for (OpTest& t : tests) t.call = "torch.ops.aten." + name + "." + t.call;
  d.tests = std::move(tests);
  r.ops.push_back(std::move(d));
  return r.ops.back();
}

// Functions, not namespace-scope constants: the registry may be built during another file's static
// initialization, before this file's constants would be.
std::vector<Domain> two() { return {Domain::Real, Domain::Real}; }
std::vector<Domain> statistics() { return {Domain::Real, Domain::Real, Domain::Positive}; }  // running_var > 0

void addReductions(Registry& r) {
  add(r, "any", AnyAll{ReduceKind::Max}, {{"dim(x0, 1)", {Domain::Mask}}, {"default(x0)", {Domain::Mask}}});
  add(r, "all", AnyAll{ReduceKind::Min}, {{"dim(x0, 0, True)", {Domain::Mask}}, {"default(x0)", {Domain::Mask}}});
  add(r, "linalg_vector_norm", VectorNorm{"ord"},
      {{"default(x0)"}, {"default(x0, 3.0, [1])"}, {"default(x0, 1, [0], True)"}, {"default(x0, 0, [1])"}});
  add(r, "norm", VectorNorm{"p"}, {{"Scalar(x0)"}, {"ScalarOpt_dim(x0, 1, [1])"}});
  add(r, "cumsum", Scan{ReduceKind::Sum}, {{"default(x0, 1)"}, {"default(x0, -2)"}});
  // Over the 6 rows: a product of 43 normal values leaves float32's range.
  add(r, "cumprod", Scan{ReduceKind::Prod}, {{"default(x0, 0)"}});
}

// l1_loss and kl_div decompose before dispatch (into sub, abs, mean; into mul, xlogy, ...), and
// nll_loss into nll_loss_forward: their tests capture those nodes.
void addLosses(Registry& r) {
  add(r, "mse_loss", Loss{LossTerms::Squared},
      {{"default(x0, x1)", two()}, {"default(x0, x1, 0)", two()}, {"default(x0, x1, 2)", two()}});
  add(r, "l1_loss", Loss{LossTerms::Absolute}, {{"default(x0, x1)", two()}});
  add(r, "smooth_l1_loss", Loss{LossTerms::SmoothL1}, {{"default(x0, x1)", two()}, {"default(x0, x1, 2, 0.5)", two()}});
  add(r, "huber_loss", Loss{LossTerms::Huber}, {{"default(x0, x1)", two()}, {"default(x0, x1, 0, 2.0)", two()}});
  add(r, "binary_cross_entropy", Loss{LossTerms::BinaryCrossEntropy},
      {{"default(torch.sigmoid(x0), torch.sigmoid(x1))", two()}});
  add(r, "kl_div", Loss{LossTerms::KlDiv}, {{"default(x0, x1.exp())", two()}, {"default(x0, x1, log_target=True)", two()}});
  add(r, "nll_loss_forward", NllLoss{},
      {{"default(x0, x1.argmax(1), None, 1, -100)[0]", two()}, {"default(x0, x1.argmax(1), None, 2, 5)[0]", two()}});
  add(r, "nll_loss", NllLoss{}, {{"default(x0, x1.argmax(1))", two()}});
}

// Inference on [6, 43] (43 channels), training on [1, 6, 43] (6 channels, a batch of one); the
// statistics and affine parameters are rows of x1 and x2. _native_batch_norm_legit (torch 2.0),
// _native_batch_norm_legit_no_training (2.1) and _batch_norm_no_update (2.4) are not in every
// torch, and cudnn_batch_norm runs on CUDA only: ops_on_cpu.py runs their tests where it can.
void addNorms(Registry& r) {
  add(r, "native_batch_norm", BatchNorm{false},
      {{"default(x0, x1[0], x1[1], x1[2], x2[0], False, 0.1, 1e-5)[0]", statistics()},
       {"default(x0[None], None, None, None, None, True, 0.1, 1e-3)[0]"}});
  add(r, "_native_batch_norm_legit", BatchNorm{false},
      {{"no_stats(x0[None], x1[0, :6], x1[1, :6], True, 0.1, 1e-5)[0]", two()}});
  add(r, "_native_batch_norm_legit_no_training", BatchNorm{true},
      {{"default(x0, x1[0], x1[1], x1[2], x2[0], 0.1, 1e-5)[0]", statistics()}});
  add(r, "_batch_norm_no_update", BatchNorm{true}, {{"default(x0, x1[0], x1[1], x1[2], x2[0], 0.1, 1e-5)[0]", statistics()}});
  add(r, "cudnn_batch_norm", BatchNorm{false}, {{"default(x0, x1[0], x1[1], x1[2], x2[0], False, 0.1, 1e-5)[0]", statistics()}});
  add(r, "native_group_norm", GroupNorm{},
      {{"default(x0[..., None], None, None, 6, 43, 1, 1, 1e-5)[0]"},
       {"default(x0[None], x1[0, :6], x1[1, :6], 1, 6, 43, 3, 1e-5)[0]", two()}});
}

// Over [6, 43] as (C, L), [1, 6, 43] as (N, C, W) and [1, 1, 6, 43]. max_pool1d, max_pool2d and
// max_pool1d_with_indices capture as max_pool2d_with_indices, max_pool3d as its _with_indices
// form, avg_pool1d as avg_pool2d: they decompose before dispatch.
void addPools(Registry& r) {
  add(r, "max_pool1d", Pool{1, true}, {{"default(x0, [3])"}});
  add(r, "max_pool2d", Pool{2, true}, {{"default(x0[None], [2, 3])"}});
  add(r, "max_pool3d", Pool{3, true}, {{"default(x0[None, None], [1, 2, 3])"}});
  add(r, "max_pool1d_with_indices", Pool{1, true}, {{"default(x0, [3])[0]"}});
  add(r, "max_pool2d_with_indices", Pool{2, true},
      {{"default(x0[None], [2, 3])[0]"}, {"default(x0[None], [3, 3], [2, 2], [1, 1], [1, 2])[0]"}});
  add(r, "max_pool3d_with_indices", Pool{3, true}, {{"default(x0[None, None], [1, 2, 3])[0]"}});
  add(r, "avg_pool1d", Pool{1, false}, {{"default(x0, [3])"}});
  add(r, "avg_pool2d", Pool{2, false}, {{"default(x0[None], [2, 3])"}, {"default(x0[None], [3, 3], [2, 2], [1, 1], False, False)"}});
  add(r, "avg_pool3d", Pool{3, false}, {{"default(x0[None, None], [1, 2, 3])"}});
}

}  // namespace

void addCompositeOps(Registry& r) {
  addReductions(r);
  addLosses(r);
  addNorms(r);
  addPools(r);
}

}  // namespace stitch::agents::builtin::ops
