// The layout pass and the iteration order of kernels over channels-last tensors; see
// MemoryFormat.h.
#include "agents/builtin/plan/MemoryFormat.h"

#include "agents/builtin/kernel/NodeArgs.h"
#include "agents/builtin/lower/KernelBuilder.h"
#include "agents/builtin/ops/OpDef.h"
#include "agents/builtin/plan/RuntimeRows.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <optional>

namespace stitch::agents::builtin {

std::string whyNotChannelsLast(const Graph& graph, const Node& node, const PlannerOptions& options) {
  if (ops::libraryKind(node.op) != ops::LibraryKind::Convolution || generatesConvolution(graph, node))
    return "not a convolution cuDNN runs (the generated depthwise kernel reads any layout)";
  if (options.layout == LayoutMode::Nchw) return "the job asks for NCHW (--layout nchw)";
  // By default only where cuDNN runs the convolution in TF32 (eager's cudnn.allow_tf32): its
  // tensor-core kernels work in NHWC and an NCHW call pays transposes around them, which
  // channels-last activations avoid. Exact fp32 (FMA) algorithms gain nothing from the layout.
  if (options.layout == LayoutMode::Auto && !options.convTf32)
    return "exact fp32 convolutions (cuDNN's FMA algorithms) gain nothing from channels-last";
  const Argument* in = node.arg("input");
  const Argument* w = node.arg("weight");
  if (!in || !in->tensor || !w || !w->tensor || node.outputs.size() != 1) return "not a plain convolution";
  const TensorInfo* x = graph.tensor(*in->tensor);
  const TensorInfo* out = graph.tensor(node.outputs[0]);
  // A transposed convolution runs too: cuDNN's backward-data kernels work in NHWC as the forward ones
  // do, and an NCHW call pays cuDNN's conversions of its input and result around them (on level2/93
  // on an H100, 886 of the candidate's 2417 µs went to converting the result back to NCHW,
  // bench/results/conv_tails_2026-11-28_h100). The direct gather kernel reads NCHW only, so a
  // channels-last call measures cuDNN's algorithms alone (directDeconvTile).
  // Grouped convolutions run a cuDNN call per group over NCHW slices (LibraryEmitter's group split).
  if (number(node, "groups", 1) != 1) return "a grouped convolution (one cuDNN call per group over NCHW slices)";
  if (!x || !out || x->dtype != "float32" || (x->shape.size() != 4 && x->shape.size() != 5) ||
      out->shape.size() != x->shape.size())
    return "only float32 2-D and 3-D convolutions run channels-last";
  // A stem of a few input channels keeps NCHW: the direct kernel measured against cuDNN there
  // (LibraryCall.h directConvTile) ran 1.3-2.2x faster than cuDNN for 1, 3 and 6 channels
  // (bench/results/conv_direct_2026-11-23_h100.md), and it reads NCHW.
  // Asked for channels-last (the job, or the refine step's layout trial that measures it), a stem
  // runs it too: level1/60's 3-D convolution of 3 channels took 10.1 ms in NCDHW and 3.0 ms in
  // NDHWC on an H200 (bench/results/convt_as_conv_2026-11-29_h200).
  constexpr int64_t kFewestChannels = 8;
  if (options.layout != LayoutMode::ChannelsLast && x->shape[1] < kFewestChannels)
    return "a stem of " + std::to_string(x->shape[1]) + " input channel(s), where the direct NCHW kernel competes";
  return "";
}

bool convolutionPrefersChannelsLast(const Graph& graph, const Node& node, const PlannerOptions& options) {
  return whyNotChannelsLast(graph, node, options).empty();
}

bool regionWorthChannelsLast(int convolutions, int copiedInputs, const PlannerOptions& options) {
  if (convolutions == 0) return false;
  if (options.layout == LayoutMode::ChannelsLast) return true;
  // By default a network, not a lone convolution: copying the forward's input to NHWC costs a
  // pass over it, which one convolution's faster kernels are not known to repay (unmeasured); a
  // region where some convolution reads what a generated kernel wrote in NHWC pays no copy there.
  return copiedInputs < convolutions;
}

namespace {

bool inferenceBatchNorm(const Node& n) {
  const std::string b = baseName(n.op);
  if (inferenceOnlyBatchNorm(b)) return true;
  return isBatchNorm(b) && b != "_batch_norm_with_update" && number(n, "training", 0) == 0;
}

// Whether `n` computes its first output, a full-size activation, through the output's strides
// whatever they are (a generated kernel writes any dense layout; cuDNN is told the layout).
bool writesAnyLayout(const Graph& g, const Node& n, const PlannerOptions& o) {
  const std::string b = baseName(n.op);
  if (n.kind != "compute") return false;
  if (ops::libraryKind(n.op) == ops::LibraryKind::Convolution)
    return generatesConvolution(g, n) || convolutionPrefersChannelsLast(g, n, o);
  if (isBatchNorm(b)) return inferenceBatchNorm(n);
  if (ops::isPooling(n.op)) return true;
  return classifyOp(n.op) == OpClass::Elementwise;
}

// Whether `n` reads its argument `arg` through the tensor's strides whatever they are.
bool readsAnyLayout(const Graph& g, const Node& n, const std::string& arg, const PlannerOptions& o) {
  const std::string b = baseName(n.op);
  if (n.kind == "view") return false;
  if (ops::libraryKind(n.op) == ops::LibraryKind::Convolution) return arg == "input" && writesAnyLayout(g, n, o);
  if (isBatchNorm(b)) return arg == "input" && inferenceBatchNorm(n);
  if (ops::isPooling(n.op)) return arg == "self";
  const OpClass c = classifyOp(n.op);
  return c == OpClass::Elementwise || c == OpClass::Reduction;
}

// A 4-D or 5-D float32 activation the program makes and uses only inside, whose producer and
// readers all take any layout: one that may run channels-last.
// (The producer is found by the node that lists the tensor: normalization's rewrites do not all
// record it on the tensor.)
// A dense 4-D or 5-D float32 intermediate whose two layouts differ (more than one channel and one pixel).
bool mayRunChannelsLastShape(const TensorInfo& t) {
  if (t.role != "intermediate" || t.dtype != "float32" || (t.shape.size() != 4 && t.shape.size() != 5) || t.viewOf ||
      !t.contiguous())
    return false;
  int64_t spatial = 1;
  for (std::size_t d = 2; d < t.shape.size(); ++d) spatial *= t.shape[d];
  return t.shape[1] != 1 && spatial != 1;
}

bool mayRunChannelsLast(const Graph& g, const TensorInfo& t, const PlannerOptions& o) {
  if (!mayRunChannelsLastShape(t)) return false;
  for (const auto& out : g.outputs)
    if (g.reaches(out, t.id)) return false;
  const auto p = std::find_if(g.nodes.begin(), g.nodes.end(),
                              [&](const Node& n) { return std::find(n.outputs.begin(), n.outputs.end(), t.id) != n.outputs.end(); });
  if (p == g.nodes.end() || p->outputs[0] != t.id || !writesAnyLayout(g, *p, o)) return false;
  for (const Node& n : g.nodes)
    for (const Argument& a : n.inputs)
      for (const auto& id : a.tensorIds()) {
        if (id.empty() || !g.reaches(id, t.id)) continue;
        if (id != t.id || !readsAnyLayout(g, n, a.name, o)) return false;  // a view of it, or a reader that needs NCHW
      }
  return true;
}

// The connected regions of `chosen` (tensors joined by the nodes that read or write them).
std::vector<std::set<std::string>> regions(const Graph& g, const std::set<std::string>& chosen) {
  std::map<std::string, std::string> parent;
  for (const auto& id : chosen) parent[id] = id;
  std::function<std::string(const std::string&)> find = [&](const std::string& id) {
    return parent[id] == id ? id : parent[id] = find(parent[id]);
  };
  for (const Node& n : g.nodes) {
    std::vector<std::string> ids = n.outputs;
    for (const Argument& a : n.inputs)
      for (const auto& id : a.tensorIds()) ids.push_back(id);
    std::string first;
    for (const auto& id : ids) {
      if (!chosen.count(id)) continue;
      if (first.empty()) first = find(id);
      else parent[find(id)] = first;
    }
  }
  std::map<std::string, std::set<std::string>> byRoot;
  for (const auto& id : chosen) byRoot[find(id)].insert(id);
  std::vector<std::set<std::string>> out;
  for (auto& [root, members] : byRoot) out.push_back(std::move(members));
  return out;
}

// A clone node copying `from` into `to`, credited to the module and source line of `at`.
Node cloneNode(const Node& at, const std::string& from, const std::string& to, int& nextNode) {
  Node n;
  n.id = nextNode++;
  n.op = std::string("aten::") + ops::opname::kClone;
  n.kind = "compute";
  n.module = at.module;
  n.source = at.source;
  Argument self;
  self.name = "self";
  self.tensor = from;
  n.inputs.push_back(std::move(self));
  n.outputs.push_back(to);
  return n;
}

// A new intermediate shaped as `like`, in channels-last strides: its id `like`'s with "_cl" (and "_"
// until unused).
TensorInfo channelsLastTwin(const Graph& g, const TensorInfo& like) {
  TensorInfo t;
  t.id = like.id + "_cl";
  while (g.tensor(t.id)) t.id += "_";
  t.shape = like.shape;
  t.strides = channelsLastStrides(like.shape);
  t.dtype = like.dtype;
  t.role = "intermediate";
  return t;
}

// A clone of `source` in channels-last strides, made by a node run just before the node at
// `position`: the conversion where a region begins (a forward input, a filter).
std::string convert(Graph& g, const std::string& source, std::size_t position, int& nextNode) {
  TensorInfo t = channelsLastTwin(g, *g.tensor(source));
  Node n = cloneNode(g.nodes[position], source, t.id, nextNode);
  t.producer = n.id;
  const std::string id = t.id;
  g.addTensor(std::move(t));
  g.insertNode(position, std::move(n));
  return id;
}

// Asked for channels-last: a convolution that would run it but whose result the forward returns
// (or a reader needs in NCHW) writes an activation of its own, and a copy node after it writes
// that into the result's NCHW tensor. So a lone convolution runs channels-last too, its input,
// filter and result converted around it; the refine step's layout trial measures whether that
// pays (level1/60 on an H200: 3.0 ms in NDHWC plus 1.9 ms of conversions against 10.1 ms in NCDHW).
void splitNchwResults(Graph& g, const PlannerOptions& o, int& nextNode) {
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.outputs.size() != 1 || !convolutionPrefersChannelsLast(g, n, o)) continue;
    const TensorInfo* t = g.tensor(n.outputs[0]);
    if (!t || t->viewOf || mayRunChannelsLast(g, *t, o)) continue;
    TensorInfo own = channelsLastTwin(g, *t);
    own.strides = t->strides;  // row-major like any candidate of a region, which layOut then lays out
    if (!mayRunChannelsLastShape(own)) continue;  // not dense, or both layouts are one
    Node copy = cloneNode(n, own.id, t->id, nextNode);
    own.producer = n.id;
    g.tensor(n.outputs[0])->producer = copy.id;
    g.nodes[i].outputs[0] = own.id;
    g.addTensor(std::move(own));
    g.insertNode(i + 1, std::move(copy));
  }
}

}  // namespace

