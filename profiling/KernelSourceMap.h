// Source mapping (design §10): each kernel of one forward -> the operators that launched it ->
// the line of the profiled file, from the PyTorch trace; Nsight Compute's metrics joined to
// those kernels by launch order and kernel name (ncu profiles one forward in the same order).
#pragma once

#include "profiling/KernelMetrics.h"
#include "profiling/TorchTrace.h"

#include <optional>
#include <string>
#include <vector>

namespace stitch::profiling {

struct SourceKernel {
  std::string name;                  // as the trace names it
  std::vector<std::string> ops;      // outermost first; empty for a direct launch (a candidate's library)
  std::optional<int> line;           // one-based line of the profiled file
  double gpuUs = 0;                  // mean over the trace's forwards
  std::optional<KernelMetrics> metrics;  // ncu's, when one matched
};

// "void at::native::vectorized_elementwise_kernel<4, ...>(int, ...)" -> "vectorized_elementwise_kernel":
// the trace (CUPTI) and ncu spell templates and namespaces differently; the base name agrees.
std::string kernelKey(const std::string& demangled);

// The kernels of one forward (the trace's first) with their mean time over all forwards, and
// `ncu` (one forward, launch order) attached where the base names line up.
std::vector<SourceKernel> mapKernelsToSource(const TraceSummary& trace, const std::vector<KernelMetrics>& ncu);

// What the Verifier's rules read for each kernel: ncu's metrics where they matched, otherwise
// the kernel's name and its trace time alone (the rules then fall back to what timing can say).
std::vector<KernelMetrics> kernelMetricsOf(const std::vector<SourceKernel>& kernels);

// Display name: namespaces, templates and parameters dropped, at most 60 characters.
std::string shortKernelName(const std::string& demangled);

}  // namespace stitch::profiling
