// The normalization pass's state and rewrites (GraphNormalize.h says what it does), shared by the
// files that hold its groups of rewrites: GraphNormalize.cpp (the pass, its facts about the graph
// and the view rewrites), NormalizeBatchNorm.cpp (training batch norm, instance norm and counters) and
// NormalizeDecompose.cpp (operators split into the ones the planner lowers).
#pragma once

#include "agents/ir/GraphIR.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace stitch::agents::builtin::normalize {

Argument tensorArg(const std::string& name, const std::string& id);
Argument valueArg(const std::string& name, ScalarValue v);
// The argument's value when the capture wrote a number (an int or a finite float: the harness
// writes inf and nan as strings, and a bool is not a number here).
std::optional<double> capturedNumber(const Argument* a);
double scalarOr(const Node& n, const std::string& name, double fallback);
// The argument is the boolean true.
bool isTrue(const Argument* a);
std::string argTensor(const Node& n, const std::string& name);

class Normalizer {
public:
  explicit Normalizer(Graph& g);
  void run();

private:
  // Facts of the captured graph, read before any rewrite.
  void noteReaders();

  // View and in-place rewrites (GraphNormalize.cpp).
  void functionalize(Node& n, std::size_t at);
  bool restrideAsView(Node& n);
  void identityReduction(Node& n);
  void markView(Node& n);
  void listOfViews(Node& n, const std::string& base);
  void wholeSliceAsView(Node& n);
  bool pieceOfUnreadBase(const std::string& id) const;

  // Training batch norm, instance norm and counters (NormalizeBatchNorm.cpp).
  bool trainingBatchNorm(const Node& n, const std::string& base, std::vector<Node>& nodes);
  bool instanceNorm(const Node& n, const std::string& base, std::vector<Node>& nodes);
  bool counterIncrement(const Node& n, const std::string& base, std::vector<Node>& nodes);
  bool channelBuffer(const std::string& id, int64_t channels);

  // Operators split into the ones the planner lowers (NormalizeDecompose.cpp).
  bool splitAddmm(const Node& n, const std::string& base, std::vector<Node>& nodes);
  bool splitConvBias(const Node& n, std::vector<Node>& nodes);
  bool splitAttention(const Node& n, std::vector<Node>& nodes);
  std::string batched(const Node& like, const std::string& of, const std::vector<int64_t>& shape,
                      std::vector<Node>& nodes);
  std::string reshaped(const Node& like, const std::string& of, const std::vector<int64_t>& shape,
                       std::vector<Node>& nodes);
  std::string transposedLast(const Node& like, const std::string& of, std::vector<Node>& nodes);
  bool splitRoll(const Node& n, std::vector<Node>& nodes);
  bool crossEntropy(const Node& n, const std::string& base, std::vector<Node>& nodes);
  std::string slice(const Node& like, const std::string& of, int64_t dim, int64_t start, int64_t end,
                    std::vector<Node>& nodes);
  void flatWeightBuffer(Node& n);
  const Node* soleReader(const std::string& id, const std::string& name) const;
  bool sequenceMajorRnn(const Node& n, std::vector<Node>& nodes);
  std::string transposed(const Node& like, const std::string& of, std::vector<int64_t> strides,
                         std::vector<Node>& nodes);

  // Tensors and nodes the rewrites make (GraphNormalize.cpp).
  TensorInfo& info(const std::string& id);
  std::string newTensor(const TensorInfo& like, std::vector<int64_t> shape, std::optional<std::string> viewOf = {});
  Node node(const Node& like, const std::string& op, std::vector<Argument> inputs, const std::string& out,
            NodeKind kind = NodeKind::Compute);
  void setProducer(const std::string& id, int nodeId);
  void setViewOf(const std::string& id, const std::string& base);
  // A tensor the forward reads through another's storage, as the in-place checks see it.
  bool isView(const std::string& id);
  // A tensor nothing reads after the node that makes it and the forward does not return.
  bool unused(const std::string& id) const { return !lastReader_.count(id) && !returned_.count(id); }

  Graph& g_;
  std::map<std::string, std::size_t> lastReader_;  // index in the captured nodes
  std::map<std::string, int> readers_;              // arguments that name each tensor
  std::map<std::string, std::string> pieceBase_;    // a split's piece → the tensor it splits
  std::map<std::string, int> aliases_;
  std::set<std::string> returned_;
  // A log_softmax's result that crossEntropy left unwritten → its logits and their log-sum-exps.
  std::map<std::string, std::pair<std::string, std::string>> logSoftmax_;
  // An `_unsafe_view`'s result that the capture gave no base, made a view by markView: the
  // in-place checks (isView) still take it for a tensor of its own, as ATen makes one only of a
  // temporary that nothing else reads (matmul's reshaped product).
  std::set<std::string> unsafeViews_;
  // Tensors made here, by id; the graph takes them in this order once the rewrites are done.
  std::map<std::string, TensorInfo> added_;
  // Captured nodes a rewrite of an earlier node made redundant (instance norm's view of its result),
  // and the captured tensors no node makes or reads after the rewrites (the views' results).
  std::set<int> skipped_;
  std::set<std::string> dropped_;
  int nextNode_ = 0;
};

}  // namespace stitch::agents::builtin::normalize
