// The rules behind the Verifier's one diagnosis and one suggestion (see VerifierFeedback.h and
// protocol/FEEDBACK.md). Rules are tried in order on the kernel with the most GPU time; the
// first that applies speaks, so the Coder works on one issue at a time (CudaForge's lesson).
#include "profiling/VerifierFeedback.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>

namespace stitch::profiling {
namespace {

constexpr double kAtCeiling = 0.8;       // at or above: the kernel is at its roofline
constexpr double kLowOccupancyPct = 40;  // below: too few warps to hide latency
constexpr double kShortKernelUs = 10;    // kernels this short are dominated by launch cost

std::string num(double v, int digits = 1) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string shortName(const std::string& name) {
  std::string n = name.substr(0, name.find('('));
  if (n.rfind("void ", 0) == 0) n = n.substr(5);
  return n.size() > 80 ? n.substr(0, 77) + "..." : n;
}

long long gridBlocks(const std::string& grid) {  // "(1024, 2, 1)" -> 2048
  long long product = 1;
  bool any = false;
  std::string digits;
  for (char c : grid + ",") {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digits += c;
    } else if (!digits.empty()) {
      product *= std::stoll(digits);
      digits.clear();
      any = true;
    }
  }
  return any ? product : 0;
}

struct StallAdvice {
  const char* meaning;
  const char* suggestion;
};

const std::map<std::string, StallAdvice>& stallAdvice() {
  static const std::map<std::string, StallAdvice> table = {
      {"long_scoreboard", {"warps wait on global or local memory loads",
                           "keep more loads in flight: 16-byte vector loads (float4), several independent elements per thread, and check for register spills to local memory"}},
      {"lg_throttle", {"the load/store queue is full of global memory instructions",
                       "issue fewer, wider memory instructions: vectorize to float4 / 16-byte accesses"}},
      {"barrier", {"warps wait at __syncthreads()",
                   "use fewer block-wide barriers: warp shuffles for reductions, and even work per warp"}},
      {"mio_throttle", {"the shared-memory / special-function queue is saturated",
                        "cut shared-memory traffic and bank conflicts (pad shared arrays, keep values in registers)"}},
      {"short_scoreboard", {"warps wait on shared memory or special-function results",
                            "avoid shared-memory bank conflicts (pad by one element) and use fast intrinsics (__expf) where precision allows"}},
      {"math_pipe_throttle", {"an arithmetic pipe is saturated",
                              "move the math to a less busy pipe: tensor cores through cuBLASLt / WGMMA for matrix products, fewer instructions per element"}},
      {"wait", {"warps wait on fixed-latency dependencies",
                "raise instruction-level parallelism: process several independent elements per thread and unroll"}},
      {"not_selected", {"enough warps are ready but only one issues per cycle (issue-bound)",
                        "reduce the instruction count: simpler index arithmetic, hoisted invariants, fewer conversions"}},
      {"no_instruction", {"warps wait for instructions (instruction cache misses or branch targets)",
                          "shrink the hot loop: less unrolling or fewer template instantiations in one kernel"}},
      {"branch_resolving", {"warps wait on branch resolution and divergence",
                            "make control flow uniform per warp: move bounds checks out of the inner loop"}},
      {"membar", {"warps wait on memory fences", "remove fences and atomics from the hot path or batch them"}},
      {"dispatch_stall", {"the dispatcher stalls on pipeline conflicts", "reduce mixed-pipe instruction bursts; check the SASS for the inner loop"}},
      {"imc_miss", {"constant-cache misses", "pass per-thread-varying values in registers or global memory, not __constant__ indexed by thread"}},
      {"tex_throttle", {"the texture/L1 pipe is saturated", "use fewer texture or L1 requests: wider loads, fewer gathers"}},
      {"drain", {"warps wait for memory stores to drain at exit", "write outputs with wider stores and fewer partial writes"}},
      {"sleeping", {"warps are sleeping (nanosleep or yield)", "remove spin-waiting from the kernel"}},
  };
  return table;
}

struct Picked {
  const KernelMetrics* kernel = nullptr;
  double totalUs = 0;
};

Picked hottest(const std::vector<KernelMetrics>& ks) {
  Picked p;
  for (const auto& k : ks) {
    double d = k.durationUs.value_or(0);
    p.totalUs += d;
    if (!p.kernel || d > p.kernel->durationUs.value_or(0)) p.kernel = &k;
  }
  return p;
}

void add(VerifierFeedback& f, const std::string& metric, const std::optional<double>& v, const std::string& unit) {
  if (v) f.evidence.push_back({metric, *v, unit});
}

}  // namespace

