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
  for (const char* name : {"_convolution", "mkldnn_convolution", "slow_conv3d_forward", "_slow_conv2d_forward",
                           "slow_conv_transpose2d", "slow_conv_transpose3d"})
    add(r, name, CostKind::Convolution);
}

}  // namespace stitch::agents::builtin::ops
