// The editor's profile (protocol::ProfileParams, streamed as stitchcuda/profile and rendered as
// hovers and inline text by the server): per line of the user's file, GPU time, share of the
// forward, bound and achieved % of the measured ceiling, top warp stall and the kernels behind
// it — for the reference (from profileReference plus the kernel map) and for a candidate (its
// kernels placed on the user lines it replaces).
#pragma once

#include "profiling/KernelSourceMap.h"
#include "profiling/ReferenceProfile.h"
#include "profiling/Roofline.h"
#include "protocol/StitchTypes.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stitch::profiling {

struct InlinePolicy {
  double minShare = 0.05;   // lines under this share of the forward get no inline text
  std::size_t lines = 5;    // at most this many lines get inline text
};

// `kernels`: mapKernelsToSource over the reference's profileTrace (+ ncu), or empty when only
// profileReference ran; lines then list their operators and carry no bound.
protocol::ProfileParams referenceProfileParams(const std::string& jobId, const std::string& uri,
                                               const ReferenceProfile& reference,
                                               const std::vector<SourceKernel>& kernels,
                                               const std::optional<Ceilings>& ceilings, InlinePolicy policy = {});

// Where a candidate's kernels land in the user's file: each kernel (by kernelKey) on the user
// line whose operators it covers, when the Coder knows it; otherwise on `anchorLine`
// (zero-based: the first line of the range the candidate replaces).
struct CandidatePlacement {
  int anchorLine = 0;
  std::map<std::string, int> kernelLines;
};

protocol::ProfileParams candidateProfileParams(const std::string& jobId, const std::string& uri,
                                               const std::string& candidateId,
                                               const std::vector<SourceKernel>& kernels,
                                               const CandidatePlacement& placement,
                                               const std::optional<Ceilings>& ceilings, InlinePolicy policy = {});

}  // namespace stitch::profiling
