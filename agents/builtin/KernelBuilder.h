// Lowers ATen nodes, one at a time, into a FusedKernel. `add` either takes the node into the
// kernel or says why it cannot (unknown operator, a shape that does not fit the iteration
// space, a reduction over other dims), leaving the kernel as it was — the planner then closes
// the kernel and starts another. Composite operators (softmax, layer norm, logsumexp) are
// lowered into their reductions and elementwise steps here.
#pragma once

#include "agents/builtin/FusedKernel.h"

#include <map>
#include <set>

namespace stitch::agents::builtin {

// What the brain can generate for an ATen operator.
enum class OpClass { Elementwise, Reduction, View, Unsupported };
OpClass classifyOp(const std::string& op);

class KernelBuilder {
public:
  explicit KernelBuilder(const Graph& graph) : graph_(&graph) {}

  // Adds the node or explains why it cannot join; on failure the builder is unchanged.
  Outcome<bool> add(const Node& node);
  bool empty() const { return kernel_.nodeIds.empty(); }
  // Writes the given tensors (produced by the kernel's nodes) and returns the kernel.
  Outcome<FusedKernel> finish(const std::vector<std::string>& outputs) const;
  const FusedKernel& kernel() const { return kernel_; }

private:
  struct Bound {  // a tensor known inside the kernel
    int value = -1;
    std::string unsupported;  // non-empty: the tensor exists but the kernel cannot produce it
  };
  Outcome<bool> lower(const Node& node);
  Outcome<int> operand(const Node& node, const std::string& argName);
  Outcome<int> external(const std::string& tensorId, const std::vector<int>& dimMap);
  Outcome<std::vector<int>> alignedMap(const std::vector<int64_t>& shape, const std::vector<int>& operands,
                                       const Node& node);
  Outcome<int> elementwise(const Node& node, const std::string& fn, const std::vector<std::string>& argNames,
                           std::vector<double> params = {});
  Outcome<int> reduce(const Node& node, int input, ReduceKind kind, std::vector<int64_t> dims, bool keepdim,
                      const std::string& outId);
  int push(KernelValue v);
  int constant(double c);
  int unary(const std::string& fn, int a, std::vector<double> params = {});
  int binary(const std::string& fn, int a, int b);
  void bind(const std::string& tensorId, int value) { tensors_[tensorId] = {value, ""}; }

  const Graph* graph_;
  FusedKernel kernel_;
  std::map<std::string, Bound> tensors_;
  std::map<std::string, int> inputsByKey_;
  std::set<std::string> pendingExternal_;  // scalar operands held while their shape is resolved
};

}  // namespace stitch::agents::builtin
