// Which numbers of a plan scale with the batch; see RuntimeRows.h.
#include "agents/builtin/plan/RuntimeRows.h"

#include "agents/builtin/kernel/LaunchShape.h"
#include "agents/builtin/normalize/GraphNormalize.h"
#include "agents/builtin/plan/MemoryFormat.h"

#include <algorithm>

namespace stitch::agents::builtin {
namespace {

// Dim-0 sizes `full` at `rows` rows and `half` at `halfRows`: the size per row, or 0 where the two
// are not one size per row times the rows.
int64_t perRow(int64_t full, int64_t half, int64_t rows, int64_t halfRows) {
  if (full <= 0 || full % rows != 0 || full / rows * halfRows != half) return 0;
  return full / rows;
}

// Why tensor `f` (captured at `rows`) and `h` (at `halfRows`) are not the same tensor with its
// dim 0 scaled, or "" with `*unit` set (0: fixed size).
std::string tensorRows(const TensorInfo& f, const TensorInfo& h, int64_t rows, int64_t halfRows, int64_t* unit) {
  *unit = 0;
  if (f.id != h.id || f.dtype != h.dtype || f.role != h.role || f.shape.size() != h.shape.size())
    return "tensor " + f.id + " is another tensor at half the rows";
  if (f.strides != h.strides || f.storageOffset != h.storageOffset)
    return "tensor " + f.id + "'s layout changes with the rows (the batch is not its outermost dim)";
  for (std::size_t d = 1; d < f.shape.size(); ++d)
    if (f.shape[d] != h.shape[d]) return "tensor " + f.id + "'s dim " + std::to_string(d) + " changes with the rows";
  if (f.shape.empty() || f.shape[0] == h.shape[0]) return "";
  *unit = perRow(f.shape[0], h.shape[0], rows, halfRows);
  if (!*unit) return "tensor " + f.id + "'s dim 0 is not a size per row times the rows";
  // A constant made outside ATen is made again as its captured values (TensorInfo::py).
  if (f.role == "constant") return "constant " + f.id + " has as many rows as the batch";
  return "";
}

// Why kernel `f` is not `h` with its dim 0 scaled, or "" with f.perRow set.
std::string kernelRows(FusedKernel& f, const FusedKernel& h, int64_t rows, int64_t halfRows) {
  if (f == h) return "";
  if (f.shape.empty() || f.shape.size() != h.shape.size() || f.outputs.size() != h.outputs.size())
    return "its iteration space changes with the rows";
  const int64_t unit = perRow(f.shape[0], h.shape[0], rows, halfRows);
  if (!unit) return "its dim 0 is not a size per row times the rows";
  if (f.reduceBegin == 0) return "it reduces over the rows";
  if (maySplitRows(f)) return "it splits its few long rows over blocks, with partial results sized for these rows";
  FusedKernel scaled = h;
  // One row at half the rows is a dim of size 1, which a kernel reads as a broadcast (stride 0),
  // maps to no iteration dim (-1) and leaves out of what makes a read linear: taken as the
  // captured kernel has them.
  if (h.shape[0] == 1) {
    for (std::size_t i = 0; i < scaled.inputs.size() && i < f.inputs.size(); ++i) {
      KernelInput& in = scaled.inputs[i];
      if (!in.strides.empty() && in.strides[0] == 0 && !f.inputs[i].strides.empty()) in.strides[0] = f.inputs[i].strides[0];
      if (in.linear && !f.inputs[i].linear) in.linear = false;
    }
    for (std::size_t v = 0; v < scaled.values.size() && v < f.values.size(); ++v) {
      auto& map = scaled.values[v].dimMap;
      for (std::size_t p = 0; p < map.size() && p < f.values[v].dimMap.size(); ++p)
        if (map[p] == -1 && f.values[v].dimMap[p] == 0) map[p] = 0;
    }
  }
  // A pad that pads no rows holds the rows as the padded size of dim 0.
  for (std::size_t v = 0; v < scaled.values.size() && v < f.values.size(); ++v) {
    KernelValue& pad = scaled.values[v];
    if (pad.op != ValueOp::Pad || f.values[v].op != ValueOp::Pad) continue;
    for (std::size_t p = 0; p < pad.dimMap.size() && p < pad.padInner.size() && p < f.values[v].padInner.size(); ++p)
      if (pad.dimMap[p] == 0 && pad.padBefore[p] == 0 && pad.padInner[p] == h.shape[0] &&
          f.values[v].padInner[p] == f.shape[0])
        pad.padInner[p] = f.shape[0];
  }
  scaled.shape[0] = f.shape[0];
  for (std::size_t i = 0; i < f.outputs.size(); ++i) {
    KernelOutput& o = scaled.outputs[i];
    if (o.shape.empty() || o.shape[0] == f.outputs[i].shape[0]) continue;
    if (!perRow(f.outputs[i].shape[0], o.shape[0], rows, halfRows)) return "an output's dim 0 does not scale with the rows";
    o.shape[0] = f.outputs[i].shape[0];
    // A piece of a concatenation whose only dim of more than one element is dim 0 took 16-byte
    // stores from its captured size (KernelOutput::vectorStores), which other rows may not allow.
    if (o.strided() && o.vectorStores() &&
        std::all_of(o.shape.begin() + 1, o.shape.end(), [](int64_t n) { return n == 1; }))
      return "it writes its rows into a slice of a concatenation with 16-byte stores";
  }
  if (!(scaled == f)) {
    for (std::size_t i = 0; i < f.inputs.size() && i < scaled.inputs.size(); ++i)
      if (!(f.inputs[i] == scaled.inputs[i])) return "its read of " + f.inputs[i].tensorId + " changes with the rows";
    for (std::size_t i = 0; i < f.values.size() && i < scaled.values.size(); ++i)
      if (!(f.values[i] == scaled.values[i])) return "its value " + std::to_string(i) + " changes with the rows";
    return "it changes with the rows in more than its dim 0";
  }
  f.perRow = unit;
  return "";
}

// Why call `f` is not `h` with its rows or batch count (a GEMM) or its images (a convolution)
// scaled, or "" with its per-row field set.
std::string libraryRows(LibraryCall& f, const LibraryCall& h, int64_t rows, int64_t halfRows) {
  if (f == h) return "";
  if (f.kind != h.kind) return "it is another library call at half the rows";
  if (f.kind == LibraryCall::Kind::Rnn) return "cuDNN's RNN calls take a fixed batch";
  LibraryCall scaled = h;
  if (f.kind == LibraryCall::Kind::Conv) {
    ConvCall& c = scaled.conv;
    if (c.inShape.empty() || c.outShape.empty() || f.conv.inShape.size() != c.inShape.size() ||
        f.conv.outShape.size() != c.outShape.size())
      return "its shapes change with the rows";
    const int64_t unit = perRow(f.conv.inShape[0], c.inShape[0], rows, halfRows);
    if (!unit || perRow(f.conv.outShape[0], c.outShape[0], rows, halfRows) != unit)
      return "its images do not scale with the batch";
    c.inShape[0] = f.conv.inShape[0];
    c.outShape[0] = f.conv.outShape[0];
    if (!(scaled == f)) return "it changes with the rows in more than its images";
    f.conv.nPerRow = unit;
    return "";
  }
  GemmCall& s = scaled.gemm;
  int64_t mUnit = 0, batchUnit = 0;
  if (s.m != f.gemm.m && !(mUnit = perRow(f.gemm.m, s.m, rows, halfRows))) return "its rows do not scale with the batch";
  if (s.batch != f.gemm.batch && !(batchUnit = perRow(f.gemm.batch, s.batch, rows, halfRows)))
    return "its batch count does not scale with the batch";
  s.m = f.gemm.m;
  s.batch = f.gemm.batch;
  if (!(scaled == f)) return "it changes with the rows in more than its rows or batch count";
  f.gemm.mPerRow = mUnit;
  f.gemm.batchPerRow = batchUnit;
  return "";
}

std::string analyse(Plan& plan, const Graph& graph, const Plan& half, const Graph& halfGraph, BatchRows& out) {
  if (!graph.independentRows) return "the capture found no batch whose rows are computed independently";
  const int64_t rows = *graph.independentRows;
  if (halfGraph.inputs.empty() || halfGraph.tensor(halfGraph.inputs[0])->shape.empty())
    return "the capture at half the rows has no batch";
  const int64_t halfRows = halfGraph.tensor(halfGraph.inputs[0])->shape[0];
  if (!plan.wholeForward()) return "operators left in PyTorch take their shapes as captured";
  if (writesModuleState(graph, plan)) return "the program writes module state";
  if (graph.tensors.size() != halfGraph.tensors.size() || graph.nodes.size() != halfGraph.nodes.size())
    return "the forward runs other operators at half the rows";
  for (std::size_t i = 0; i < graph.tensors.size(); ++i) {
    int64_t unit = 0;
    if (auto why = tensorRows(graph.tensors[i], halfGraph.tensors[i], rows, halfRows, &unit); !why.empty()) return why;
    if (unit) out.perRow[graph.tensors[i].id] = unit;
  }
  for (const auto& id : graph.inputs)
    if (!out.perRow.count(id)) return "input " + id + " does not carry the batch";
  if (plan.kernels.size() != half.kernels.size()) return "the plan at half the rows has other steps";
  for (std::size_t i = 0; i < plan.kernels.size(); ++i) {
    PlannedKernel& f = plan.kernels[i];
    const PlannedKernel& h = half.kernels[i];
    std::string why;
    if (f.library.has_value() != h.library.has_value()) why = "it is planned otherwise at half the rows";
    else if (f.library) why = libraryRows(*f.library, *h.library, rows, halfRows);
    else why = kernelRows(f.kernel, h.kernel, rows, halfRows);
    if (!why.empty()) return "step " + f.id + ": " + why;
  }
  out.captured = rows;
  return "";
}

}  // namespace

bool writesModuleState(const Graph& graph, const Plan& plan) {
  for (const auto& k : plan.kernels)
    for (const auto& id : k.writes())
      if (const TensorInfo* root = graph.viewRoot(*graph.tensor(id)); root->role == "parameter" || root->role == "buffer")
        return true;
  return false;
}

bool maySplitRows(const FusedKernel& k) {
  // CudaEmitter's rowSplits(): rows under four per SM of an H100 (132), each at least two chunks of
  // the smallest block (128 threads) per split.
  // A column reduction over few columns splits its reduced dim so (CudaEmitter's splitsColumns).
  const int64_t rowsCount = k.outer();
  if (splitsColumns(k) > 1) return true;
  return k.reduces() && k.inner() == 1 && rowsCount > 0 && rowsCount < 4 * 132 && k.reduced() / 4 / (2 * 128) > 1;
}

void makeRowsRuntime(Plan& plan, const Graph& graph, const Plan& half, const Graph& halfGraph) {
  BatchRows rows;
  Plan scaled = plan;
  const std::string why = analyse(scaled, graph, half, halfGraph, rows);
  if (!why.empty()) {
    plan.fixedRowsWhy = why;
    return;
  }
  plan = std::move(scaled);
  plan.rows = std::move(rows);
}

void planRows(Plan& plan, const Graph& graph, const nlohmann::json& captured, const std::map<int, double>& lineTimesUs,
              const PlannerOptions& options) {
  if (!graph.independentRows) return;
  const auto batch = captured.find("batch");
  if (batch == captured.end() || !batch->is_object() || !batch->contains("graph")) {
    plan.fixedRowsWhy = "the capture did not record the forward at half the rows";
    return;
  }
  auto halfGraph = parseNormalized((*batch)["graph"]);
  if (!halfGraph) {
    plan.fixedRowsWhy = "the capture at half the rows: " + halfGraph.error().message;
    return;
  }
  // Laid out as `graph` was: the layout pass's choice depends on the operators, not the rows.
  const Graph half = graph.layout.channelsLast.empty() ? halfGraph.value() : layOut(halfGraph.value(), options);
  makeRowsRuntime(plan, graph, makePlan(half, lineTimesUs, options), half);
}

std::string BatchRows::sizeText(const std::string& id) const {
  const int64_t per = perRow.at(id);
  return per == 1 ? "rows" : "rows * " + std::to_string(per);
}

}  // namespace stitch::agents::builtin
