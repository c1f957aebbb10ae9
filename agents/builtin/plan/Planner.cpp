// Greedy fusion over the graph's topological order; see Planner.h. A node joins the open
// kernel when KernelBuilder accepts it; otherwise the kernel closes (writing what later nodes
// or the forward's result need) and the node opens the next one, or stays in PyTorch. A heavy
// operator closes the open kernel and becomes a library step; the nodes right after it fold
// into the library's epilogue while it can apply them, and the rest of the tail fuses into the
// next generated kernel, which reads the library's output once.
#include "agents/builtin/plan/Planner.h"

#include "agents/builtin/kernel/LaunchShape.h"
#include "agents/builtin/kernel/NodeArgs.h"
#include "agents/builtin/lower/Concatenation.h"
#include "agents/builtin/lower/KernelBuilder.h"
#include "agents/builtin/lower/ReductionPasses.h"
#include "agents/builtin/ops/OpDef.h"
#include "agents/builtin/plan/MemoryFormat.h"
#include "agents/builtin/plan/Recompute.h"

#include <algorithm>
#include <set>

namespace stitch::agents::builtin {
namespace {

// The traffic a step saves against eager PyTorch, which reads and writes every operator's tensors.
double gainPct(const PlannedKernel& p) {
  return p.eagerBytes > 0 ? std::max(0.0, 100.0 * (1.0 - static_cast<double>(p.floorBytes) / p.eagerBytes)) : 0.0;
}

std::string techniqueOf(const FusedKernel& k, std::size_t ops) {
  bool pools = false, weighted = false, prologue = false;
  for (const auto& v : k.values) {
    pools = pools || v.op == ValueOp::Pool;
    weighted = weighted || (v.op == ValueOp::Pool && v.pool.weights >= 0);
    prologue = prologue || (v.op == ValueOp::Pool && !v.pool.prologue.empty());
  }
  if (k.scans())
    return k.inner() == 1 ? "row scan: one block per row, block-wide scan of thread totals, fp64 carry across tiles"
                          : "column scan: one thread per column walks the scanned dim, loads coalesced across it";
  if (weighted && !k.reduces())
    return "depthwise convolution: one thread per output element sums its window times the channel's weights, " +
           std::to_string(ops - 1) + " operator(s) fused after it";
  if (pools && !k.reduces())
    return std::string("pooling: one thread per output element reads its window") +
           (prologue ? ", computing each element from the producer's inputs where it is read" : "") + ", " +
           std::to_string(ops - 1) + " other operator(s) fused with it";
  if (const auto t = tiledTranspose(k))
    return "fused elementwise kernel: " + std::to_string(ops) + " operator(s) in one pass over " +
           std::to_string(t->acrossTile()) + "x" + std::to_string(t->innerTile) +
           " tiles, the input(s) laid out across the outputs' order moved through shared memory so that reads and "
           "writes are both coalesced";
  if (!k.reduces())
    return "fused elementwise kernel: " + std::to_string(ops) + " operator(s) in one pass, 16-byte vector accesses";
  const std::vector<ReductionPass> passes = reductionPasses(k);
  std::string passText = std::to_string(passes.size()) + " pass(es) over the row";
  for (const ReductionPass& p : passes)
    if (p.fold != Fold::None)
      passText += p.fold == Fold::MaxExpSum ? " (softmax's max and sum of exponentials in one, online)"
                                            : " (the norm's mean and squared deviations in one, Welford's)";
  if (k.inner() == 1) {
    const int lanes = lanesPerRow(k);
    const std::string shape = !warpPerRow(k, onePass(k)) ? "one block per row, warp-shuffle and block reductions"
                              : lanes == 32 ? "a warp per row, shuffle reductions"
                                            : std::to_string(lanes) + " lanes per row (" + std::to_string(32 / lanes) +
                                                  " rows a warp), shuffle reductions";
    return "row reduction: " + shape +
           " (several blocks per row, combined in a fixed order, when rows are too few to fill the GPU), " +
           passText + ", then one write pass";
  }
  return "column reduction: 32 neighbouring outputs per block, the reduced dim split over row groups that combine "
         "in a fixed order, loads coalesced across the kept inner dims, " +
         passText + " (a column's)";
}

class Partitioner {
public:
  Partitioner(const Graph& g, const std::map<int, double>& times, PlannerOptions o)
      : graph_(g), times_(times), options_(o), open_(g) {}

