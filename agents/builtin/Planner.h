// The built-in Planner (design §8): partitions a captured graph into generated kernels (fusion
// groups read their inputs once), lists every operator it leaves to PyTorch with the reason,
// and orders the kernels by measured time when a profile exists, each with its source lines,
// operators, technique and the gain the memory-roofline floor allows.
#pragma once

#include "agents/builtin/FusedKernel.h"
#include "agents/builtin/LibraryCall.h"

#include <map>
#include <optional>

namespace stitch::agents::builtin {

// One step of the program: a generated kernel, or a library call (with its folded epilogue).
struct PlannedKernel {
  std::string id;  // "k0", "k1", ... in execution order
  FusedKernel kernel;                  // when `library` is empty
  std::optional<LibraryCall> library;  // cuBLASLt / cuDNN
  int firstLine = 0;  // one-based source lines of the kernel's nodes (0 when unknown)
  int lastLine = 0;
  std::vector<std::string> operators;
  std::string technique;
  int64_t eagerBytes = 0;  // what eager PyTorch moves: every operator reads and writes its tensors
  int64_t floorBytes = 0;  // what the fused kernel must move: its inputs once, its outputs once
  std::optional<double> measuredUs;  // reference time of its source lines, when profiled
  double expectedGainPct = 0;        // 1 - floorBytes / eagerBytes

  std::vector<std::string> reads() const;   // the ABI tensors it reads
  std::vector<std::string> writes() const;  // the tensors it writes
};

struct Plan {
  std::vector<PlannedKernel> kernels;   // execution order
  std::vector<std::size_t> priority;    // indices into kernels, most valuable first
  std::vector<UncoveredOp> uncovered;   // left in PyTorch, never hidden
  bool wholeForward() const { return uncovered.empty() && !kernels.empty(); }
  int64_t floorBytes() const;
  bool tensorCores = false;  // library calls may take their fp32-accurate 3xTF32 form (PlannerOptions)
};

struct PlannerOptions {
  bool fuse = true;  // false: one kernel per operator and no library epilogues (the REPLAN fallback)
  // The job allows TF32: each library call also measures its 3xTF32 form (see LibraryEmitter.h).
  bool tensorCores = false;
};

// `lineTimesUs`: the reference's time per one-based source line of the task file.
Plan makePlan(const Graph& graph, const std::map<int, double>& lineTimesUs = {}, PlannerOptions options = {});

}  // namespace stitch::agents::builtin
