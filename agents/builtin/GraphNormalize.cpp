// Rewrites of the captured graph before it is typed; see normalizeGraph in GraphIR.h.
#include "agents/builtin/GraphIR.h"

#include "agents/builtin/KernelBuilder.h"
#include "agents/builtin/NodeArgs.h"

#include <algorithm>
#include <set>

namespace stitch::agents::builtin {
namespace {

using nlohmann::json;

class Normalizer {
public:
  explicit Normalizer(json graph) : g_(std::move(graph)) {
    for (const json& n : g_["nodes"]) nextNode_ = std::max(nextNode_, n.value("id", 0) + 1);
    for (const json& t : g_["tensors"]) byId_[t.value("id", "")] = t;
  }

  json run() {
    json nodes = json::array();
    noteReaders();
    for (std::size_t i = 0; i < g_["nodes"].size(); ++i) {
      json& n = g_["nodes"][i];
      if (n.value("kind", "") == "inplace") functionalize(n, i);
      identityReduction(n);
      const std::string base = baseName(n.value("op", ""));
      if (base == "_unsafe_view") markView(n);
      if (base == "slice") wholeSliceAsView(n);
      if ((base == "addmm" || base == "baddbmm") && splitAddmm(n, base, nodes)) continue;
      if (base == "convolution" && splitConvBias(n, nodes)) continue;
      nodes.push_back(n);
    }
    g_["nodes"] = std::move(nodes);
    for (json& t : added_) g_["tensors"].push_back(std::move(t));
    return std::move(g_);
  }

private:
  static const json* input(const json& node, const std::string& name) {
    for (const json& a : node["inputs"])
      if (a.value("name", "") == name) return &a;
    return nullptr;
  }

  static double scalarOr(const json& node, const std::string& name, double fallback) {
    const json* a = input(node, name);
    if (!a || !a->contains("value") || !(*a)["value"].is_number()) return fallback;
    return (*a)["value"].get<double>();
  }

  // Per tensor: the last node that reads it, and whether another tensor aliases it.
  void noteReaders() {
    const json& all = g_["nodes"];
    for (std::size_t i = 0; i < all.size(); ++i)
      for (const json& a : all[i]["inputs"]) {
        if (a.contains("tensor") && a["tensor"].is_string()) lastReader_[a["tensor"]] = i;
        if (a.contains("tensors"))
          for (const json& t : a["tensors"])
            if (t.is_string()) lastReader_[t] = i;
      }
    for (const json& t : g_["tensors"])
      if (t.contains("view_of") && t["view_of"].is_string()) ++aliases_[t["view_of"]];
    for (const json& o : g_["outputs"]) returned_.insert(o.get<std::string>());
  }

  // `relu_(x)` (nn.ReLU(inplace=True)), `hardtanh_`, `add_`, ... on an intermediate that nothing
  // reads afterwards under its old name, and that no other tensor aliases, computes what the
  // functional form does: it becomes that form, and its result a tensor of its own. A write into
  // a parameter, a buffer (BatchNorm's `num_batches_tracked += 1`), an input or a view stays
  // in-place: that write-back is observable.
  void functionalize(json& n, std::size_t at) {
    const json* self = input(n, "self");
    if (!self || !self->contains("tensor") || n["outputs"].size() != 1) return;
    const std::string target = (*self)["tensor"];
    const json& info = byId_[target];
    const bool view = info.contains("view_of") && info["view_of"].is_string();
    if (info.value("role", "") != "intermediate" || view || returned_.count(target) || aliases_[target] > 1) return;
    if (auto it = lastReader_.find(target); it != lastReader_.end() && it->second > at) return;
    const std::string op = n.value("op", "");
    const std::string base = baseName(op);
    if (base.size() < 2 || base.back() != '_' || base[base.size() - 2] == '_') return;
    const std::string functional = "aten::" + base.substr(0, base.size() - 1) + (overload(op).empty() ? "" : "." + overload(op));
    if (classifyOp(functional) == OpClass::Unsupported) return;
    n["op"] = functional;
    n["kind"] = "compute";
    const std::string out = n["outputs"][0];
    for (json& t : g_["tensors"])
      if (t.value("id", "") == out) t["view_of"] = nullptr;
    byId_[out]["view_of"] = nullptr;
  }