std::optional<VerifierFeedback> verifierFeedback(const std::vector<KernelMetrics>& kernels,
                                                 const std::optional<Ceilings>& ceilings,
                                                 const std::optional<MemoryFloor>& floor) {
  if (kernels.empty()) return std::nullopt;
  const Picked hot = hottest(kernels);
  const KernelMetrics& k = *hot.kernel;
  VerifierFeedback f;
  f.mode = "optimize";
  f.kernel = k.name;
  const std::string who = "`" + shortName(k.name) + "`";
  const double share = hot.totalUs > 0 ? k.durationUs.value_or(0) / hot.totalUs : 1.0;
  add(f, "duration", k.durationUs, "us");
  f.evidence.push_back({"share_of_candidate_gpu_time", 100 * share, "%"});
  auto point = classify(k, ceilings);
  const WarpStall* top = k.stalls.empty() ? nullptr : &k.stalls.front();
  auto addTop = [&] {
    if (top) f.evidence.push_back({"stall_" + top->reason, top->cyclesPerIssue, "cycles/issue"});
  };

  // 1. Many short launches: the GPU waits on launches, not on any one kernel.
  const double meanUs = hot.totalUs / kernels.size();
  if (kernels.size() >= 3 && meanUs < kShortKernelUs) {
    f.category = "launch_overhead";
    f.evidence.push_back({"kernels", static_cast<double>(kernels.size()), "kernels"});
    f.evidence.push_back({"mean_kernel_duration", meanUs, "us"});
    f.diagnosis = std::to_string(kernels.size()) + " kernels averaging " + num(meanUs) +
                  " µs each: launch cost and the gaps between them dominate the forward.";
    f.suggestion = "Fuse these kernels into one (or capture the forward in a CUDA graph) so one launch does the work.";
    return f;
  }
  // Without counters the forward's distance from its memory floor still says which way to go.
  if (!point && floor && floor->floorUs > 0 && floor->medianUs > 0) {
    const double frac = floor->floorUs / floor->medianUs;
    f.evidence.push_back({"memory_floor_pct", 100 * frac, "%"});
    f.evidence.push_back({"memory_floor", floor->floorUs, "us"});
    f.evidence.push_back({"forward_median", floor->medianUs, "us"});
    f.evidence.push_back({"bytes_moved", floor->bytes, "bytes"});
    f.evidence.push_back({"bandwidth", floor->bandwidthGBps, "GB/s"});
    const std::string reach = "the forward reaches " + num(100 * frac, 0) + "% of its memory floor (" +
                              num(floor->floorUs) + " µs to move " + num(floor->bytes / 1e6) + " MB at " +
                              num(floor->bandwidthGBps, 0) + " GB/s; measured " + num(floor->medianUs) + " µs)";
    if (frac >= kAtCeiling) {
      f.category = "memory_floor_reached";
      f.diagnosis = "Without kernel counters, " + reach + ": it is memory-bound and near the floor.";
      f.suggestion = "Move fewer bytes: fuse with the producers or consumers of its tensors; launch variants alone cannot gain much.";
    } else {
      f.category = "below_memory_floor";
      f.diagnosis = "Without kernel counters, " + reach + ": bandwidth is left unused.";
      f.suggestion = "Keep more bytes in flight: another block size, more elements per thread, and 16-byte accesses where alignment allows.";
    }
    return f;
  }
  if (!point) {
    f.category = "no_throughput_metrics";
    f.diagnosis = who + " takes " + num(k.durationUs.value_or(0)) + " µs but ncu reported no throughput counters for it.";
    f.suggestion = "Re-run the profile with Nsight Compute's SpeedOfLight section available before tuning this kernel.";
    return f;
  }
  const double memPct = 100 * point->memoryFraction, compPct = 100 * point->computeFraction;
  f.evidence.push_back({"memory_roofline_pct", memPct, "%"});
  f.evidence.push_back({"compute_roofline_pct", compPct, "%"});
  add(f, "dram_throughput_pct", k.dramThroughputPct, "%");
  add(f, "sm_throughput_pct", k.smThroughputPct, "%");

  // 2. At a ceiling: the only way on is to do less of what bounds it.
  if (point->bound == Bound::Memory && point->memoryFraction >= kAtCeiling) {
    f.category = "memory_bound_at_ceiling";
    add(f, "dram_bytes", k.dramBytes, "bytes");
    f.diagnosis = who + " is memory-bound at " + num(memPct, 0) + "% of the measured copy bandwidth: it cannot get faster by itself.";
    f.suggestion = "Move fewer bytes: fuse it with the kernels that produce its inputs or consume its output so the tensor "
                   "is read and written once.";
    return f;
  }
  if (point->bound == Bound::Compute && point->computeFraction >= kAtCeiling) {
    f.category = "compute_bound_at_ceiling";
    add(f, "fp32_pipe_pct", k.fp32PipePct, "%");
    add(f, "tensor_pipe_pct", k.tensorPipePct, "%");
    bool tensor = k.tensorPipePct && *k.tensorPipePct > 10;
    f.diagnosis = who + " is compute-bound at " + num(compPct, 0) + "% of the measured " + (tensor ? "tensor" : "FP32") + " ceiling.";
    f.suggestion = tensor ? "Do fewer FLOPs: skip work that is multiplied by zero or recomputed, or fuse the epilogue so no second pass is needed."
                          : "Move the matrix math to tensor cores (cuBLASLt, or TF32 only where the job allows it) or do fewer FLOPs.";
    return f;
  }
  // 3. Too few warps to hide latency, and a resource says why.
  if (k.achievedOccupancyPct && *k.achievedOccupancyPct < kLowOccupancyPct && k.theoreticalOccupancyPct &&
      *k.theoreticalOccupancyPct < 100 && !k.occupancyLimiter.empty() && k.occupancyLimiter != "warps") {
    f.category = "occupancy_limited";
    add(f, "achieved_occupancy_pct", k.achievedOccupancyPct, "%");
    add(f, "theoretical_occupancy_pct", k.theoreticalOccupancyPct, "%");
    add(f, "registers_per_thread", k.registersPerThread, "registers");
    add(f, "shared_mem_per_block", k.sharedMemPerBlockBytes, "bytes");
    f.diagnosis = who + " runs at " + num(*k.achievedOccupancyPct, 0) + "% occupancy (theoretical " +
                  num(*k.theoreticalOccupancyPct, 0) + "%), limited by " + k.occupancyLimiter + ".";
    f.suggestion = k.occupancyLimiter == "registers"
                       ? "Cap registers with __launch_bounds__ (or -maxrregcount) so more warps fit per SM, checking the build report for spills."
                   : k.occupancyLimiter == "shared_memory"
                       ? "Use less shared memory per block (smaller tiles or fewer pipeline stages) so more blocks fit per SM."
                       : "Launch larger blocks (e.g. 256 threads) so the per-SM block limit does not cap the warps.";
    return f;
  }
  // 4. A grid too small to fill the GPU.
  const long long blocks = gridBlocks(k.gridSize);
  if (ceilings && ceilings->multiprocessors > 0 && blocks > 0 && blocks < ceilings->multiprocessors &&
      point->bound == Bound::Latency) {
    f.category = "grid_too_small";
    f.evidence.push_back({"grid_blocks", static_cast<double>(blocks), "blocks"});
    f.evidence.push_back({"multiprocessors", static_cast<double>(ceilings->multiprocessors), "SMs"});
    f.diagnosis = who + " launches " + std::to_string(blocks) + " blocks on a GPU with " +
                  std::to_string(ceilings->multiprocessors) + " SMs: most of the GPU is idle.";
    f.suggestion = "Split the work over at least one block per SM (smaller tiles, split-K, or one block per row segment).";
    return f;
  }
  // 5. Below both ceilings: the top warp stall says what it waits on.
  addTop();
  std::string bound = boundName(point->bound);
  std::string where = bound + "-bound at " + num(100 * point->achievedFraction, 0) + "% of its ceiling";
  if (top) {
    auto it = stallAdvice().find(top->reason);
    f.category = "stall_" + top->reason;
    f.diagnosis = who + " is " + where + "; the top stall is " + top->reason + " (" + num(top->cyclesPerIssue) +
                  " cycles per issued instruction): " + (it != stallAdvice().end() ? it->second.meaning : "see ncu's WarpStateStats") + ".";
    f.suggestion = it != stallAdvice().end() ? std::string(1, static_cast<char>(std::toupper(it->second.suggestion[0]))) +
                                                   (it->second.suggestion + 1) + "."
                                             : "Inspect the kernel's warp-state statistics in Nsight Compute for " + top->reason + ".";
    return f;
  }
  f.category = bound + "_bound_below_ceiling";
  f.diagnosis = who + " is " + where + "; no warp-stall counters were collected to say why.";
  f.suggestion = point->bound == Bound::Memory ? "Keep more memory traffic in flight: vector loads and several elements per thread."
                                               : "Raise parallelism: more independent work per thread and more blocks.";
  return f;
}

