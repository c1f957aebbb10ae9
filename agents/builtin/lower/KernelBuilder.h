// Lowers ATen nodes, one at a time, into a FusedKernel. `add` either takes the node into the
// kernel or says why it cannot (unknown operator, a shape that does not fit the iteration
// space, a reduction over other dims), leaving the kernel as it was — the planner then closes
// the kernel and starts another. Composite operators (softmax, layer norm, logsumexp) are
// lowered into their reductions and elementwise steps here; norms, losses, arg reductions,
// pooling and scans in CompositeLowering.cpp.
#pragma once

#include "agents/builtin/kernel/FusedKernel.h"
#include "agents/builtin/ops/CompositeDef.h"
#include "agents/builtin/ops/OpClass.h"

#include <map>
#include <optional>
#include <set>

namespace stitch::agents::builtin {

struct Concatenation;
struct ConcatPiece;
namespace ops {
struct OpDef;
struct ReduceDef;
struct CoordinateDef;
enum class ReduceForm;
enum class ViewKind;
}

// A depthwise convolution (groups == input channels == output channels, not transposed): a
// memory-bound window the generated kernels compute with its tail fused, where cuDNN's fp32
// depthwise kernel and eager's own ran at under half the copy floor
// (bench/results/kernel_patterns_2026-11-23_h100.md). Other convolutions go to cuDNN.
bool generatesConvolution(const Graph& graph, const Node& node);

// The value of a 0-dim float32 constant the capture recorded as Python (`torch.tensor(0.5, ...)`).
std::optional<double> scalarConstant(const TensorInfo& t);

// A write-back node (GraphNormalize): `copy_` of a value into a module's buffer (running
// statistics, a counter), the one kind of write into a tensor the forward does not own that a
// generated kernel makes. The buffer's id, or null for any other node.
const std::string* writeBackTarget(const Graph& graph, const Node& node);

class KernelBuilder {
public:
  explicit KernelBuilder(const Graph& graph) : graph_(&graph) {}