  Plan run() {
    for (const auto& u : graph_.uncovered) plan_.uncovered.push_back({u.op, u.reason, u.source, std::nullopt, 0});
    const std::set<int> operandViews = libraryOperandViews();
    for (const Node& n : graph_.nodes) {
      // An allocation alone moves no data; a node that reads it finds no writer and says so.
      if (classifyOp(n.op) == OpClass::Allocation) continue;
      // A library call reads its operands through their strides (linear's transposed weight).
      if (operandViews.count(n.id)) continue;
      if (recomputeFor(n)) continue;
      if (libraryStep(n)) {
        close();
        if (auto it = options_.inPyTorch.find(n.id); it != options_.inPyTorch.end()) leave(n, it->second);
        else if (auto call = matchLibraryCall(graph_, n)) library_ = std::move(call).value();
        else leave(n, call.error().message);
        continue;
      }
      if (library_ && foldIntoLibrary(n)) continue;
      if (n.kind != "view") closeLibrary();
      if (placeConcatenation(n)) continue;
      if (placeFlip(n)) continue;
      if (classifyOp(n.op) == OpClass::Unsupported) {
        close();
        leave(n, "no generated kernel for this operator; it stays in PyTorch");
        continue;
      }
      if (poolTakesOpenKernel(n)) continue;
      if (addToOpen(n)) {
        if (!options_.fuse && n.kind != "view") close();
        continue;
      }
      close();
      if (auto r = addToOpen(n); !r) leave(n, r.error().message);
      else if (!options_.fuse && n.kind != "view") close();
    }
    close();
    order();
    return std::move(plan_);
  }

private:
  // `n` runs in PyTorch, after the steps planned so far (a partial candidate issues it there).
  void leave(const Node& n, std::string reason) {
    plan_.uncovered.push_back({n.op, std::move(reason), n.source, n.id, plan_.kernels.size()});
  }

  bool libraryStep(const Node& n) const { return isLibraryOp(n.op) && !generatesConvolution(graph_, n); }

  // View nodes whose results only library calls read (directly or through further views).
  std::set<int> libraryOperandViews() const {
    std::set<int> views;
    for (auto it = graph_.nodes.rbegin(); it != graph_.nodes.rend(); ++it) {
      if (it->kind != "view" || it->outputs.size() != 1) continue;
      const std::string& out = it->outputs[0];
      bool onlyLibrary = std::find(graph_.outputs.begin(), graph_.outputs.end(), out) == graph_.outputs.end();
      bool read = false;
      for (const Node& m : graph_.nodes) {
        if (!onlyLibrary) break;
        for (const Argument& a : m.inputs) {
          if (a.tensor != out && std::find(a.tensors.begin(), a.tensors.end(), out) == a.tensors.end()) continue;
          read = true;
          onlyLibrary = onlyLibrary && (libraryStep(m) || views.count(m.id));
        }
      }
      if (read && onlyLibrary) views.insert(it->id);
    }
    return views;
  }

  // Folds `n` into the open library call's epilogue when the library can apply it and nothing
  // else reads the output it replaces; only while no generated kernel has started after the call.
  // A convolution takes its tail (a bias, batch norm, ReLU) only where the tail ends the chain:
  // its result returned or read by another library call. A tail that goes on into generated work
  // (a pooling window, a reduction, more elementwise operators) fuses there instead, which costs
  // no pass of its own when cuDNN runs the convolution.
  bool foldIntoLibrary(const Node& n) {
    if (!options_.fuse || !onlyViewsOpen() || library_->kind == LibraryCall::Kind::Rnn) return false;
    if (consumedOutside(library_->output(), {n.id})) return false;
    if (library_->kind == LibraryCall::Kind::Conv && !tailEndsInEpilogue(n)) return false;
    LibraryCall folded = *library_;
    if (!foldEpilogue(folded, graph_, n)) return false;
    library_ = std::move(folded);
    folded_.insert(n.id);
    return true;
  }

