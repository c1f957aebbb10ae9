// The library family: operators a library call runs (LibraryCall.cpp lowers them to cuBLASLt and
// cuDNN; their numbers are checked by the conv and GEMM suites, not by a generated kernel). Listed
// here for their cost kind, which the coverage bench and the harness's precision guard read.
#include "agents/builtin/ops/Families.h"

namespace stitch::agents::builtin::ops {

void addLibraryOps(Registry& r) {
  for (const char* name : {"mm", "addmm", "bmm", "baddbmm", "addbmm", "matmul", "linear"})
    r.ops.push_back(OpDef{name, Family::Library, CostKind::Gemm});
  for (const char* name : {"convolution", "_convolution", "mkldnn_convolution", "slow_conv3d_forward",
                           "_slow_conv2d_forward", "slow_conv_transpose2d", "slow_conv_transpose3d"})
    r.ops.push_back(OpDef{name, Family::Library, CostKind::Convolution});
}

}  // namespace stitch::agents::builtin::ops
