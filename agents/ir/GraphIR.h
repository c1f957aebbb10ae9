// The harness's captured ATen graph (schema stitchcuda.graph/1, protocol/HARNESS.md) as typed
// structs, shared by both brains: the planner, coder and prompts read these, never raw JSON. Parsing reports the first field
// that does not fit, with the node or tensor it belongs to.
#pragma once

#include "agents/ir/IrTypes.h"
#include "agents/ir/Outcome.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

namespace stitch::agents::ir {

struct SourceRef {
  std::string file;
  int line = 0;  // one-based, as the harness reports it
  std::string function;
};

struct TensorInfo {
  std::string id;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // in elements
  int64_t storageOffset = 0;
  Named<DType> dtype = DType::Float32;
  Named<Role> role = Role::Intermediate;  // attribute: a module's plain tensor attribute
  std::optional<std::string> name;
  std::optional<int> producer;
  std::optional<std::string> viewOf;
  std::optional<std::string> py;  // a small constant as Python source (role constant), when the harness could write it
  std::string device;             // where the capture saw it ("cpu", "cuda:0"); "" when not recorded

  int64_t numel() const;
  int64_t elementBytes() const;  // 0 for a dtype the brain does not know
  int64_t bytes() const { return numel() * elementBytes(); }
  bool contiguous() const;
  // Its elements fill numel() consecutive elements in some order of its dims (a transposed or
  // permuted contiguous tensor, as eager's elementwise ops return for such an input).
  bool dense() const;
  // The strides a buffer for it is made with: its own where they are dense, else contiguous.
  std::vector<int64_t> allocationStrides() const;
};

// A non-tensor argument: None, bool, int, float, string, an int or float list, or something
// the brain does not read (kept as its JSON text for messages).
struct Other {
  std::string text;
};
using ScalarValue = std::variant<std::monostate, bool, int64_t, double, std::string, std::vector<int64_t>,
                                 std::vector<double>, Other>;

struct Argument {
  std::string name;
  std::optional<std::string> tensor;  // a single tensor argument
  std::vector<std::string> tensors;   // a tensor list argument
  ScalarValue value;                  // when neither of the above
  std::string py;        // the value as Python source, as the harness wrote it (empty: not given)
  bool keyword = false;  // passed by name (a keyword-only argument of the schema)
  // Every tensor id the argument names: its list's (a None in it is an empty id), then the single one.
  std::vector<std::string> tensorIds() const;
};

struct Node {
  int id = 0;
  std::string op;    // aten::add.Tensor
  Named<NodeKind> kind = NodeKind::Compute;
  std::string module;
  std::vector<Argument> inputs;
  std::vector<std::string> outputs;
  // For an op that returns a tuple or list: each output's position in it.
  std::optional<std::vector<int>> resultIndex;
  std::optional<SourceRef> source;

  const Argument* arg(const std::string& name) const;
  // Where the node is, for messages: "aten::gelu (node 3, task.py:12)".
  std::string where() const;
};

struct UncoveredOp {
  std::string op;
  std::string reason;
  std::optional<SourceRef> source;
  std::optional<int> node;  // the graph node left in PyTorch (none: a capture-wide note)
  std::size_t afterSteps = 0;  // how many planned steps run before it
};

// How ModelNew builds its parameters as Model does (harness model_source.py): the task file's
// module-level code it needs, and Model's class body less its forward.
struct Construction {
  std::string prelude;
  std::string body;
};

// The memory format the planner chose for the graph's tensors (MemoryFormat.h): those it gave
// channels-last strides (its conversions included), and why, for the plan's text. Empty: every
// tensor keeps the layout it was captured with.
struct LayoutChoice {
  std::set<std::string> channelsLast;
  std::string why;
  bool operator==(const LayoutChoice&) const = default;
};

struct Graph {
  std::string task;
  std::string device;
  std::string torch;
  std::vector<TensorInfo> tensors;
  std::vector<Node> nodes;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  // The tensor attributes the forward rebinds (`self.hidden = torch.tanh(...)`): each dotted name
  // with the tensor it holds when the forward returns, state the next call reads. Such a tensor
  // that the forward does not return is one of the last `stateOutputs` of `outputs`, so that the
  // plan treats it as a result: written whole, into a fresh tensor each call.
  std::vector<std::pair<std::string, std::string>> state;
  std::size_t stateOutputs = 0;
  std::vector<UncoveredOp> uncovered;
  std::optional<Construction> construction;
  std::map<int, std::string> inputValues;  // non-tensor forward inputs by position, as Python source
  // dim 0's size where every tensor input and output has it and the capture's batch probe found
  // each row computed from that row alone: a program for these rows serves others in chunks.
  std::optional<int64_t> independentRows;
  LayoutChoice layout;

  const TensorInfo* tensor(const std::string& id) const;
  const Node* node(int id) const;
  // The tensor the ABI passes for `t`: the root of its view chain, when ModelNew can pass it
  // (not a constant made outside ATen, and an intermediate only when dense, as the generated
  // buffers are: made with its recorded strides); otherwise why not.
  Outcome<const TensorInfo*> abiRoot(const TensorInfo& t) const;
  // The end of `t`'s view chain (views and in-place results): the tensor whose storage it is.
  const TensorInfo* viewRoot(const TensorInfo& t) const;
  // Whether `id` is `target` or a view of it (anywhere along its view chain).
  bool reaches(const std::string& id, const std::string& target) const;
  // A tensor the host adds (a layout conversion's result); its id must be new.
  void addTensor(TensorInfo t);
  // A node the host adds, run before the node at `position` of `nodes`; its id must be new.
  void insertNode(std::size_t position, Node n);
  // The built-in brain's normalization (builtin/normalize/GraphNormalize.h) rewrites tensors in place (a
  // base, a producer, strides) and the node list as a whole: their ids, which the indexes key on,
  // stay as they are, and each node's id is unique.
  TensorInfo* tensor(const std::string& id);
  void replaceNodes(std::vector<Node> replacement);
  // Drops tensors a rewrite left that no node, output or module state names any more.
  void removeTensors(const std::set<std::string>& ids);

private:
  friend Outcome<Graph> parseGraph(const nlohmann::json& j);
  void indexNodes();  // nodeIndex_ from `nodes` as they stand
  // Hashed: the planner asks for tensors by id in loops over the whole graph (a network of 500+
  // operators spent seconds in an ordered map's string comparisons).
  std::unordered_map<std::string, std::size_t> tensorIndex_;
  std::unordered_map<int, std::size_t> nodeIndex_;
};

Outcome<Graph> parseGraph(const nlohmann::json& j);
// The graph as stitchcuda.graph/1 again, for tools and reports that read the capture's JSON: every
// field parseGraph reads, so that parseGraph(writeGraph(g)) is g (less the planner's own: the
// uncovered ops' node and step, the layout). An empty tensor-list argument reads back as None.
nlohmann::json writeGraph(const Graph& g);

// Reads scalars as numbers: ints and bools widen to double; anything else is nullopt.
std::optional<double> asNumber(const ScalarValue& v);
// Reads an int or an int list as a list of dims.
std::optional<std::vector<int64_t>> asIntList(const ScalarValue& v);

}  // namespace stitch::agents::ir

// The built-in brain, where this IR grew, names its types as its own.
namespace stitch::agents::builtin {
using namespace ir;
}  // namespace stitch::agents::builtin