  // Whether the chain from `n` through batch norms and ReLUs that are each the only reader of the
  // one before ends where a convolution's epilogue may end: at the forward's result or at another
  // library call.
  bool tailEndsInEpilogue(const Node& n) const {
    auto normOrRelu = [](const Node& m) { return ops::epilogueRole(m.op) == ops::EpilogueRole::Relu || isBatchNorm(m.op); };
    const Node* at = &n;
    for (int depth = 0; depth < 16 && !at->outputs.empty(); ++depth) {
      const Node* reader = nullptr;
      int readers = 0;
      for (const Node& m : graph_.nodes) {
        if (m.kind == "view") continue;
        for (const Argument& a : m.inputs)
          if (a.tensor && graph_.reaches(*a.tensor, at->outputs[0])) {
            reader = &m;
            ++readers;
            break;
          }
      }
      const bool returned = std::any_of(graph_.outputs.begin(), graph_.outputs.end(),
                                        [&](const std::string& o) { return graph_.reaches(o, at->outputs[0]); });
      if (readers == 0) return returned;
      if (readers > 1 || returned) return false;
      if (libraryStep(*reader)) return true;
      if (!normOrRelu(*reader)) return false;
      at = reader;
    }
    return false;
  }

  // A pooling node takes the open elementwise kernel into its window when nothing else needs the
  // kernel's tensors: a convolution's bias and ReLU before a max pool then read the convolution's
  // output once and write only the pooled tensor. (A held-back producer's results are needed by
  // no one: each kernel reading them computes them.)
  bool poolTakesOpenKernel(const Node& n) {
    if (!options_.fuse || open_.empty() || onlyViewsOpen() || !ops::isPooling(n.op)) return false;
    const auto& ids = open_.kernel().nodeIds;
    std::set<int> inKernel(ids.begin(), ids.end());
    inKernel.insert(n.id);
    for (int id : ids)
      for (const auto& t : graph_.node(id)->outputs)
        if (consumedOutside(t, inKernel) && !heldBack(t)) return false;
    return static_cast<bool>(open_.addPoolOverKernel(n));
  }

  // Adds `n` to the open kernel, unless the kernel could not write a result of `n` that the
  // forward returns (one broadcast over the kernel's iteration space, which joined it only by
  // broadcasting): `n` then opens the next kernel, where its result is the iteration space. (A
  // returned view is the Coder's: a view of the buffer written.)
  Outcome<bool> addToOpen(const Node& n) {
    auto returned = [&](const std::string& t) {
      return std::any_of(graph_.outputs.begin(), graph_.outputs.end(), [&](const std::string& o) { return o == t; });
    };
    if (n.kind == "view" || std::none_of(n.outputs.begin(), n.outputs.end(), returned)) return open_.add(n);
    KernelBuilder before = open_;
    auto r = open_.add(n);
    if (!r) return r;
    for (const auto& t : n.outputs)
      if (returned(t))
        if (auto out = open_.output(t); !out) {
          open_ = std::move(before);
          return out.error();
        }
    return r;
  }

  // A cat or stack whose pieces the kernels computing them write straight into their slices of
  // the result (Concatenation.h). A piece nothing else reads is written only there, so the
  // concatenation costs no pass and no copy; a piece read elsewhere too is written both places by
  // its kernel; a piece no generated kernel computes (a forward input, a library call's output) is
  // copied into its slice by a kernel of its own. Only where some piece can move (else false:
  // a kernel then reads each element of the result from its piece, ValueOp::Concat, and the
  // result may never be written).
  bool placeConcatenation(const Node& n) {
    if (!options_.fuse || classifyOp(n.op) != OpClass::Concatenation) return false;
    auto found = concatenation(graph_, n);
    if (!found) return false;  // the kernel builder says why
    const Concatenation& cat = found.value();
    if (std::none_of(cat.pieces.begin(), cat.pieces.end(), [&](const ConcatPiece& p) {
          return movable(n, p.tensorId) && (writerOf(p.tensorId) || open_.computes(p.tensorId));
        }))
      return false;
    close();  // the open kernel writes the pieces it computes, which the cat reads
    std::vector<FusedKernel> copies;
    for (const ConcatPiece& p : cat.pieces) {
      if (writerOf(p.tensorId)) continue;
      auto k = copyIntoSlice(graph_, cat, p);
      if (!k) {
        leave(n, k.error().message);
        return true;
      }
      copies.push_back(std::move(k).value());
    }
    std::size_t last = 0;
    for (const ConcatPiece& p : cat.pieces)
      if (auto w = writerOf(p.tensorId)) {
        writeIntoSlice(plan_.kernels[w->first], w->second, cat, p, movable(n, p.tensorId));
        last = std::max(last, w->first);
      }
    for (FusedKernel& k : copies) {
      plan_.kernels.push_back(describe(std::move(k)));
      plan_.kernels.back().technique = "copy into a slice of the concatenation " + cat.result +
                                       ": one pass over the piece, read through its strides";
      last = plan_.kernels.size() - 1;
    }
    attach(plan_.kernels[last], n);
    return true;
  }

