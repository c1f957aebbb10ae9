// The roofline ceilings measured once per GPU and kept on disk (<cacheDir>/roofline-v3/<gpu>.json),
// so every job on that GPU classifies kernels against the same numbers without re-measuring. The
// folder is named for how the ceilings are measured: ceilings an earlier method stored are measured
// again, not read (roofline/: memory from copies alone; roofline-v2/: PyTorch's copy and sum, and
// PyTorch's matmul alone for FP32, before our own streams and GEMM search).
#pragma once

#include "profiling/ProfileResult.h"
#include "profiling/Roofline.h"

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace stitch::profiling {

class RooflineCache {
public:
  explicit RooflineCache(std::filesystem::path cacheDir) : dir_(std::move(cacheDir) / "roofline-v3") {}

  std::filesystem::path fileFor(const std::string& gpu) const;
  // The cached ceilings of `gpu`; nullopt when none were stored or the file is unreadable.
  std::optional<Ceilings> load(const std::string& gpu) const;
  // Writes atomically (temporary file, then rename), so concurrent jobs never read half a file.
  ProfileResult<std::filesystem::path> store(const Ceilings& ceilings) const;
  // The cached ceilings, or `measure()` (the harness's measureCeilings result) parsed and stored.
  ProfileResult<Ceilings> getOrMeasure(const std::string& gpu,
                                       const std::function<ProfileResult<nlohmann::json>()>& measure) const;

private:
  std::filesystem::path dir_;
};

}  // namespace stitch::profiling
