// Rewrites of the captured graph before it is typed; see GraphNormalize.h.
#include "agents/builtin/GraphNormalize.h"

#include "agents/builtin/KernelBuilder.h"
#include "agents/builtin/NodeArgs.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

namespace stitch::agents::builtin {
namespace {

using nlohmann::json;

class Normalizer {
public:
  explicit Normalizer(json graph) : g_(std::move(graph)) {
    for (const json& n : g_["nodes"]) nextNode_ = std::max(nextNode_, n.value("id", 0) + 1);
    for (std::size_t i = 0; i < g_["tensors"].size(); ++i) {
      const json& t = g_["tensors"][i];
      byId_[t.value("id", "")] = t;
      captured_[t.value("id", "")] = i;
    }
  }

  json run() {
    json nodes = json::array();
    noteReaders();
    for (std::size_t i = 0; i < g_["nodes"].size(); ++i) {
      json& n = g_["nodes"][i];
      if (n.value("kind", "") == "inplace" && !restrideAsView(n)) functionalize(n, i);
      identityReduction(n);
      const std::string base = baseName(n.value("op", ""));
      if (trainingBatchNorm(n, base, nodes) || counterIncrement(n, base, nodes)) continue;
      if (base == "_unsafe_view") markView(n);
      listOfViews(n, base);
      if (base == "slice") wholeSliceAsView(n);
      if ((base == "addmm" || base == "baddbmm") && splitAddmm(n, base, nodes)) continue;
      if (base == "convolution" && splitConvBias(n, nodes)) continue;
      if (base == "set_") flatWeightBuffer(n);
      if (base == "_cudnn_rnn" && sequenceMajorRnn(n, nodes)) continue;
      if (base == "roll" && splitRoll(n, nodes)) continue;
      if (attentionKernel(base) && splitAttention(n, nodes)) continue;
      nodes.push_back(n);
    }
    g_["nodes"] = std::move(nodes);
    for (auto& [id, t] : added_) g_["tensors"].push_back(std::move(t));
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
        if (a.contains("tensor") && a["tensor"].is_string()) lastReader_[a["tensor"]] = i, ++readers_[a["tensor"]];
        if (a.contains("tensors"))
          for (const json& t : a["tensors"])
            if (t.is_string()) lastReader_[t] = i, ++readers_[t];
      }
    for (const json& t : g_["tensors"])
      if (t.contains("view_of") && t["view_of"].is_string()) ++aliases_[t["view_of"]];
    for (const json& n : all)  // their results become views of `self` (listOfViews)
      if (listOfViewsOp(baseName(n.value("op", ""))) && !argTensor(n, "self").empty())
        aliases_[argTensor(n, "self")] += static_cast<int>(n["outputs"].size());
    for (const json& o : g_["outputs"]) returned_.insert(o.get<std::string>());
    // A tensor the forward leaves in a module attribute outlives the call as a result does.
    for (const json& s : g_.value("state", json::array()))
      if (s.is_object() && s.contains("tensor") && s["tensor"].is_string()) returned_.insert(s["tensor"].get<std::string>());
  }

