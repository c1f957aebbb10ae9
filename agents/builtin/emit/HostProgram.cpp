// The entry points; see HostProgram.h. The segments' CUDA-graph replay is cuda/Segment*.cuh.
#include "agents/builtin/emit/HostProgram.h"

#include "agents/builtin/cuda/EmbeddedCuda.h"

#include <algorithm>
#include <sstream>

namespace stitch::agents::builtin {

std::string emitHostEntry(const std::vector<SegmentEntry>& segments) {
  std::ostringstream o;
  std::size_t most = 1;
  for (const auto& s : segments) most = std::max(most, s.slots);
  o << "#define SC_MAX_SLOTS " << most << "\n";
  for (std::size_t i = 0; i < segments.size(); ++i) {
    o << "\nstatic int sc_run_" << i << "(const StitchTensor* t, int64_t rows, cudaStream_t stream) {\n  int status = 0;\n";
    for (const auto& l : segments[i].launchers)
      o << "  if ((status = " << l << "(t, rows, stream)) != 0) return status;\n";
    o << "  return 0;\n}\n";
  }
  const bool replay = std::any_of(segments.begin(), segments.end(), [](const SegmentEntry& s) { return s.replay; });
  o << cuda::kSegment << (replay ? cuda::kSegmentReplay : cuda::kSegmentDirect) << "\nstatic sc_segment sc_segments[" << segments.size() << "] = {";
  for (std::size_t i = 0; i < segments.size(); ++i)
    o << (i ? ", " : "") << "{sc_run_" << i << ", " << segments[i].slots << ", " << (segments[i].replay ? "true" : "false")
      << "}";
  o << "};\n\nextern \"C\" int stitch_segment(int32_t s, const StitchTensor* t, int32_t n, cudaStream_t stream) {\n"
    << "  int64_t rows = 0;  // the call's rows, where the checks take them from its tensors\n  switch (s) {\n";
  for (std::size_t i = 0; i < segments.size(); ++i)
    o << "    case " << i << ": {\n      if (n != " << segments[i].slots << ") return (int)cudaErrorInvalidValue;\n"
      << segments[i].checks << "      break;\n    }\n";
  o << "    default: return (int)cudaErrorInvalidValue;\n  }\n  return sc_call(&sc_segments[s], t, rows, stream);\n}\n";
  if (segments.size() == 1)
    o << "\nextern \"C\" int stitch_forward(const StitchTensor* t, int32_t n, cudaStream_t stream) {\n"
      << "  return stitch_segment(0, t, n, stream);\n}\n";
  return o.str();
}

}  // namespace stitch::agents::builtin