  // A reduction whose dims all have size 1 (a max over a dim a keepdim reduction left, a mean over
  // a singleton channel) returns its input's values: sum, mean, amax, amin, prod and logsumexp of
  // one element are that element, exactly. It becomes a view of its input, which the planner fuses
  // into its neighbours. max.dim / min.dim qualify only when nothing reads their indices.
  void identityReduction(json& n) {
    static const std::set<std::string> ops{"sum", "mean", "amax", "amin", "prod", "logsumexp", "max", "min"};
    const std::string op = n.value("op", "");
    const std::string base = baseName(op);
    if (!ops.count(base) || n["outputs"].empty()) return;
    const bool withIndices = base == "max" || base == "min";
    if (withIndices && (overload(op) != "dim" || n["outputs"].size() != 2 || lastReader_.count(n["outputs"][1]) ||
                        returned_.count(n["outputs"][1])))
      return;
    if (!withIndices && n["outputs"].size() != 1) return;
    const json* self = input(n, "self");
    const json* dim = input(n, "dim");
    if (!self || !self->contains("tensor") || !dim || !dim->contains("value")) return;
    const json& in = byId_[(*self)["tensor"]];
    const std::string out = n["outputs"][0];
    const std::vector<int64_t> shape = in["shape"];
    std::vector<int64_t> dims;
    if ((*dim)["value"].is_number_integer()) dims.push_back((*dim)["value"].get<int64_t>());
    else if ((*dim)["value"].is_array())
      for (const json& d : (*dim)["value"])
        if (d.is_number_integer()) dims.push_back(d.get<int64_t>());
    if (dims.empty() || in.value("dtype", "") != byId_[out].value("dtype", "")) return;
    const auto rank = static_cast<int64_t>(shape.size());
    for (int64_t d : dims) {
      const int64_t p = d < 0 ? d + rank : d;
      if (p < 0 || p >= rank || shape[p] != 1) return;
    }
    const std::vector<int64_t> outShape = byId_[out]["shape"];
    const json source = *self;  // `self` points into the inputs replaced below
    n["op"] = "aten::view";
    n["kind"] = "view";
    n["inputs"] = json::array({source, valueArg("size", outShape)});
    n["outputs"] = json::array({out});
    n.erase("result_index");
    for (json& t : g_["tensors"])
      if (t.value("id", "") == out) t["view_of"] = source["tensor"];
    byId_[out]["view_of"] = source["tensor"];
  }

  // `_unsafe_view` only reshapes (ATen uses it where autograd need not track the alias): the
  // harness records it as compute with no base, which would make a copy kernel of a reshape.
  void markView(json& n) {
    const json* self = input(n, "self");
    if (!self || !self->contains("tensor") || n["outputs"].size() != 1) return;
    n["kind"] = "view";
    const std::string out = n["outputs"][0];
    for (json& t : g_["tensors"])
      if (t.value("id", "") == out) t["view_of"] = (*self)["tensor"];
  }

  // x[:, :, None] slices every dim whole: the same tensor, which a reshape says more plainly.
  void wholeSliceAsView(json& n) {
    const json* self = input(n, "self");
    if (!self || !self->contains("tensor") || n["outputs"].size() != 1) return;
    const std::vector<int64_t> in = byId_[(*self)["tensor"]]["shape"];
    const std::vector<int64_t> out = byId_[n["outputs"][0]]["shape"];
    const double step = scalarOr(n, "step", 1.0), start = scalarOr(n, "start", 0.0);
    if (in != out || step != 1.0 || start != 0.0) return;
    n["op"] = "aten::view";
    n["inputs"] = json::array({*self, valueArg("size", out)});
  }