bool isVerifierFailure(const std::string& check) {
  static const std::set<std::string> candidates = {"cuda_sticky_error", "worker_crashed", "deadline_exceeded",
                                                   "build_error", "candidate_layout"};
  static const std::set<std::string> verifiers = {"verifier_error", "needs_gpu", "internal_error", "cuda_out_of_memory",
                                                  "cpu_out_of_memory", "worker_start_failed", "parse_error",
                                                  "invalid_request", "invalid_params", "unknown_method",
                                                  "file_not_found", "not_python_source"};
  if (candidates.count(check)) return false;
  return verifiers.count(check) > 0 || check.rfind("task_", 0) == 0;
}

std::optional<VerifierFeedback> failureFeedback(const std::vector<FailedCheck>& all) {
  std::vector<FailedCheck> failed;
  for (const auto& c : all)
    if (!isVerifierFailure(c.check)) failed.push_back(c);
  if (failed.empty()) return std::nullopt;
  static const std::map<std::string, std::string> fixes = {
      {"build_error", "Fix the first compiler error at the reported line; later errors often follow from it."},
      {"candidate_load_error", "Make the module import cleanly and ModelNew(*get_init_inputs()) construct, with the reference's constructor signature."},
      {"candidate_runtime_error", "Check the launch configuration and the tensor order passed to stitch_forward against the .cu's contract."},
      {"output_structure", "Return the same structure as the reference: one tensor or a tuple with the same number of tensors."},
      {"shape_mismatch", "Allocate the output with the reference's shape and index with the reference's layout."},
      {"dtype_mismatch", "Allocate the output with the reference's dtype."},
      {"device_mismatch", "Allocate the output on the input's device."},
      {"output_mismatch", "Compare the kernel's indexing and reduction order with the reference on the failing trial; check bounds for sizes that are not multiples of the block or vector width."},
      {"nan_or_inf", "Guard the operation that overflows (exp, division, log) the way PyTorch does, e.g. subtract the max before exp."},
      {"output_aliases_input", "Write into a fresh output tensor, never into an input or parameter."},
      {"output_cached", "Compute from the current input values on every call; do not key results on pointers."},
      {"constant_output", "Compute the outputs from the inputs; a constant passes only where the tolerance cannot tell, and is caught there."},
      {"input_mutated", "Treat inputs as read-only; use a scratch buffer for intermediates."},
      {"nondeterministic_output", "Remove the race: add the missing barrier, or make each output element owned by one thread (no unsynchronized accumulation)."},
      {"pytorch_compute", "Do the claimed work in the CUDA kernel; keep only allocation and views in ModelNew.forward."},
      {"side_stream", "Launch every kernel on the stream passed to stitch_forward."},
      {"precision_downgrade", "Compute in the reference's precision (fp32 math, TF32 off) unless the job allows the lower one."},
      {"extra_thread", "Do the work in the calling thread; start no threads."},
      {"faster_than_roofline", "The measured time is below the memory floor: check that the kernel really writes every output element on every call."},
      {"weights_differ", "Create ModelNew's parameters and buffers as Model does (the same modules in the same order, the same initialization): both are built under one seed and nothing is copied from the reference."},
      {"buffer_mismatch", "Update the buffers in forward as the reference does (BatchNorm in training mode moves running_mean, running_var and num_batches_tracked)."},
  };
  const FailedCheck& c = failed.front();
  VerifierFeedback f;
  f.mode = "fix";
  f.category = c.check;
  f.diagnosis = c.check + ": " + c.message;
  auto it = fixes.find(c.check);
  f.suggestion = it != fixes.end() ? it->second : "Remove the construct the " + c.check + " guard names; the verifier will not accept it.";
  f.evidence = c.evidence;
  f.file = c.file;
  f.line = c.line;
  if (failed.size() > 1)
    f.evidence.push_back({"other_failed_checks", static_cast<double>(failed.size() - 1), "checks"});
  return f;
}

nlohmann::json feedbackToJson(const VerifierFeedback& f) {
  nlohmann::json ev = nlohmann::json::array();
  for (const auto& e : f.evidence) ev.push_back({{"metric", e.metric}, {"value", e.value}, {"unit", e.unit}});
  nlohmann::json j = {{"schema", "stitchcuda.feedback/1"}, {"mode", f.mode}, {"category", f.category},
                      {"kernel", f.kernel}, {"diagnosis", f.diagnosis}, {"suggestion", f.suggestion}, {"evidence", ev}};
  if (f.file) j["file"] = *f.file;
  if (f.line) j["line"] = *f.line;
  return j;
}

}  // namespace stitch::profiling