  // Adds the node or explains why it cannot join; on failure the builder is unchanged.
  Outcome<bool> add(const Node& node);
  bool empty() const { return kernel_.nodeIds.empty(); }
  // A pooling node over a tensor the open kernel computes elementwise: the kernel's computation
  // moves into the pooling window (evaluated at each element a window reads) and the kernel then
  // iterates over the pooled output, so the producer's result is never written. The caller says
  // that no other tensor of the open kernel is needed outside it: none can be written after this.
  // On failure the builder is unchanged.
  Outcome<bool> addPoolOverKernel(const Node& node);
  // Writes the given tensors (produced by the kernel's nodes) and returns the kernel.
  Outcome<FusedKernel> finish(const std::vector<std::string>& outputs) const;
  // How the kernel would write tensor `id` (one its nodes produce), or why it cannot.
  Outcome<KernelOutput> output(const std::string& id) const;
  const FusedKernel& kernel() const { return kernel_; }
  // Whether the kernel computes tensor `id` (not only reads it, as a view of an outside tensor).
  bool computes(const std::string& id) const {
    auto it = tensors_.find(id);
    return it != tensors_.end() && it->second.value >= 0;
  }
  // Whether the kernel knows tensor `id`: computes it, or has it inside where it cannot be written
  // (a pooling window's prologue). A view the kernel does not know is one of an outside tensor.
  bool knows(const std::string& id) const { return tensors_.count(id) > 0; }

private:
  static void plainWhereNoIndexIsRead(FusedKernel& k);
  struct Bound {  // a tensor known inside the kernel
    int value = -1;
    std::string unsupported;  // non-empty: the tensor exists but the kernel cannot produce it
  };
  Outcome<bool> lower(const Node& node);
  Outcome<int> operand(const Node& node, const std::string& argName);
  Outcome<int> external(const std::string& tensorId, const std::vector<int>& dimMap);
  Outcome<std::vector<int>> alignedMap(const std::vector<int64_t>& shape, const std::vector<int>& operands,
                                       const Node& node);
  // `shape`: the result's shape when it is not the node's first output (a loss's terms).
  Outcome<int> elementwise(const Node& node, const std::string& fn, const std::vector<std::string>& argNames,
                           std::vector<double> params = {}, const std::vector<int64_t>* shape = nullptr);
  Outcome<int> reduce(const Node& node, int input, ReduceKind kind, std::vector<int64_t> dims, bool keepdim,
                      const std::string& outId);
  // The node's input tensor as a kernel value (opening the iteration space when it is empty).
  Outcome<int> source(const Node& node, const char* name);
  // An external tensor read with explicit strides per iteration dim, as a value with `dimMap`.
  // `window`: read by a Pool value through its own strides rather than per element.
  // `shift`: elements added to the tensor's offset (a concatenation's piece, read at the result's
  // coordinates).
  Outcome<int> externalStrided(const std::string& tensorId, std::vector<int64_t> strides, std::vector<int> dimMap,
                               bool window = false, int64_t shift = 0);
  // A per-channel parameter ([C], or None) broadcast along iteration dim `dim` of `like`.
  Outcome<int> channelParam(const Node& node, const char* name, int like, int dim);
  // Normalizes `x` over its reduced range (two passes: mean, then the mean of squared deviations)
  // and binds the node's first output; `rowDims` are the dims the statistics are taken over.
  Outcome<int> normalize(const Node& node, int x, const std::vector<int64_t>& rowDims, double eps,
                         std::pair<int, int>* stats = nullptr);
  Outcome<bool> lowerRegistered(const Node& node, const ops::OpDef& def);
  Outcome<bool> lowerView(const Node& node, ops::ViewKind kind);
  Outcome<bool> lowerIntegerCount(const Node& node);
  // A reduction's input as a kernel value, the dims it names and keepdim, read once per node.
  struct Reduction {
    int in = -1;
    int rank = 0;
    const TensorInfo* self = nullptr;
    std::vector<int64_t> dims;  // empty: every dim
    bool keepdim = false;
    double count(const std::vector<int64_t>& dims) const;  // elements reduced over `dims`
  };
  Outcome<bool> lowerReduction(const Node& node, const ops::ReduceDef& def);
  Outcome<bool> lowerSoftmax(const Node& node, ops::ReduceForm form, const Reduction& r);
  Outcome<bool> lowerLayerNorm(const Node& node, const Reduction& r, double eps);
  Outcome<bool> lowerVariance(const Node& node, const Reduction& r, double correction, bool root);
  Outcome<bool> lowerArgReduce(const Node& node, const ops::ReduceDef& def);
  // CompositeLowering.cpp: the lowering a composite entry names, one function per kind.
  Outcome<bool> lowerComposite(const Node& node, const ops::Composite& lowering);
  Outcome<bool> lowerAnyAll(const Node& node, const ops::AnyAll& op);
  Outcome<bool> lowerVectorNorm(const Node& node, const ops::VectorNorm& op);
  Outcome<bool> lowerLoss(const Node& node, const ops::Loss& op);
  Outcome<bool> lowerNllLoss(const Node& node);
  Outcome<bool> lowerBatchNorm(const Node& node, const ops::BatchNorm& op);
  Outcome<bool> lowerGroupNorm(const Node& node);
  Outcome<bool> lowerPool(const Node& node, const ops::Pool& op);
  Outcome<bool> poolOverKernel(const Node& node);
  Outcome<PoolSpec> poolSpec(const Node& node, const ops::Pool& op, const TensorInfo& x, const TensorInfo& out) const;
  Outcome<std::pair<const TensorInfo*, const TensorInfo*>> poolTensors(const Node& node) const;
  void bindPoolIndices(const Node& node);
  Outcome<bool> lowerDepthwiseConv(const Node& node);
  Outcome<bool> openWindow(const Node& node, const TensorInfo& x, const TensorInfo& out, PoolSpec spec,
                           const TensorInfo* weights);
  Outcome<bool> lowerScan(const Node& node, const ops::Scan& op);
  Outcome<bool> lowerConcat(const Node& node);
  Outcome<bool> lowerFill(const Node& node, double value);
  struct CoordinateRead {
    const TensorInfo* in;
    const TensorInfo* out;
    std::vector<int> map;
  };
  Outcome<CoordinateRead> coordinateRead(const Node& node, const std::string& verb, const char* arg = "self");
  Outcome<bool> lowerCoordinate(const Node& node, const ops::CoordinateDef& def);
  Outcome<bool> lowerTriangle(const Node& node, bool upper);
  Outcome<bool> lowerPad(const Node& node);
  Outcome<bool> lowerFlip(const Node& node);
  Outcome<bool> lowerGather(const Node& node, const char* tableArg);
  Outcome<int> pieceRead(const Concatenation& cat, const ConcatPiece& piece, const std::vector<int>& map);
  // Applies a loss's `reduction` (0 none, 1 mean, 2 sum) to its per-element terms and binds it.
  Outcome<bool> reduceLoss(const Node& node, int terms);
  // The index of `in` among the kernel's inputs, added unless an identical read is there.
  int addInput(KernelInput in);
  int push(KernelValue v);
  int constant(double c);
  int unary(const std::string& fn, int a, std::vector<double> params = {});
  // A Gather value: the Input value `row` plus the int64 value `index` times `rowStride`.
  int gather(int row, int index, int64_t rows, int64_t rowStride, std::vector<int> dimMap);
  std::optional<double> constantValue(const TensorInfo& t) const;
  int binary(const std::string& fn, int a, int b);
  void bind(const std::string& tensorId, int value) { tensors_[tensorId] = {value, ""}; }

  const Graph* graph_;
  FusedKernel kernel_;
  std::map<std::string, Bound> tensors_;
  std::map<std::string, int> inputsByKey_;
  std::set<std::string> pendingExternal_;  // scalar operands held while their shape is resolved
};

}  // namespace stitch::agents::builtin
