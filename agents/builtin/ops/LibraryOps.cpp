// The library family: operators a library call runs (LibraryCall.cpp lowers them to cuBLASLt and
// cuDNN; their numbers are checked by the conv and GEMM suites, not by a generated kernel). Listed
// here for their cost kind, which the coverage bench and the harness's precision guard read, and
// for the call a node anchors.
#include "agents/builtin/ops/Families.h"

namespace stitch::agents::builtin::ops {
namespace {

void add(Registry& r, const char* name, CostKind cost, LibraryKind library = LibraryKind::None) {
  OpDef d{name, Family::Library, cost};
  d.library = library;
  r.ops.push_back(std::move(d));
}

}  // namespace

// mm, bmm and convolution anchor library calls; normalizeGraph rewrites the others into them.
void addLibraryOps(Registry& r) {
  add(r, "mm", CostKind::Gemm, LibraryKind::Gemm);
  add(r, "addmm", CostKind::Gemm);
  add(r, "bmm", CostKind::Gemm, LibraryKind::BatchedGemm);
  for (const char* name : {"baddbmm", "addbmm", "matmul", "linear"}) add(r, name, CostKind::Gemm);
  add(r, "convolution", CostKind::Convolution, LibraryKind::Convolution);
  // cuDNN runs a convolution; a depthwise one the generated kernels compute as a weighted window
  // (CompositeLowering). Its test: 6 channels of [1, 6, 43], k = 3.
  OpDef& conv = r.ops.back();
  conv.composite = DepthwiseConv{};
  conv.tests = {{"torch.ops.aten.convolution.default(x0[None], x1[:, None, :3], None, [1], [1], [1], False, [0], 6)",
                 {Domain::Real, Domain::Real}}};
  for (const char* name : {"_convolution", "mkldnn_convolution", "slow_conv3d_forward", "_slow_conv2d_forward",
                           "slow_conv_transpose2d", "slow_conv_transpose3d"})
    add(r, name, CostKind::Convolution);
}

}  // namespace stitch::agents::builtin::ops