  std::string newTensor(const json& like, std::vector<int64_t> shape, std::optional<std::string> viewOf = {}) {
    json t = like;
    t["id"] = "n" + std::to_string(added_.size());
    t["shape"] = shape;
    std::vector<int64_t> strides(shape.size(), 1);
    for (std::size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
    t["strides"] = strides;
    t["storage_offset"] = viewOf ? byId_[*viewOf].value("storage_offset", 0) : 0;
    t["role"] = "intermediate";
    t["name"] = nullptr;
    t["view_of"] = viewOf ? json(*viewOf) : json(nullptr);
    added_.push_back(t);
    return t["id"];
  }

  json node(const json& like, const std::string& op, json inputs, const std::string& out,
            const std::string& kind = "compute") {
    json n = like;
    n["id"] = nextNode_++;
    n["op"] = op;
    n["inputs"] = std::move(inputs);
    n["outputs"] = json::array({out});
    n["kind"] = kind;
    return n;
  }

  static json tensorArg(const std::string& name, const std::string& id) { return {{"name", name}, {"tensor", id}}; }
  static json valueArg(const std::string& name, json v) { return {{"name", name}, {"value", std::move(v)}}; }

  // addmm(self, mat1, mat2, beta, alpha) = beta * self + alpha * (mat1 @ mat2): the product
  // becomes mm (bmm for baddbmm), and the scaling and the add explicit nodes after it, which
  // the planner folds into the library's epilogue or fuses into a generated kernel.
  bool splitAddmm(const json& n, const std::string& base, json& nodes) {
    const json* self = input(n, "self");
    const json* a = input(n, base == "addmm" ? "mat1" : "batch1");
    const json* b = input(n, base == "addmm" ? "mat2" : "batch2");
    if (!self || !a || !b || !self->contains("tensor") || !a->contains("tensor") || !b->contains("tensor") ||
        n["outputs"].size() != 1)
      return false;
    const double beta = scalarOr(n, "beta", 1.0), alpha = scalarOr(n, "alpha", 1.0);
    const std::string out = n["outputs"][0];
    const json& outInfo = byId_[out];
    const std::vector<int64_t> shape = outInfo["shape"];
    std::string product = newTensor(outInfo, shape);
    nodes.push_back(node(n, base == "addmm" ? "aten::mm" : "aten::bmm",
                         json::array({tensorArg("self", (*a)["tensor"]), tensorArg("mat2", (*b)["tensor"])}), product));
    const bool last = beta == 0.0;
    if (alpha != 1.0) {
      const std::string scaled = last ? out : newTensor(outInfo, shape);
      nodes.push_back(node(n, "aten::mul.Scalar", json::array({tensorArg("self", product), valueArg("other", alpha)}),
                           scaled));
      product = scaled;
    }
    if (last) {
      if (alpha == 1.0) nodes.back()["outputs"] = json::array({out});
      return true;
    }
    std::string addend = (*self)["tensor"];
    if (beta != 1.0) {
      const std::vector<int64_t> selfShape = byId_[addend]["shape"];
      const std::string scaled = newTensor(byId_[addend], selfShape);
      nodes.push_back(node(n, "aten::mul.Scalar", json::array({tensorArg("self", addend), valueArg("other", beta)}),
                           scaled));
      addend = scaled;
    }
    nodes.push_back(node(n, "aten::add.Tensor", json::array({tensorArg("self", product), tensorArg("other", addend)}), out));
    return true;
  }

  // convolution(input, weight, bias, ...) with a bias: the library computes the convolution and
  // the bias becomes an add of a [C, 1, ...] view, the first step of the fused tail.
  bool splitConvBias(const json& n, json& nodes) {
    const json* bias = input(n, "bias");
    if (!bias || !bias->contains("tensor") || n["outputs"].size() != 1) return false;
    const std::string out = n["outputs"][0];
    const json& outInfo = byId_[out];
    const std::vector<int64_t> outShape = outInfo["shape"];
    if (outShape.size() < 3) return false;
    json conv = n;
    for (json& a : conv["inputs"])
      if (a.value("name", "") == "bias") a = valueArg("bias", nullptr);
    const std::string raw = newTensor(outInfo, outShape);
    conv["outputs"] = json::array({raw});
    nodes.push_back(conv);
    const std::string biasId = (*bias)["tensor"];
    std::vector<int64_t> viewShape(outShape.size() - 1, 1);
    viewShape[0] = outShape[1];
    const std::string view = newTensor(byId_[biasId], viewShape, biasId);
    nodes.push_back(node(n, "aten::view", json::array({tensorArg("self", biasId), valueArg("size", viewShape)}), view, "view"));
    nodes.push_back(node(n, "aten::add.Tensor", json::array({tensorArg("self", raw), tensorArg("other", view)}), out));
    return true;
  }

  json g_;
  std::map<std::string, json> byId_;
  std::map<std::string, std::size_t> lastReader_;
  std::map<std::string, int> aliases_;
  std::set<std::string> returned_;
  std::vector<json> added_;
  int nextNode_ = 0;
};

}  // namespace

nlohmann::json normalizeGraph(nlohmann::json graph) {
  if (!graph.is_object() || !graph.contains("nodes") || !graph.contains("tensors") || !graph["nodes"].is_array() ||
      !graph["tensors"].is_array())
    return graph;  // parseGraph says what is missing
  return Normalizer(std::move(graph)).run();
}

}  // namespace stitch::agents::builtin