  // `relu_(x)` (nn.ReLU(inplace=True)), `hardtanh_`, `add_`, ... on an intermediate that nothing
  // reads afterwards under its old name, and that no other tensor aliases, computes what the
  // functional form does: it becomes that form, and its result a tensor of its own. A write into
  // a parameter, a buffer (BatchNorm's `num_batches_tracked += 1`), an input or a view stays
  // in-place: that write-back is observable. A piece of a split is such a view, but one no other
  // piece overlaps: a write into it is seen through its base alone (ATen's LSTM and GRU cells
  // apply sigmoid_ and add_ to their gates' chunks, whose base nothing else reads).
  void functionalize(json& n, std::size_t at) {
    const json* self = input(n, "self");
    if (!self || !self->contains("tensor") || n["outputs"].size() != 1) return;
    const std::string target = (*self)["tensor"];
    const json& info = byId_[target];
    const bool view = info.contains("view_of") && info["view_of"].is_string() && !pieceOfUnreadBase(target);
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

  // `as_strided_` that gives a tensor its own sizes and, on every dim of more than one element, its
  // own strides (adaptive average pooling on the CPU restrides its [N, C, 1, 1] mean so) moves no
  // element: a view of the tensor, as a reshape to its own sizes says.
  bool restrideAsView(json& n) {
    if (baseName(n.value("op", "")) != "as_strided_" || n["outputs"].size() != 1) return false;
    const std::string self = argTensor(n, "self");
    const json* size = input(n, "size");
    const json* stride = input(n, "stride");
    if (self.empty() || !size || !stride) return false;
    const auto sizes = intList(*size), strides = intList(*stride);
    const json& t = byId_[self];
    const std::vector<int64_t> shape = t["shape"], own = t["strides"];
    if (!sizes || !strides || *sizes != shape || strides->size() != own.size()) return false;
    for (std::size_t d = 0; d < shape.size(); ++d)
      if (shape[d] != 1 && (*strides)[d] != own[d]) return false;
    if (const json* offset = input(n, "storage_offset");
        offset && offset->contains("value") && !(*offset)["value"].is_null() &&
        (*offset)["value"] != t.value("storage_offset", json(0)))
      return false;
    n["op"] = "aten::view";
    n["kind"] = "view";
    n["inputs"] = json::array({tensorArg("self", self), valueArg("size", shape)});
    setViewOf(n["outputs"][0], self);
    return true;
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
    const auto dims = intList(*dim);
    if (!dims || dims->empty() || in.value("dtype", "") != byId_[out].value("dtype", "")) return;
    const auto rank = static_cast<int64_t>(shape.size());
    for (int64_t d : *dims) {
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
    setViewOf(out, source["tensor"]);
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

  // split, chunk and unbind return a list of views of `self`, which the capture records without a
  // base (the schema's alias sits on the list, not on each tensor); the unsafe_ forms are the same
  // views with no alias in their schema at all, recorded as compute. Each result becomes a view of
  // `self`, so its readers find the storage it is part of and read it through its own strides and
  // offset.
  static bool listOfViewsOp(const std::string& base) {
    static const std::set<std::string> ops{"split", "split_with_sizes", "chunk", "unbind", "tensor_split",
                                           "unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk"};
    return ops.count(base) > 0;
  }

  void listOfViews(json& n, const std::string& base) {
    const std::string self = argTensor(n, "self");
    if (!listOfViewsOp(base) || self.empty()) return;
    n["kind"] = "view";
    for (const json& o : n["outputs"]) {
      auto it = captured_.find(o.get<std::string>());
      if (it == captured_.end()) continue;
      g_["tensors"][it->second]["view_of"] = self;
      byId_[it->first]["view_of"] = self;
      pieceBase_[it->first] = self;
    }
  }

  // A piece of a split whose base only the split reads and the forward does not return.
  bool pieceOfUnreadBase(const std::string& id) const {
    auto it = pieceBase_.find(id);
    return it != pieceBase_.end() && readers_.count(it->second) && readers_.at(it->second) == 1 &&
           !returned_.count(it->second);
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

  static std::string argTensor(const json& node, const std::string& name) {
    const json* a = input(node, name);
    return a && a->contains("tensor") && (*a)["tensor"].is_string() ? (*a)["tensor"].get<std::string>() : "";
  }

  // A tensor nothing reads after the node that makes it and the forward does not return.
  bool unused(const std::string& id) const { return !lastReader_.count(id) && !returned_.count(id); }

  // A float32 [C] buffer the forward may write back into (running statistics).
  bool channelBuffer(const std::string& id, int64_t channels) {
    if (id.empty()) return false;
    const json& t = byId_[id];
    return t.value("role", "") == "buffer" && t.value("dtype", "") == "float32" && t["shape"] == json::array({channels}) &&
           !(t.contains("view_of") && t["view_of"].is_string()) && t["strides"] == json::array({1});
  }

  // Training-mode batch norm (every nn.BatchNorm* of a model that never calls .eval()) as the
  // plain nodes the planner fuses: per (n, c) row its mean and sum of squared deviations (two
  // passes over the row, as `normalize` takes a row), then per channel Chan's combination of the
  // rows (no cancellation where the mean dwarfs the spread, as PyTorch's Welford), the
  // normalization, and running_mean / running_var updated as PyTorch updates them (momentum,
  // the unbiased variance), each by a write-back node: copy_ into the buffer. A [N, C] input has
  // rows of one element, so its statistics are one pass over the batch instead. The saved
  // statistics (the other outputs) must be unread.
  bool trainingBatchNorm(const json& n, const std::string& base, json& nodes) {
    static const std::set<std::string> ops{"native_batch_norm", "_native_batch_norm_legit", "cudnn_batch_norm",
                                           "_batch_norm_with_update"};
    if (!ops.count(base) || n["outputs"].empty()) return false;
    const json* flag = input(n, "training");
    const bool training = base == "_batch_norm_with_update" || (flag && flag->value("value", json(false)) == json(true));
    if (!training) return false;
    for (std::size_t i = 1; i < n["outputs"].size(); ++i)
      if (!unused(n["outputs"][i])) return false;
    const std::string x = argTensor(n, "input"), w = argTensor(n, "weight"), b = argTensor(n, "bias");
    const std::string rm = argTensor(n, "running_mean"), rv = argTensor(n, "running_var");
    if (x.empty() || byId_[x].value("dtype", "") != "float32") return false;
    const std::vector<int64_t> shape = byId_[x]["shape"];
    if (shape.size() < 2) return false;
    const int64_t channels = shape[1];
    const bool update = !rm.empty() || !rv.empty();
    // Without running statistics and one sample (instance norm, which ATen runs as batch norm over
    // [1, N·C, ...]) the rows are the channels: the lowering normalizes each row in one kernel.
    if (!update && shape[0] == 1) return false;
    const json* m = input(n, base == "cudnn_batch_norm" ? "exponential_average_factor" : "momentum");
    if (update && (!channelBuffer(rm, channels) || !channelBuffer(rv, channels) || !m || !m->contains("value") ||
                   !(*m)["value"].is_number()))
      return false;  // momentum None (a cumulative average) stays in PyTorch
    const double momentum = update ? (*m)["value"].get<double>() : 0.0;
    const double eps = scalarOr(n, base == "cudnn_batch_norm" ? "epsilon" : "eps", 1e-5);
    const json& like = byId_[x];
    const auto rank = static_cast<int64_t>(shape.size());
    int64_t spatial = 1;
    for (int64_t d = 2; d < rank; ++d) spatial *= shape[d];
    const int64_t count = shape[0] * spatial;
    std::vector<int64_t> rowShape = shape, chanShape(shape.size(), 1);
    for (int64_t d = 2; d < rank; ++d) rowShape[d] = 1;
    chanShape[1] = channels;
    if (count < 2) return false;  // PyTorch refuses one value per channel in training
    std::vector<int64_t> rowDims;  // none where the spatial dims are all 1 (a squeeze-excite's [N, C, 1, 1])
    if (spatial > 1)
      for (int64_t d = 2; d < rank; ++d) rowDims.push_back(d);
    auto op = [&](const std::string& name, json inputs, const std::vector<int64_t>& s, std::string out = "") {
      if (out.empty()) out = newTensor(like, s);
      nodes.push_back(node(n, name, std::move(inputs), out));
      return out;
    };
    auto tensors2 = [](const std::string& a, const std::string& b2) {
      return json::array({tensorArg("self", a), tensorArg("other", b2)});
    };
    auto scalar = [](const std::string& a, double v) { return json::array({tensorArg("self", a), valueArg("other", v)}); };
    auto reduceArgs = [](const std::string& a, const std::vector<int64_t>& dims) {
      return json::array({tensorArg("self", a), valueArg("dim", dims), valueArg("keepdim", true)});
    };
    auto view = [&](const std::string& of, const std::vector<int64_t>& s) {
      const std::string out = newTensor(byId_[of], s, of);
      nodes.push_back(node(n, "aten::view", json::array({tensorArg("self", of), valueArg("size", s)}), out, "view"));
      return out;
    };
    std::string mean, m2;
    if (rowDims.empty()) {
      mean = op("aten::mean.dim", reduceArgs(x, {0}), chanShape);
      const std::string d = op("aten::sub.Tensor", tensors2(x, mean), shape);
      m2 = op("aten::sum.dim_IntList", reduceArgs(op("aten::mul.Tensor", tensors2(d, d), shape), {0}), chanShape);
    } else {
      mean = op("aten::mean.dim", reduceArgs(x, rowDims), rowShape);
      const std::string d = op("aten::sub.Tensor", tensors2(x, mean), shape);
      m2 = op("aten::sum.dim_IntList", reduceArgs(op("aten::mul.Tensor", tensors2(d, d), shape), rowDims), rowShape);
    }
    if (!rowDims.empty() && shape[0] > 1) {  // combine the samples' rows: M2 = Σ M2_row + S·Σ (mean_row − mean)²
      const std::string rowMean = mean, rowM2 = m2;
      mean = op("aten::mean.dim", reduceArgs(rowMean, {0}), chanShape);
      const std::string e = op("aten::sub.Tensor", tensors2(rowMean, mean), rowShape);
      const std::string spread =
          op("aten::mul.Scalar", scalar(op("aten::mul.Tensor", tensors2(e, e), rowShape), static_cast<double>(spatial)),
             rowShape);
      m2 = op("aten::sum.dim_IntList", reduceArgs(op("aten::add.Tensor", tensors2(rowM2, spread), rowShape), {0}),
              chanShape);
    }
    const std::string var = op("aten::div.Scalar", scalar(m2, static_cast<double>(count)), chanShape);
    const std::string rstd = op("aten::rsqrt", json::array({tensorArg("self", op("aten::add.Scalar", scalar(var, eps), chanShape))}),
                                chanShape);
    if (update) {
      // running = (1 - momentum) * running + momentum * batch statistic, computed over the
      // statistics' own [1, C, 1...] shape so that it joins the kernel that reduces them.
      auto writeBack = [&](const std::string& buffer, const std::string& stat) {
        const std::string old = op("aten::mul.Scalar", scalar(view(buffer, chanShape), 1.0 - momentum), chanShape);
        const std::string fresh = op("aten::add.Tensor",
                                     tensors2(old, op("aten::mul.Scalar", scalar(stat, momentum), chanShape)), chanShape);
        const std::string target = newTensor(byId_[buffer], {channels}, buffer);
        nodes.push_back(node(n, "aten::copy_", json::array({tensorArg("self", buffer), tensorArg("src", view(fresh, {channels}))}),
                             target, "inplace"));
      };
      writeBack(rm, mean);
      writeBack(rv, op("aten::div.Scalar", scalar(m2, static_cast<double>(count - 1)), chanShape));
    }
    const std::string out = n["outputs"][0];
    const bool affineW = !w.empty(), affineB = !b.empty();
    std::vector<int64_t> paramShape(shape.size() - 1, 1);
    paramShape[0] = channels;
    const std::string centered = op("aten::sub.Tensor", tensors2(x, mean), shape);
    std::string y = op("aten::mul.Tensor", tensors2(centered, rstd), shape, affineW || affineB ? "" : out);
    if (affineW) y = op("aten::mul.Tensor", tensors2(y, view(w, paramShape)), shape, affineB ? "" : out);
    if (affineB) op("aten::add.Tensor", tensors2(y, view(b, paramShape)), shape, out);
    return true;
  }

  // `num_batches_tracked += 1`: an integer buffer counted up by a write-back node.
  bool counterIncrement(const json& n, const std::string& base, json& nodes) {
    if (base != "add_" || n.value("kind", "") != "inplace" || n["outputs"].size() != 1) return false;
    const std::string target = argTensor(n, "self");
    const json* other = input(n, "other");
    if (target.empty() || !other || !other->contains("value") || !(*other)["value"].is_number_integer() ||
        scalarOr(n, "alpha", 1.0) != 1.0)
      return false;
    const json& t = byId_[target];
    if (t.value("role", "") != "buffer" || t.value("dtype", "") != "int64" || (t.contains("view_of") && t["view_of"].is_string()))
      return false;
    const std::vector<int64_t> shape = t["shape"];
    const std::string sum = newTensor(t, shape);
    nodes.push_back(node(n, "aten::add.Scalar", json::array({tensorArg("self", target), valueArg("other", (*other)["value"])}), sum));
    nodes.push_back(node(n, "aten::copy_", json::array({tensorArg("self", target), tensorArg("src", sum)}), n["outputs"][0],
                         "inplace"));
    return true;
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
    t["producer"] = nullptr;
    byId_[t["id"]] = t;
    const std::string id = t["id"];
    added_.emplace(id, std::move(t));
    return id;
  }

  json node(const json& like, const std::string& op, json inputs, const std::string& out,
            const std::string& kind = "compute") {
    json n = like;
    n["id"] = nextNode_++;
    n["op"] = op;
    n["inputs"] = std::move(inputs);
    n["outputs"] = json::array({out});
    n["kind"] = kind;
    n["result_index"] = nullptr;
    setProducer(out, n["id"]);
    return n;
  }

  // The node that now makes `id` (a tensor of the capture or one added here).
  void setProducer(const std::string& id, int nodeId) {
    if (auto it = added_.find(id); it != added_.end()) it->second["producer"] = nodeId;
    if (auto it = captured_.find(id); it != captured_.end()) g_["tensors"][it->second]["producer"] = nodeId;
    byId_[id]["producer"] = nodeId;
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
    const std::string view = reshaped(n, biasId, viewShape, nodes);
    nodes.push_back(node(n, "aten::add.Tensor", json::array({tensorArg("self", raw), tensorArg("other", view)}), out));
    return true;
  }

  // The fused attention kernels a GPU runs F.scaled_dot_product_attention with (float32 takes the
  // memory-efficient one; nn.MultiheadAttention without weights and nn.TransformerEncoderLayer
  // call it too).
  static bool attentionKernel(const std::string& base) {
    return base == "_scaled_dot_product_efficient_attention" || base == "_scaled_dot_product_flash_attention" ||
           base == "_scaled_dot_product_cudnn_attention";
  }

  // softmax(q kᵀ · scale + bias + causal mask) v, as PyTorch's math path computes attention: the
  // heads' batched GEMMs (bmm over batch × heads) around one row softmax with the scale and masks
  // fused (design §8). The causal mask is -inf above the diagonal, a filled [L, S] made triangular,
  // added. The result is written at the strides the kernel gave it, so the views the forward takes
  // of it stand. In half precision, with dropout, a grouped-query broadcast, or the kernel's
  // log-sum-exp or random state read, the node stays as captured.
  bool splitAttention(const json& n, json& nodes) {
    const std::string q = argTensor(n, "query"), k = argTensor(n, "key"), v = argTensor(n, "value");
    const std::string bias = argTensor(n, "attn_bias");
    if (q.empty() || k.empty() || v.empty() || n["outputs"].empty() || scalarOr(n, "dropout_p", 0.0) != 0.0) return false;
    for (const std::string& t : {q, k, v})  // the generated kernels are float32
      if (byId_[t].value("dtype", "") != "float32") return false;
    for (std::size_t i = 1; i < n["outputs"].size(); ++i)
      if (n["outputs"][i].is_string() && !unused(n["outputs"][i])) return false;
    const std::vector<int64_t> qs = byId_[q]["shape"], ks = byId_[k]["shape"], vs = byId_[v]["shape"];
    if (qs.size() != 4 || ks.size() != 4 || vs.size() != 4 || qs[0] != ks[0] || qs[1] != ks[1] || ks[0] != vs[0] ||
        ks[1] != vs[1] || ks[2] != vs[2] || qs[3] != ks[3])
      return false;
    const int64_t heads = qs[0] * qs[1], L = qs[2], S = ks[2], D = qs[3], Dv = vs[3];
    const json* scaleArg = input(n, "scale");
    const double scale = scaleArg && scaleArg->contains("value") && (*scaleArg)["value"].is_number()
                             ? (*scaleArg)["value"].get<double>()
                             : 1.0 / std::sqrt(static_cast<double>(D));
    const json* causalArg = input(n, "is_causal");
    const bool causal = causalArg && causalArg->contains("value") && (*causalArg)["value"] == true;
    const std::string out = n["outputs"][0];
    const json& like = byId_[out];

    const std::string q3 = batched(n, q, {heads, L, D}, nodes);
    const std::string kT = transposedLast(n, k, nodes);
    const std::string k3 = batched(n, kT, {heads, D, S}, nodes);
    const std::string v3 = batched(n, v, {heads, S, Dv}, nodes);
    std::string scores = newTensor(like, {heads, L, S});
    nodes.push_back(node(n, "aten::bmm", json::array({tensorArg("self", q3), tensorArg("mat2", k3)}), scores));
    scores = reshaped(n, scores, {qs[0], qs[1], L, S}, nodes);
    std::string logits = newTensor(like, {qs[0], qs[1], L, S});
    nodes.push_back(node(n, "aten::mul.Tensor", json::array({tensorArg("self", scores), valueArg("other", scale)}), logits));
    auto add = [&](const std::string& term) {
      const std::string sum = newTensor(like, {qs[0], qs[1], L, S});
      nodes.push_back(node(n, "aten::add.Tensor", json::array({tensorArg("self", logits), tensorArg("other", term)}), sum));
      logits = sum;
    };
    if (!bias.empty()) add(bias);
    if (causal) {
      const std::string filled = newTensor(like, {L, S}), mask = newTensor(like, {L, S});
      nodes.push_back(node(n, "aten::full", json::array({valueArg("size", std::vector<int64_t>{L, S}), valueArg("fill_value", "-inf")}),
                           filled));
      nodes.push_back(node(n, "aten::triu", json::array({tensorArg("self", filled), valueArg("diagonal", 1)}), mask));
      add(mask);
    }
    const std::string probs = newTensor(like, {qs[0], qs[1], L, S});
    nodes.push_back(node(n, "aten::_softmax",
                         json::array({tensorArg("self", logits), valueArg("dim", -1), valueArg("half_to_float", false)}), probs));
    const std::string p3 = batched(n, probs, {heads, L, S}, nodes);
    const std::string o3 = newTensor(like, {heads, L, Dv});
    nodes.push_back(node(n, "aten::bmm", json::array({tensorArg("self", p3), tensorArg("mat2", v3)}), o3));
    const std::string result = reshaped(n, o3, {qs[0], qs[1], L, Dv}, nodes);
    nodes.push_back(node(n, "aten::clone", json::array({tensorArg("self", result)}), out));
    return true;
  }

  // `of` [B, H, R, C] as the [B·H, R, C] a bmm takes: a view where its first two dims merge, else a
  // contiguous copy viewed so (what reshape does).
  std::string batched(const json& like, const std::string& of, const std::vector<int64_t>& shape, json& nodes) {
    const std::vector<int64_t> st = byId_[of]["strides"], sh = byId_[of]["shape"];
    if (sh[0] == 1 || sh[1] == 1 || st[0] == sh[1] * st[1]) {
      const std::string view = newTensor(byId_[of], shape, of);
      const int64_t lead = sh[1] == 1 ? st[0] : st[1];
      setStrides(view, {lead, st[2], st[3]});
      nodes.push_back(node(like, "aten::view", json::array({tensorArg("self", of), valueArg("size", shape)}), view, "view"));
      return view;
    }
    const std::string copy = newTensor(byId_[of], sh);
    nodes.push_back(node(like, "aten::clone", json::array({tensorArg("self", of), formatArg()}), copy));
    return reshaped(like, copy, shape, nodes);
  }

  // A view of the contiguous `of` with another shape of as many elements.
  std::string reshaped(const json& like, const std::string& of, const std::vector<int64_t>& shape, json& nodes) {
    const std::string view = newTensor(byId_[of], shape, of);
    nodes.push_back(node(like, "aten::view", json::array({tensorArg("self", of), valueArg("size", shape)}), view, "view"));
    return view;
  }

  // `of` with its last two dims swapped (kᵀ), a view.
  std::string transposedLast(const json& like, const std::string& of, json& nodes) {
    std::vector<int64_t> shape = byId_[of]["shape"], strides = byId_[of]["strides"];
    const std::size_t r = shape.size();
    std::swap(shape[r - 1], shape[r - 2]);
    std::swap(strides[r - 1], strides[r - 2]);
    const std::string view = newTensor(byId_[of], shape, of);
    setStrides(view, strides);
    nodes.push_back(node(like, "aten::transpose.int",
                         json::array({tensorArg("self", of), valueArg("dim0", -2), valueArg("dim1", -1)}), view, "view"));
    return view;
  }

  void setStrides(const std::string& id, const std::vector<int64_t>& strides) {
    byId_[id]["strides"] = strides;
    added_[id]["strides"] = strides;
  }

  // torch.roll along dims (a shifted window's `torch.roll(x, (-s, -s), (1, 2))`) is, per rolled dim,
  // the concatenation of its last `shift` elements and the rest: two slices of the tensor (views,
  // read through its strides) and a cat, which the planner generates. Each further dim rolls the
  // previous dim's result. A roll of the flattened tensor (no dims) stays as it is.
  bool splitRoll(const json& n, json& nodes) {
    const json* shiftsArg = input(n, "shifts");
    const json* dimsArg = input(n, "dims");
    std::string cur = argTensor(n, "self");
    if (cur.empty() || !shiftsArg || !dimsArg || n["outputs"].size() != 1) return false;
    const auto shifts = intList(*shiftsArg), dims = intList(*dimsArg);
    if (!shifts || !dims || dims->empty() || shifts->size() != dims->size()) return false;
    const std::string out = n["outputs"][0];
    const std::vector<int64_t> shape = byId_[out]["shape"];
    const auto rank = static_cast<int64_t>(shape.size());
    std::vector<std::pair<int64_t, int64_t>> rolls;  // (dim, elements moved from its end to its start)
    for (std::size_t i = 0; i < dims->size(); ++i) {
      const int64_t d = (*dims)[i] < 0 ? (*dims)[i] + rank : (*dims)[i];
      if (d < 0 || d >= rank) return false;
      const int64_t size = shape[d], shift = size ? (((*shifts)[i] % size) + size) % size : 0;
      if (shift) rolls.emplace_back(d, shift);
    }
    if (rolls.empty()) {
      nodes.push_back(node(n, "aten::clone", json::array({tensorArg("self", cur)}), out));
      return true;
    }
    for (std::size_t i = 0; i < rolls.size(); ++i) {
      const auto [d, shift] = rolls[i];
      const std::string tail = slice(n, cur, d, shape[d] - shift, shape[d], nodes);
      const std::string head = slice(n, cur, d, 0, shape[d] - shift, nodes);
      cur = i + 1 == rolls.size() ? out : newTensor(byId_[out], shape);
      nodes.push_back(node(n, "aten::cat", json::array({{{"name", "tensors"}, {"tensors", {tail, head}}}, valueArg("dim", d)}),
                           cur));
    }
    return true;
  }

  // A view of `of`'s elements [start, end) along `dim`, as aten::slice makes it.
  std::string slice(const json& like, const std::string& of, int64_t dim, int64_t start, int64_t end, json& nodes) {
    std::vector<int64_t> shape = byId_[of]["shape"];
    const std::vector<int64_t> strides = byId_[of]["strides"];
    shape[dim] = end - start;
    const std::string view = newTensor(byId_[of], shape, of);
    setStrides(view, strides);
    const int64_t offset = byId_[of].value("storage_offset", int64_t{0}) + start * strides[dim];
    byId_[view]["storage_offset"] = added_[view]["storage_offset"] = offset;
    nodes.push_back(node(like, "aten::slice.Tensor",
                         json::array({tensorArg("self", of), valueArg("dim", dim), valueArg("start", start),
                                      valueArg("end", end), valueArg("step", 1)}),
                         view, "view"));
    return view;
  }

  static std::optional<std::vector<int64_t>> intList(const json& arg) {
    if (!arg.contains("value")) return std::nullopt;
    const json& v = arg["value"];
    if (v.is_number_integer()) return std::vector<int64_t>{v.get<int64_t>()};
    if (!v.is_array()) return std::nullopt;
    std::vector<int64_t> r;
    for (const json& e : v) {
      if (!e.is_number_integer()) return std::nullopt;
      r.push_back(e.get<int64_t>());
    }
    return r;
  }

  // The node that reads `id` as its argument `name`, when it is the only reader of `id`.
  const json* soleReader(const std::string& id, const std::string& name) const {
    if (!readers_.count(id) || readers_.at(id) != 1) return nullptr;
    const json& reader = g_["nodes"][lastReader_.at(id)];
    return argTensor(reader, name) == id ? &reader : nullptr;
  }

  // PyTorch's try_get_weight_buf, `at::empty({0}).set_(weight[0].storage())`, hands _cudnn_rnn the
  // storage its parameters are views into: the whole of it from offset 0, of which the first
  // parameter is the start. The set_ becomes that view of the first parameter (as_strided over
  // its storage), so the ABI passes the parameter's pointer and a forward that leaves the RNN in
  // PyTorch makes the same view again; the empty tensor is then unread.
  void flatWeightBuffer(json& n) {
    if (overload(n.value("op", "")) != "source_Storage" || n["outputs"].size() != 1) return;
    const std::string buf = n["outputs"][0];
    const json* rnn = soleReader(buf, "weight_buf");
    const json* weights = rnn ? input(*rnn, "weight") : nullptr;
    if (!weights || !weights->contains("tensors") || (*weights)["tensors"].empty() || !(*weights)["tensors"][0].is_string())
      return;
    const std::string first = (*weights)["tensors"][0];
    const json& b = byId_[buf];
    const json& w = byId_[first];
    const std::vector<int64_t> shape = b["shape"];
    if (baseName(rnn->value("op", "")) != "_cudnn_rnn" || shape.size() != 1 || b["strides"] != json::array({1}) ||
        b.value("storage_offset", -1) != 0 || w.value("storage_offset", -1) != 0 || w.value("dtype", "") != b.value("dtype", ""))
      return;
    n["op"] = "aten::as_strided";
    n["kind"] = "view";
    n["inputs"] = json::array({tensorArg("self", first), valueArg("size", shape), valueArg("stride", json::array({1})),
                               valueArg("storage_offset", 0)});
    n["result_index"] = nullptr;
    setViewOf(buf, first);
  }

  // _cudnn_rnn with batch_first transposes its [N, T, I] input to a contiguous [T, N, I] copy, runs
  // cuDNN sequence-major and returns its [T, N, H] output transposed: the captured output's strides
  // are that transpose's, and the views the forward takes of it are computed from them. Said as
  // nodes: a transpose of the input, a contiguous clone (a generated copy kernel), the RNN
  // sequence-major, and the captured output a transpose view of what it writes.
  bool sequenceMajorRnn(json& n, json& nodes) {
    const json* first = input(n, "batch_first");
    const json* sizes = input(n, "batch_sizes");
    const std::string x = argTensor(n, "input");
    if (!first || first->value("value", json(false)) != json(true) || !sizes || sizes->value("value", json()) != json::array() ||
        x.empty() || n["outputs"].empty() || (n.contains("result_index") && n["result_index"].is_array() &&
                                              (n["result_index"].empty() || n["result_index"][0] != 0)))
      return false;
    const std::string out = n["outputs"][0];
    const std::vector<int64_t> xShape = byId_[x]["shape"], xStrides = byId_[x]["strides"];
    const std::vector<int64_t> outShape = byId_[out]["shape"], outStrides = byId_[out]["strides"];
    if (xShape.size() != 3 || outShape.size() != 3 || byId_[out].value("storage_offset", -1) != 0 ||
        outStrides != std::vector<int64_t>{outShape[2], outShape[0] * outShape[2], 1})
      return false;
    const std::string xt = transposed(n, x, xStrides, nodes);
    const std::string xc = newTensor(byId_[x], {xShape[1], xShape[0], xShape[2]});
    nodes.push_back(node(n, "aten::clone", json::array({tensorArg("self", xt), formatArg()}), xc));
    const std::string raw = newTensor(byId_[out], {outShape[1], outShape[0], outShape[2]});
    json rnn = n;
    for (json& a : rnn["inputs"]) {
      if (a.value("name", "") == "input") a = tensorArg("input", xc);
      if (a.value("name", "") == "batch_first") a = {{"name", "batch_first"}, {"value", false}, {"py", "False"}};
    }
    rnn["outputs"][0] = raw;
    setProducer(raw, rnn["id"]);
    nodes.push_back(rnn);
    nodes.push_back(node(n, "aten::transpose.int", transposeArgs(raw), out, "view"));
    setViewOf(out, raw);
    return true;
  }

  // A [T, N, ...] view of `of` ([N, T, ...]) with its first two dims swapped.
  std::string transposed(const json& like, const std::string& of, std::vector<int64_t> strides, json& nodes) {
    std::vector<int64_t> shape = byId_[of]["shape"];
    std::swap(shape[0], shape[1]);
    std::swap(strides[0], strides[1]);
    const std::string view = newTensor(byId_[of], shape, of);
    setStrides(view, strides);
    nodes.push_back(node(like, "aten::transpose.int", transposeArgs(of), view, "view"));
    return view;
  }

  static json transposeArgs(const std::string& of) {
    return json::array({tensorArg("self", of), valueArg("dim0", 0), valueArg("dim1", 1)});
  }

  static json formatArg() {
    return {{"name", "memory_format"}, {"value", "contiguous_format"}, {"py", "torch.contiguous_format"}, {"keyword", true}};
  }

  void setViewOf(const std::string& id, const std::string& base) {
    if (auto it = captured_.find(id); it != captured_.end()) g_["tensors"][it->second]["view_of"] = base;
    byId_[id]["view_of"] = base;
  }

  json g_;
  std::map<std::string, json> byId_;
  std::map<std::string, std::size_t> lastReader_;
  std::map<std::string, int> readers_;              // arguments that name each tensor
  std::map<std::string, std::string> pieceBase_;    // a split's piece → the tensor it splits
  std::map<std::string, int> aliases_;
  std::set<std::string> returned_;
  std::map<std::string, json> added_;             // tensors made here, by id
  std::map<std::string, std::size_t> captured_;  // the capture's tensors: id → index in g_["tensors"]
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
