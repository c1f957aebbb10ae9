// Nsight Compute's CSV (`ncu --csv --page raw --print-units base`: one row per kernel, one
// column per metric, a units row under the header) parsed into KernelMetrics. The long form
// (`--page details`: one row per metric) is accepted too, so a report exported either way reads.
#pragma once

#include "profiling/KernelMetrics.h"
#include "profiling/ProfileResult.h"

#include <string_view>
#include <vector>

namespace stitch::profiling {

// Kernels in launch order. A table with no kernel rows is an error ("no kernels profiled"):
// with NVTX filtering that means the range matched nothing, which the caller must hear about.
ProfileResult<std::vector<KernelMetrics>> parseNcuCsv(std::string_view text);

}  // namespace stitch::profiling