  // A flip of a value a generated kernel computes and nothing else reads: that kernel writes the
  // flipped tensor itself, each element at its mirrored place (the output's strides negated along
  // the flipped dims, from their last element), so the flip costs no pass of its own. The flip
  // otherwise reads the written value in the next kernel: level1/91_cumsum_reverse's scan wrote
  // its rows and a second kernel copied them reversed (40% of its floor).
  bool placeFlip(const Node& n) {
    if (!options_.fuse || baseName(n.op) != "flip" || n.outputs.size() != 1) return false;
    const Argument* self = n.arg("self");
    if (!self || !self->tensor || !movable(n, *self->tensor)) return false;
    const std::string& in = *self->tensor;
    if (!writerOf(in) && !open_.computes(in)) return false;
    const TensorInfo* out = graph_.tensor(n.outputs[0]);
    const auto flipped = flipDims(n, static_cast<int64_t>(out->shape.size()));
    if (!flipped) return false;  // the kernel builder says why
    close();
    const auto w = writerOf(in);
    if (!w || plan_.kernels[w->first].kernel.outputs[w->second].perRow) return false;
    KernelOutput& o = plan_.kernels[w->first].kernel.outputs[w->second];
    o.tensorId = out->id;
    o.strides = out->strides;  // as eager lays the flip's result out, which its readers read
    o.offset = 0;
    for (int64_t d : flipped.value()) {
      o.offset += (out->shape[d] - 1) * o.strides[d];
      o.strides[d] = -o.strides[d];
    }
    PlannedKernel& p = plan_.kernels[w->first];
    p.technique += "; writes " + in + " flipped, straight into " + out->id;
    p.floorBytes = floorBytesOf(p.kernel);
    attach(p, n);
    return true;
  }

  // The planned generated kernel and its output index that writes `id` whole, if any (also a view
  // the kernel computes, detach's say, which it writes as a tensor of its own).
  std::optional<std::pair<std::size_t, std::size_t>> writerOf(const std::string& id) const {
    for (std::size_t k = 0; k < plan_.kernels.size(); ++k) {
      if (plan_.kernels[k].library) continue;
      const auto& outs = plan_.kernels[k].kernel.outputs;
      for (std::size_t o = 0; o < outs.size(); ++o)
        if (outs[o].tensorId == id && !outs[o].strided()) return std::make_pair(k, o);
    }
    return std::nullopt;
  }

  // `id` is an intermediate read once, by `n`, and not returned: its only place can be its slice
  // of `n`'s result. (A buffer a write-back updates keeps its own write.)
  bool movable(const Node& n, const std::string& id) const {
    if (graph_.tensor(id)->role != "intermediate") return false;
    for (const auto& o : graph_.outputs)
      if (graph_.reaches(o, id)) return false;
    int reads = 0;
    for (const Node& m : graph_.nodes)
      for (const Argument& a : m.inputs)
        for (const auto& r : a.tensorIds()) reads += !r.empty() && graph_.reaches(r, id) ? (m.id == n.id ? 1 : 2) : 0;
    return reads == 1;
  }

  // Output `o` of kernel `p` also goes to its slice of the concatenation, or only there (`move`).
  void writeIntoSlice(PlannedKernel& p, std::size_t o, const Concatenation& cat, const ConcatPiece& piece, bool move) {
    KernelOutput slice = intoSlice(p.kernel.outputs[o], cat, piece);
    if (move) p.kernel.outputs[o] = std::move(slice);
    else p.kernel.outputs.push_back(std::move(slice));
    p.technique += "; writes " + piece.tensorId + (move ? " straight into its" : " also into its") +
                   " slice of the concatenation " + cat.result;
    p.floorBytes = floorBytesOf(p.kernel);
    p.expectedGainPct = gainPct(p);
  }

