// What a composite operator lowers to (KernelBuilder's CompositeLowering.cpp): one struct per
// lowering, holding what the lowering would otherwise read from the operator's name. An entry of
// the composite family (CompositeOps.cpp) holds one of them.
#pragma once

#include "agents/builtin/kernel/FusedKernel.h"  // ReduceKind

#include <string>
#include <variant>

namespace stitch::agents::builtin::ops {

// any (ReduceKind::Max of the elements' nonzero) and all (Min).
struct AnyAll {
  ReduceKind kind = ReduceKind::Max;
};
// A vector p-norm; `order` is the argument holding p (linalg_vector_norm's ord, norm's p).
struct VectorNorm {
  std::string order;
};
// A loss's pointwise terms over (self, target), then its `reduction`.
enum class LossTerms { Squared, Absolute, SmoothL1, Huber, BinaryCrossEntropy, KlDiv };
struct Loss {
  LossTerms terms = LossTerms::Squared;
};
// The negated log-probability of each sample's target class.
struct NllLoss {};
// Batch norm over the channel dim 1; `inference`: the overload has no training flag and never
// trains (_native_batch_norm_legit_no_training, _batch_norm_no_update).
struct BatchNorm {
  bool inference = false;
};
struct GroupNorm {};
// Max or average pooling over the trailing `rank` dims.
struct Pool {
  int rank = 2;
  bool max = false;
};
// A depthwise convolution as a weighted pooling window (generatesConvolution).
struct DepthwiseConv {};
// cumsum (ReduceKind::Sum) and cumprod (Prod) along one dim.
struct Scan {
  ReduceKind kind = ReduceKind::Sum;
};

using Composite = std::variant<AnyAll, VectorNorm, Loss, NllLoss, BatchNorm, GroupNorm, Pool, DepthwiseConv, Scan>;

}  // namespace stitch::agents::builtin::ops