Graph layOut(Graph g, const PlannerOptions& o) {
  if (o.layout == LayoutMode::Nchw) return g;
  int nextNode = 0;
  for (const Node& n : g.nodes) nextNode = std::max(nextNode, n.id + 1);
  if (o.layout == LayoutMode::ChannelsLast) splitNchwResults(g, o, nextNode);
  std::set<std::string> chosen;
  for (const TensorInfo& t : g.tensors)
    if (mayRunChannelsLast(g, t, o)) chosen.insert(t.id);
  if (chosen.empty()) return g;
  // A convolution runs in one layout: where its output keeps NCHW, so does its input.
  auto convs = [&] {
    std::vector<const Node*> r;
    for (const Node& n : g.nodes)
      if (convolutionPrefersChannelsLast(g, n, o)) r.push_back(&n);
    return r;
  }();
  for (bool changed = true; changed;) {
    changed = false;
    for (const Node* n : convs)
      if (!chosen.count(n->outputs[0]) && chosen.erase(*n->arg("input")->tensor)) changed = true;
  }
  std::set<std::string> kept;
  int regionCount = 0;
  for (const auto& region : regions(g, chosen)) {
    int regionConvs = 0;
    std::set<std::string> copied;  // activations its convolutions read from outside it
    for (const Node* n : convs) {
      if (!region.count(n->outputs[0])) continue;
      ++regionConvs;
      const std::string& x = *n->arg("input")->tensor;
      if (!region.count(x) && !isChannelsLast(*g.tensor(x))) copied.insert(x);
    }
    if (regionWorthChannelsLast(regionConvs, static_cast<int>(copied.size()), o)) {
      kept.insert(region.begin(), region.end());
      ++regionCount;
    }
  }
  if (kept.empty()) return g;
  for (TensorInfo& t : g.tensors)
    if (kept.count(t.id)) t.strides = channelsLastStrides(t.shape);
  // Each such convolution's input and filter, where not channels-last already, read from a
  // channels-last copy (one per tensor, before its first reader). The filter is copied on every
  // call: it is a few percent of the convolution's traffic, and a copy kept across calls would go
  // stale when a user trains the parameter in place.
  std::map<std::string, std::string> copies;
  int convCount = 0;
  std::vector<int> convIds;
  for (const Node* n : convs)
    if (kept.count(n->outputs[0])) convIds.push_back(n->id);
  for (int id : convIds) {
    ++convCount;
    for (const char* arg : {"input", "weight"}) {
      auto position = static_cast<std::size_t>(
          std::find_if(g.nodes.begin(), g.nodes.end(), [&](const Node& m) { return m.id == id; }) - g.nodes.begin());
      Argument* a = nullptr;
      for (Argument& candidate : g.nodes[position].inputs)
        if (candidate.name == arg) a = &candidate;
      const std::string source = *a->tensor;
      if (isChannelsLast(*g.tensor(source))) continue;
      if (!copies.count(source)) copies[source] = convert(g, source, position, nextNode), ++position;
      for (Argument& candidate : g.nodes[position].inputs)
        if (candidate.name == arg) candidate.tensor = copies[source];
    }
  }
  g.layout.channelsLast = kept;
  for (const auto& [source, copy] : copies) g.layout.channelsLast.insert(copy);
  const std::string because = o.layout == LayoutMode::ChannelsLast
                                  ? "as the job asks (--layout channels_last)"
                                  : "where cuDNN's TF32 tensor-core kernels work in NHWC (an NCHW call pays transposes "
                                    "around them)";
  g.layout.why = "channels-last (NHWC) for " + std::to_string(convCount) + " convolution(s) in " +
                 std::to_string(regionCount) + " region(s), " + because + ": the " + std::to_string(kept.size()) +
                 " activations between them are laid out NHWC and the kernels over them iterate channels innermost; "
                 "the forward's inputs, results and parameters keep their layout, converted by " +
                 std::to_string(copies.size()) +
                 " copy kernel(s) (inputs and filters) and by each region's last kernels as they write";
  return g;
}