  // The concatenation node joins step `p`'s operators (it is done once its last piece is written).
  void attach(PlannedKernel& p, const Node& n) {
    p.kernel.nodeIds.push_back(n.id);
    p.operators.clear();
    p.eagerBytes = 0;
    p.measuredUs.reset();
    account(p, p.kernel.nodeIds);
    p.expectedGainPct = gainPct(p);
  }

  bool onlyViewsOpen() const {
    for (int id : open_.kernel().nodeIds)
      if (graph_.node(id)->kind != "view") return false;
    return true;
  }

  void closeLibrary() {
    if (!library_) return;
    plan_.kernels.push_back(describe(std::move(*library_)));
    library_.reset();
  }

  void close() {
    closeLibrary();
    if (open_.empty()) return;
    const auto ids = open_.kernel().nodeIds;
    std::set<int> inKernel(ids.begin(), ids.end());
    std::vector<std::string> outputs;
    for (int id : ids) {
      if (const std::string* target = writeBackTarget(graph_, *graph_.node(id))) outputs.push_back(*target);
      for (const auto& t : graph_.node(id)->outputs)
        if (consumedOutside(t, inKernel) && !viewOfOutsideTensor(t) && !readThroughView(t) && !heldBack(t))
          outputs.push_back(t);
    }
    auto k = open_.finish(outputs);
    open_ = KernelBuilder(graph_);
    bool computes = false;
    for (int id : ids) computes = computes || graph_.node(id)->kind != "view";
    if (!computes) return;  // views alone move no data
    if (!k) {
      for (int id : ids) leave(*graph_.node(id), k.error().message);
      return;
    }
    if (options_.fuse && recomputable(graph_, k.value(), ids)) {
      heldBack_.push_back({ids, std::move(k).value()});
      return;
    }
    // A node that reads its operand through coordinates (a pad's shifted read) reads the held-back
    // result from memory even where the kernel computes it.
    std::vector<std::string> reads;
    for (const KernelInput& in : k.value().inputs) reads.push_back(in.tensorId);
    planHeldBack(heldBackWriting(reads));
    plan_.kernels.push_back(describe(std::move(k).value()));
    recomputed(plan_.kernels.back(), inKernel);
  }

  // A held-back elementwise kernel (Recompute.h): its nodes, in graph order, and the kernel that
  // writes their results should a reader's kernel not take them.
  struct HeldBack {
    std::vector<int> nodeIds;
    FusedKernel kernel;
  };

  static bool writes(const HeldBack& h, const std::string& tensor) {
    return std::any_of(h.kernel.outputs.begin(), h.kernel.outputs.end(),
                       [&](const KernelOutput& o) { return o.tensorId == tensor; });
  }

  bool heldBack(const std::string& tensor) const {
    return std::any_of(heldBack_.begin(), heldBack_.end(), [&](const HeldBack& h) { return writes(h, tensor); });
  }

  // Plans the held-back kernels `held` (indices into heldBack_) after all, in the order they were
  // held: their inputs were all written before they were held back.
  void planHeldBack(std::vector<std::size_t> held) {
    std::sort(held.begin(), held.end());
    for (std::size_t h : held) plan_.kernels.push_back(describe(std::move(heldBack_[h].kernel)));
    for (auto it = held.rbegin(); it != held.rend(); ++it) heldBack_.erase(heldBack_.begin() + static_cast<std::ptrdiff_t>(*it));
  }

  // The held-back kernels (indices into heldBack_) that write any of `tensors`.
  std::vector<std::size_t> heldBackWriting(const std::vector<std::string>& tensors) const {
    std::vector<std::size_t> found;
    for (std::size_t h = 0; h < heldBack_.size(); ++h)
      if (std::any_of(tensors.begin(), tensors.end(), [&](const std::string& t) { return writes(heldBack_[h], t); }))
        found.push_back(h);
    return found;
  }

  // The held-back kernels whose results `n` reads.
  std::vector<std::size_t> heldBackReadBy(const Node& n) const {
    std::vector<std::string> reads;
    for (const Argument& a : n.inputs)
      for (const auto& id : a.tensorIds()) reads.push_back(id);
    return heldBackWriting(reads);
  }

