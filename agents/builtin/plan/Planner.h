// The built-in Planner (design §8): partitions a captured graph into generated kernels (fusion
// groups read their inputs once), lists every operator it leaves to PyTorch with the reason,
// and orders the kernels by measured time when a profile exists, each with its source lines,
// operators, technique and the gain the memory-roofline floor allows.
#pragma once

#include "agents/builtin/kernel/FusedKernel.h"
#include "agents/builtin/lower/LibraryCall.h"
#include "protocol/StitchTypes.h"

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

// The batch as a run-time parameter of the generated program (RuntimeRows.h): the plan made from
// the capture at half the rows is this one with dim 0 of these tensors (and of the kernels that
// write them) scaled, so one program serves any number of rows.
struct BatchRows {
  int64_t captured = 0;                   // the rows the graph was captured with
  std::map<std::string, int64_t> perRow;  // tensor id -> its dim-0 size per row; absent: fixed size
  // The dim-0 size of tensor `id` (one that carries the rows) as Python source over the name `rows`.
  std::string sizeText(const std::string& id) const;
};

struct Plan {
  std::vector<PlannedKernel> kernels;   // execution order
  std::vector<std::size_t> priority;    // indices into kernels, most valuable first
  std::vector<UncoveredOp> uncovered;   // left in PyTorch, never hidden
  bool wholeForward() const { return uncovered.empty() && !kernels.empty(); }
  int64_t floorBytes() const;
  std::optional<BatchRows> rows;  // set where the batch is a run-time parameter
  std::string fixedRowsWhy;       // else why not, where the capture found the rows independent
  bool tensorCores = false;  // library calls may take their fp32-accurate 3xTF32 form (PlannerOptions)
  // Whether some library call runs in TF32 as eager does (LibraryCall::tf32).
  bool usesTf32() const;
  // Every library call in exact fp32 (FMA math, fp32 compute, no 3xTF32 form), its technique
  // saying why; false where nothing changed.
  bool toExactFp32();
};

// The memory format of a convolution network's activations (MemoryFormat.h): the planner's choice,
// or NCHW / channels-last as a job asks, so that one run can measure both on the same problems.
enum class LayoutMode { Auto, Nchw, ChannelsLast };

struct PlannerOptions {
  bool fuse = true;  // false: one kernel per operator and no library epilogues (the REPLAN fallback)
  // The job allows TF32: each library call also measures its 3xTF32 form (see LibraryEmitter.h).
  bool tensorCores = false;
  // Each library call runs in the precision eager uses for it (design §7): cuDNN convolutions
  // may use TF32 tensor cores where eager's torch.backends.cudnn.allow_tf32 is on, cuBLASLt GEMMs
  // compute in TF32 where torch.backends.cuda.matmul.allow_tf32 is. Both off: exact fp32.
  bool convTf32 = false;
  bool matmulTf32 = false;
  // Why, for the techniques: Eager (the flags are the reference's), JobFp32 (--precision fp32,
  // both off), Unstated (eager's flags unknown).
  PrecisionWhy precisionWhy = PrecisionWhy::Unstated;
  LayoutMode layout = LayoutMode::Auto;
  // What the refine step's layout trial measured (LayoutSearch.h), said with each convolution's
  // layout; "" before a trial.
  std::string layoutMeasured{};
  // Library operators (by node id) left in PyTorch whatever the planner could do with them, and
  // why: a call none of whose forms ran on the GPU (the refine step's last fallback, so that one
  // unsupported configuration costs a smaller speedup, never the candidate).
  std::map<int, std::string> inPyTorch{};
};

// How much of the forward the plan's compiled steps cover: computing operators (views and
// allocations excluded), and their share of the reference's time — from `lineTimesUs` (each
// line's time split evenly among its operators) when measured, else from the bytes each operator
// moves in eager PyTorch (an estimate, said so in `timeBasis`).
protocol::PlanCoverage planCoverage(const Graph& graph, const Plan& plan, const std::map<int, double>& lineTimesUs);

// `lineTimesUs`: the reference's time per one-based source line of the task file.
Plan makePlan(const Graph& graph, const std::map<int, double>& lineTimesUs = {}, PlannerOptions options = {});

}  // namespace stitch::agents::builtin