namespace {

std::vector<int64_t> rowMajor(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

// An output's strides per iteration dim: its dims of more than one element are the kernel's, in
// order (KernelBuilder::output), each perhaps split over several (a group norm's channels over its
// groups and their channels). Empty where they do not pair up.
std::vector<int64_t> outputStrides(const FusedKernel& k, const KernelOutput& out) {
  const std::vector<int64_t> strides = out.strided() ? out.strides : rowMajor(out.shape);
  const std::size_t rank = k.shape.size();
  std::vector<int64_t> r(rank, 0);
  std::size_t d = 0;
  for (std::size_t p = 0; p < out.shape.size(); ++p) {
    if (out.shape[p] == 1) continue;
    std::vector<std::size_t> group;
    int64_t covered = 1;
    for (; d < rank && covered < out.shape[p]; ++d)
      if (k.shape[d] != 1) group.push_back(d), covered *= k.shape[d];
    if (covered != out.shape[p]) return {};
    int64_t inner = strides[p];
    for (auto it = group.rbegin(); it != group.rend(); ++it) r[*it] = inner, inner *= k.shape[*it];
  }
  for (; d < rank; ++d)
    if (k.shape[d] != 1) return {};
  return r;
}

// The iteration order that follows `strides` (per iteration dim) from the largest: dims of one
// element keep their places. Empty where some dim of more than one element has no stride.
std::vector<int> orderOf(const FusedKernel& k, const std::vector<int64_t>& strides) {
  std::vector<int> moving;
  for (int d = 0; d < static_cast<int>(k.shape.size()); ++d)
    if (k.shape[d] != 1) {
      if (strides[d] == 0) return {};
      moving.push_back(d);
    }
  std::vector<int> sorted = moving;
  std::stable_sort(sorted.begin(), sorted.end(), [&](int a, int b) { return strides[a] > strides[b]; });
  std::vector<int> perm(k.shape.size());
  std::iota(perm.begin(), perm.end(), 0);
  for (std::size_t i = 0; i < moving.size(); ++i) perm[moving[i]] = sorted[i];
  return perm;
}

// Whether `dims` (old iteration dims) keep their relative order under `inv` (old dim -> new).
bool keepsOrder(const std::vector<int>& dims, const std::vector<int>& inv) {
  for (std::size_t i = 1; i < dims.size(); ++i)
    if (inv[dims[i - 1]] > inv[dims[i]]) return false;
  return true;
}

}  // namespace

namespace {

// `k` with its iteration dims permuted (new dim i iterates old dim perm[i]), or nothing where the
// permutation would move the batch, split the reduced range or reorder what must keep its order.
std::optional<FusedKernel> permuted(const FusedKernel& k, const std::vector<int>& perm) {
  if (perm.empty() || perm[0] != 0) return std::nullopt;  // the batch stays outermost (RuntimeRows scales dim 0)
  std::vector<int> inv(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int>(i);
  const int rank = static_cast<int>(k.shape.size());
  FusedKernel r = k;
  if (k.reduceBegin >= 0) {
    // The reduced (or scanned) dims stay one range, and the kept dims in their order: rows are
    // written in the order of the kept dims. A scan, and an arg reduction's index (row-major over
    // the reduced dims), also need the reduced dims in their order; a sum or a max does not (a
    // group norm's channels of a group, innermost in NHWC, are then read first).
    std::vector<int> reduced, kept;
    for (int d = 0; d < rank; ++d)
      if (k.shape[d] != 1) (d >= k.reduceBegin && d < k.reduceEnd ? reduced : kept).push_back(d);
    const bool ordered = k.scans() || std::any_of(k.values.begin(), k.values.end(), [](const KernelValue& v) {
                           return v.op == ValueOp::ArgIndex ||
                                  (v.op == ValueOp::Reduce && (v.reduce == ReduceKind::ArgMax || v.reduce == ReduceKind::ArgMin));
                         });
    if (reduced.empty() || (ordered && !keepsOrder(reduced, inv)) || !keepsOrder(kept, inv)) return std::nullopt;
    r.reduceBegin = rank, r.reduceEnd = -1;
    for (int d : reduced) r.reduceBegin = std::min(r.reduceBegin, inv[d]), r.reduceEnd = std::max(r.reduceEnd, inv[d] + 1);
    for (int d : kept)
      if (inv[d] >= r.reduceBegin && inv[d] < r.reduceEnd) return std::nullopt;
  }
  for (int i = 0; i < rank; ++i) r.shape[i] = k.shape[perm[i]];
  for (auto& in : r.inputs) {
    const std::vector<int64_t> old = in.strides;
    for (int i = 0; i < rank; ++i) in.strides[i] = old[perm[i]];
    int64_t expect = 1;
    in.linear = in.offset == 0 && !in.window;
    for (int d = rank; d-- > 0;) {
      if (r.shape[d] != 1 && in.strides[d] != expect) in.linear = false;
      expect *= r.shape[d];
    }
  }
  for (auto& v : r.values) {
    for (int& d : v.dimMap)
      if (d >= 0) d = inv[d];
    if (v.concatDim >= 0) v.concatDim = inv[v.concatDim];
    if (v.op == ValueOp::Pool) {  // the window slides over the same dims, now wherever they are
      PoolSpec& p = v.pool;
      const int lead = rank - static_cast<int>(p.kernel.size());
      std::vector<int> dims = p.windowDims;
      if (dims.empty())
        for (int j = 0; j < static_cast<int>(p.kernel.size()); ++j) dims.push_back(lead + j);
      p.windowDims.clear();
      for (int d : dims) p.windowDims.push_back(inv[d]);
      p.channelDim = inv[p.channelDim];
    }
  }
  for (std::size_t i = 0; i < r.outputs.size(); ++i) {
    KernelOutput& out = r.outputs[i];
    if (out.perRow) continue;
    const std::vector<int64_t> s = outputStrides(k, k.outputs[i]);
    if (s.empty()) return std::nullopt;
    out.shape = r.shape;
    out.strides.assign(rank, 0);
    for (int d = 0; d < rank; ++d) out.strides[d] = r.shape[d] == 1 ? 0 : s[perm[d]];
    // Written in its own memory order it is a plain contiguous write (16-byte stores).
    bool contiguous = out.offset == 0;
    int64_t expect = 1;
    for (int d = rank; d-- > 0;) {
      if (r.shape[d] != 1 && out.strides[d] != expect) contiguous = false;
      expect *= r.shape[d];
    }
    if (contiguous) out.strides.clear();
  }
  return r;
}


}  // namespace

FusedKernel inMemoryOrder(FusedKernel k, const Graph& g) {
  const auto& cl = g.layout.channelsLast;
  if (cl.empty() || k.shape.size() < 2) return k;
  // An elementwise kernel iterates in the order its outputs are written in, where they agree
  // (NCHW for a region's last kernel): an input read across that order is moved through
  // shared-memory tiles (tiledTranspose, LaunchShape.h), where outputs written across the order
  // would be scattered stores.
  const bool windows = std::any_of(k.values.begin(), k.values.end(), [](const KernelValue& v) { return v.op == ValueOp::Pool; });
  if (k.reduceBegin < 0 && !windows) {
    std::vector<int> order;
    bool agree = true;
    for (const auto& out : k.outputs) {
      const std::vector<int64_t> s = outputStrides(k, out);
      const std::vector<int> o = s.empty() ? std::vector<int>{} : orderOf(k, s);
      if (o.empty() || (!order.empty() && o != order)) agree = false;
      order = o;
    }
    if (agree && !order.empty()) {
      if (std::is_sorted(order.begin(), order.end())) return k;
      if (auto r = permuted(k, order)) return std::move(r).value();
    }
  }
  // The reference: the largest channels-last tensor written whole, else the largest read.
  std::vector<int64_t> ref;
  int64_t refSize = -1;
  for (const auto& out : k.outputs) {
    if (out.perRow || !cl.count(out.tensorId)) continue;
    const int64_t n = std::accumulate(out.shape.begin(), out.shape.end(), int64_t{1}, std::multiplies<>());
    if (auto s = outputStrides(k, out); !s.empty() && n > refSize) ref = std::move(s), refSize = n;
  }
  if (ref.empty())
    for (const auto& in : k.inputs) {
      const TensorInfo* t = g.tensor(in.tensorId);
      if (!t || !cl.count(in.tensorId) || t->numel() <= refSize) continue;
      ref = in.strides, refSize = t->numel();
    }
  if (ref.empty()) return k;
  // The memory order of the reference; failing that (a group norm's row: its group between the
  // spatial dims and its channels in NHWC), the kernel's order with only the reduced dims sorted.
  std::vector<int> sorted = orderOf(k, ref), within(k.shape.size());
  std::iota(within.begin(), within.end(), 0);
  if (k.reduceBegin >= 0 && !sorted.empty())
    std::stable_sort(within.begin() + k.reduceBegin, within.begin() + k.reduceEnd,
                     [&](int a, int b) { return ref[a] > ref[b]; });
  for (const auto& perm : {sorted, within}) {
    if (perm.empty() || std::is_sorted(perm.begin(), perm.end())) continue;
    if (auto r = permuted(k, perm)) return std::move(r).value();
  }
  return k;
}

LaidOutPlan planLaidOut(const Graph& graph, const nlohmann::json& captured, const std::map<int, double>& lineTimesUs,
                        const PlannerOptions& options) {
  LaidOutPlan out{layOut(graph, options), {}};
  out.plan = makePlan(out.graph, lineTimesUs, options);
  if (!out.graph.layout.channelsLast.empty()) {
    const auto& cl = out.graph.layout.channelsLast;
    bool reachesPyTorch = false;
    for (const auto& u : out.plan.uncovered) {
      const Node* n = u.node ? out.graph.node(*u.node) : nullptr;
      if (!n) continue;
      for (const auto& id : n->outputs) reachesPyTorch = reachesPyTorch || cl.count(id);
      for (const Argument& a : n->inputs)
        for (const auto& id : a.tensorIds()) reachesPyTorch = reachesPyTorch || cl.count(id);
    }
    if (reachesPyTorch) {
      PlannerOptions nchw = options;
      nchw.layout = LayoutMode::Nchw;
      out.graph = graph;
      out.plan = makePlan(out.graph, lineTimesUs, nchw);
    }
  }
  planRows(out.plan, out.graph, captured, lineTimesUs, options);
  return out;
}

}  // namespace stitch::agents::builtin