  // `n` reads results of held-back kernels: it joins the open kernel, or opens the next one, with
  // their nodes ahead of it (where the kernel has not computed them already), so that its kernel
  // computes those results from their inputs. Where no kernel can take them, they are planned
  // now, before `n`, which then goes its usual way (false).
  bool recomputeFor(const Node& n) {
    if (heldBackReadBy(n).empty()) return false;
    closeLibrary();
    // Looked up at each try: closing the open kernel may plan some (a pad read them from memory).
    auto withProducers = [&](KernelBuilder b) -> std::optional<KernelBuilder> {
      for (std::size_t h : heldBackReadBy(n))
        for (int id : heldBack_[h].nodeIds) {
          const auto& in = b.kernel().nodeIds;  // a producer that read another's results has its nodes too
          if (std::find(in.begin(), in.end(), id) == in.end() && !b.add(*graph_.node(id))) return std::nullopt;
        }
      return b;
    };
    auto joins = [&](KernelBuilder b) {
      std::optional<KernelBuilder> with = withProducers(std::move(b));
      if (!with) return false;
      KernelBuilder before = std::move(open_);
      open_ = std::move(with).value();
      if (addToOpen(n)) return true;
      open_ = std::move(before);
      return false;
    };
    if (!open_.empty() && joins(open_)) return true;
    close();
    if (joins(KernelBuilder(graph_))) return true;
    planHeldBack(heldBackReadBy(n));
    return false;
  }

  // Says so where a kernel computes a held-back kernel's results again instead of reading them.
  void recomputed(PlannedKernel& p, const std::set<int>& inKernel) const {
    std::set<int> ids;
    for (const HeldBack& h : heldBack_)
      if (std::all_of(h.nodeIds.begin(), h.nodeIds.end(), [&](int id) { return inKernel.count(id) > 0; }))
        ids.insert(h.nodeIds.begin(), h.nodeIds.end());
    std::string list;
    for (int id : ids)
      if (graph_.node(id)->kind != "view") list += (list.empty() ? "" : ", ") + baseName(graph_.node(id)->op);
    if (list.empty()) return;
    p.technique += "; computes its producer (" + list +
                   ") again from the producer's inputs instead of reading its result, which no kernel writes";
  }

  // A view of a forward input, parameter or buffer: its readers read the tensor itself through
  // their own strides, so no kernel writes it (a reduction over size-1 dims is such a view).
  bool viewOfOutsideTensor(const std::string& id) const {
    const TensorInfo* t = graph_.tensor(id);
    return t && t->viewOf && graph_.viewRoot(*t)->role != "intermediate";
  }

  // A view of a tensor the open kernel does not compute (a library call's output, an earlier
  // kernel's): no kernel writes it, its readers read that tensor through the view's strides.
  bool readThroughView(const std::string& id) const {
    const TensorInfo* t = graph_.tensor(id);
    return t && t->viewOf && !open_.knows(id);
  }

  // Returned by the forward or read by a computing node outside the kernel, directly or through
  // views of it (a view nothing reads, such as unused pooling indices, does not count). Nodes
  // folded into a library call's epilogue read nothing here: the call reads their operands
  // itself (a convolution's bias through its [C, 1, 1] view).
  bool consumedOutside(const std::string& tensor, const std::set<int>& inKernel) const {
    auto reaches = [&](const std::string& id) { return graph_.reaches(id, tensor); };
    for (const auto& o : graph_.outputs)
      if (reaches(o)) return true;
    for (const Node& n : graph_.nodes) {
      if (inKernel.count(n.id) || folded_.count(n.id) || n.kind == "view") continue;
      for (const Argument& a : n.inputs)
        for (const auto& id : a.tensorIds())
          if (reaches(id)) return true;
    }
    return false;
  }

  PlannedKernel describe(LibraryCall call) {
    PlannedKernel p;
    p.id = "k" + std::to_string(plan_.kernels.size());
    account(p, call.nodeIds);
    std::set<std::string> roots;
    for (const auto& id : call.reads())
      if (roots.insert(id).second) p.floorBytes += graph_.tensor(id)->bytes();
    for (const auto& id : call.outputs()) p.floorBytes += graph_.tensor(id)->bytes();
    p.expectedGainPct = gainPct(p);
    call.precisionWhy = options_.precisionWhy;
    // cuDNN's math types follow cudnn.allow_tf32 for an RNN as for a convolution.
    call.setTf32(call.kind == LibraryCall::Kind::Gemm ? options_.matmulTf32 : options_.convTf32);
    p.technique = call.describe();
    if (options_.tensorCores && !call.tf32() && call.kind != LibraryCall::Kind::Rnn)
      p.technique += "; its fp32-accurate 3xTF32 form on tensor cores where measured faster (the job allows TF32)";
    if (call.kind == LibraryCall::Kind::Conv) p.technique += "; layout: " + convolutionLayout(call);
    p.library = std::move(call);
    return p;
  }

  // What a generated kernel must move: its inputs once, its outputs once (a piece of a
  // concatenation: the piece, not the whole result it writes into).
  int64_t floorBytesOf(const FusedKernel& k) const {
    int64_t bytes = 0;
    std::set<std::string> roots;
    for (const auto& in : k.inputs)
      if (roots.insert(in.tensorId).second) bytes += graph_.tensor(in.tensorId)->bytes();
    for (const auto& out : k.outputs) {
      int64_t n = 1;
      for (int64_t s : out.shape) n *= s;
      bytes += n * graph_.tensor(out.tensorId)->elementBytes();
    }
    return bytes;
  }

  // Which layout a convolution runs in, and why (MemoryFormat.h).
  std::string convolutionLayout(const LibraryCall& call) const {
    const std::string measured = options_.layoutMeasured.empty() ? "" : "; " + options_.layoutMeasured;
    if (call.conv.channelsLast) return graph_.layout.why + measured;
    const Node* n = call.nodeIds.empty() ? nullptr : graph_.node(call.nodeIds.front());
    const std::string why = n ? whyNotChannelsLast(graph_, *n, options_) : "";
    return "NCHW, " + (why.empty() ? std::string("as channels-last would only add copies here (its input or output is "
                                                 "the forward's or read where NCHW is needed, or it is a lone "
                                                 "convolution, whose input copy is not known to pay)")
                                   : why) +
           measured;
  }

  // Which layout a generated kernel runs in, where the graph has a channels-last region.
  std::string kernelLayout(const FusedKernel& before, const FusedKernel& after) const {
    const auto& cl = graph_.layout.channelsLast;
    bool touches = false;
    for (const auto& in : after.inputs) touches = touches || cl.count(in.tensorId);
    for (const auto& out : after.outputs) touches = touches || cl.count(out.tensorId);
    if (!touches) return "NCHW, outside the channels-last region";
    if (!(before == after))
      return "channels-last: iterates in NHWC order, channels innermost, so neighbouring threads touch neighbouring "
             "channels (" + graph_.layout.why + ")";
    return "channels-last tensors read and written through their strides (" + graph_.layout.why + ")";
  }

  PlannedKernel describe(FusedKernel k) {
    PlannedKernel p;
    p.id = "k" + std::to_string(plan_.kernels.size());
    const std::size_t ops = account(p, k.nodeIds);
    FusedKernel ordered = inMemoryOrder(k, graph_);
    p.floorBytes = floorBytesOf(ordered);
    p.expectedGainPct = gainPct(p);
    p.technique = techniqueOf(ordered, ops);
    if (!graph_.layout.channelsLast.empty()) p.technique += "; layout: " + kernelLayout(k, ordered);
    p.kernel = std::move(ordered);
    return p;
  }

  // Operators, source lines, measured time and eager traffic of a step's nodes; returns how
  // many of them compute.
  std::size_t account(PlannedKernel& p, const std::vector<int>& nodeIds) {
    std::set<int> lines;
    std::size_t ops = 0;
    for (int id : nodeIds) {
      const Node* n = graph_.node(id);
      const bool counted = eagerStep_.try_emplace(id, p.id).first->second == p.id;
      if (counted && n->source && !n->source->file.empty()) lines.insert(n->source->line);
      if (n->kind == "view") continue;
      ++ops;
      p.operators.push_back(n->op);
      if (!counted) continue;
      for (const Argument& a : n->inputs)
        for (const auto& t : a.tensorIds())  // a concatenation's pieces too
          if (!t.empty()) p.eagerBytes += graph_.tensor(t)->bytes();
      for (const auto& o : n->outputs) p.eagerBytes += graph_.tensor(o)->bytes();
    }
    if (!lines.empty()) {
      p.firstLine = *lines.begin();
      p.lastLine = *lines.rbegin();
      double us = 0;
      bool any = false;
      for (int l : lines)
        if (auto it = times_.find(l); it != times_.end()) us += it->second, any = true;
      if (any) p.measuredUs = us;
    }
    return ops;
  }

  // Measured time first (where the time goes); bytes that must move when nothing was measured.
  void order() {
    for (std::size_t i = 0; i < plan_.kernels.size(); ++i) plan_.priority.push_back(i);
    std::stable_sort(plan_.priority.begin(), plan_.priority.end(), [&](std::size_t a, std::size_t b) {
      const auto& ka = plan_.kernels[a];
      const auto& kb = plan_.kernels[b];
      if (ka.measuredUs && kb.measuredUs) return *ka.measuredUs > *kb.measuredUs;
      if (ka.measuredUs.has_value() != kb.measuredUs.has_value()) return ka.measuredUs.has_value();
      return ka.eagerBytes > kb.eagerBytes;
    });
  }

  const Graph& graph_;
  const std::map<int, double>& times_;
  PlannerOptions options_;
  KernelBuilder open_;
  std::optional<LibraryCall> library_;  // the library step whose epilogue may still grow
  std::set<int> folded_;                // nodes folded into library calls' epilogues
  std::vector<HeldBack> heldBack_;      // elementwise kernels their readers compute (Recompute.h)
  // The step whose eager traffic and measured time count each operator: the first that computes
  // it. A held-back producer computed again in each of its readers would otherwise add its bytes
  // to every one of their expected gains.
  std::map<int, std::string> eagerStep_;
  Plan plan_;
};

}  // namespace

std::vector<std::string> PlannedKernel::reads() const {
  if (library) return library->reads();
  std::vector<std::string> r;
  for (const auto& in : kernel.inputs) r.push_back(in.tensorId);
  return r;
}

std::vector<std::string> PlannedKernel::writes() const {
  if (library) return library->outputs();
  std::vector<std::string> w;
  for (const auto& o : kernel.outputs) w.push_back(o.tensorId);
  return w;
}

int64_t Plan::floorBytes() const {
  int64_t b = 0;
  for (const auto& k : kernels) b += k.floorBytes;
  return b;
}

bool Plan::usesTf32() const {
  for (const auto& k : kernels)
    if (k.library && k.library->tf32()) return true;
  return false;
}

bool Plan::toExactFp32() {
  bool changed = tensorCores;
  tensorCores = false;
  for (auto& k : kernels)
    if (k.library) {
      LibraryCall& call = *k.library;
      changed = changed || call.tf32();
      call.setTf32(false);
      call.precisionWhy = PrecisionWhy::Unstated;
      k.technique = call.describe();
    }
  return changed;
}

protocol::PlanCoverage planCoverage(const Graph& graph, const Plan& plan, const std::map<int, double>& lineTimesUs) {
  std::set<int> left;
  for (const auto& u : plan.uncovered)
    if (u.node) left.insert(*u.node);
  auto computes = [](const Node& n) { return n.kind != "view" && classifyOp(n.op) != OpClass::Allocation; };
  std::map<int, int> perLine;  // computing operators per source line
  for (const Node& n : graph.nodes)
    if (computes(n) && n.source) ++perLine[n.source->line];
  protocol::PlanCoverage c;
  c.timeBasis = lineTimesUs.empty() ? "bytes" : "profile";
  double all = 0, covered = 0;
  for (const Node& n : graph.nodes) {
    if (!computes(n)) continue;
    ++c.operators;
    const bool in = !left.count(n.id);
    c.coveredOperators += in;
    double weight = 0;
    if (lineTimesUs.empty()) {
      for (const Argument& a : n.inputs)
        if (a.tensor) weight += static_cast<double>(graph.tensor(*a.tensor)->bytes());
      for (const auto& o : n.outputs) weight += static_cast<double>(graph.tensor(o)->bytes());
    } else if (n.source) {
      auto it = lineTimesUs.find(n.source->line);
      if (it != lineTimesUs.end()) weight = it->second / perLine[n.source->line];
    }
    all += weight;
    if (in) covered += weight;
  }
  c.timeShare = all > 0 ? covered / all : (c.operators ? static_cast<double>(c.coveredOperators) / c.operators : 0.0);
  return c;
}

Plan makePlan(const Graph& graph, const std::map<int, double>& lineTimesUs, PlannerOptions options) {
  Plan plan = Partitioner(graph, lineTimesUs, options).run();
  plan.tensorCores = options.tensorCores;
  return plan;
}

}  // namespace stitch::agents::builtin
