// cat and stack; see Concatenation.h. The result is a fresh contiguous buffer, so a piece's slice
// has the result's contiguous strides (less the stacked dim) and starts at its first index along
// the concatenated dim.
#include "agents/builtin/lower/Concatenation.h"

#include "agents/builtin/kernel/NodeArgs.h"
#include "agents/builtin/lower/KernelBuilder.h"

namespace stitch::agents::builtin {
namespace {

std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

// The shape a piece must have: the result's, with its own extent along a cat's dim, without the
// dim for a stack.
std::vector<int64_t> pieceShape(const Concatenation& cat, const std::vector<int64_t>& result, const TensorInfo& x) {
  std::vector<int64_t> s = result;
  if (cat.stack) s.erase(s.begin() + cat.dim);
  else if (x.shape.size() == s.size()) s[cat.dim] = x.shape[cat.dim];
  return s;
}

}  // namespace

Outcome<Concatenation> concatenation(const Graph& graph, const Node& node) {
  const Argument* list = node.arg("tensors");
  if (!list || list->tensors.empty() || node.outputs.size() != 1)
    return Failure{node.where() + ": the capture recorded no tensor list or not one result"};
  const TensorInfo* y = graph.tensor(node.outputs[0]);
  if (y->dtype != "float32") return Failure{node.where() + ": result is " + y->dtype + "; the generated kernels write float32"};
  Concatenation cat;
  cat.result = y->id;
  cat.stack = baseName(node.op) == "stack";
  const auto rank = static_cast<int64_t>(y->shape.size());
  auto dim = static_cast<int64_t>(number(node, "dim", 0));
  if (dim < 0) dim += rank;
  if (dim < 0 || dim >= rank) return Failure{node.where() + ": concatenates along a dim the result does not have"};
  cat.dim = static_cast<int>(dim);
  const std::vector<int64_t> strides = contiguousStrides(y->shape);
  int64_t at = 0;
  for (const std::string& id : list->tensors) {
    const TensorInfo* x = id.empty() ? nullptr : graph.tensor(id);
    if (!x) return Failure{node.where() + ": an entry of the tensor list is not a recorded tensor"};
    if (x->numel() == 0) continue;  // cat skips empty pieces (also the legacy 1-D [0])
    if (x->dtype != "float32") return Failure{node.where() + ": piece " + id + " is " + x->dtype + "; the generated kernels read float32"};
    if (x->shape != pieceShape(cat, y->shape, *x))
      return Failure{node.where() + ": piece " + id + " does not have the result's shape outside the concatenated dim"};
    ConcatPiece p;
    p.tensorId = id;
    p.begin = at;
    at += cat.stack ? 1 : x->shape[cat.dim];
    p.end = at;
    p.offset = p.begin * strides[cat.dim];
    p.strides = strides;
    if (cat.stack) p.strides.erase(p.strides.begin() + cat.dim);
    cat.pieces.push_back(std::move(p));
  }
  if (cat.pieces.empty() || at != y->shape[cat.dim])
    return Failure{node.where() + ": the pieces do not add up to the result along the concatenated dim"};
  return cat;
}

KernelOutput intoSlice(KernelOutput out, const Concatenation& cat, const ConcatPiece& piece) {
  out.tensorId = cat.result;
  out.strides = piece.strides;
  out.offset = piece.offset;
  return out;
}

Outcome<FusedKernel> copyIntoSlice(const Graph& graph, const Concatenation& cat, const ConcatPiece& piece) {
  const TensorInfo* x = graph.tensor(piece.tensorId);
  auto root = graph.abiRoot(*x);
  if (!root) return root.error();
  FusedKernel k;
  k.shape = x->shape;
  KernelInput in;
  in.tensorId = root.value()->id;
  in.strides = x->strides;
  in.offset = x->storageOffset - root.value()->storageOffset;
  in.linear = in.offset == 0 && x->contiguous();
  k.inputs.push_back(std::move(in));
  KernelValue v;
  v.op = ValueOp::Input;
  v.input = 0;
  for (int64_t s : x->shape) v.dimMap.push_back(s == 1 ? -1 : static_cast<int>(v.dimMap.size()));
  k.values.push_back(std::move(v));
  KernelOutput out;
  out.tensorId = x->id;
  out.value = 0;
  out.shape = x->shape;
  k.outputs.push_back(intoSlice(std::move(out), cat, piece));
  return k;
}

// A concatenation of tensors this kernel does not compute, read where it is used: each element
// from its piece (ValueOp::Concat), so the result need not be written at all when its readers
// fuse here.
Outcome<bool> KernelBuilder::lowerConcat(const Node& node) {
  auto cat = concatenation(*graph_, node);
  if (!cat) return cat.error();
  const Concatenation& c = cat.value();
  for (const ConcatPiece& p : c.pieces)
    if (tensors_.count(p.tensorId))
      return Failure{node.where() + ": concatenates " + p.tensorId + ", which this kernel computes; the next kernel reads it written"};
  const TensorInfo* y = graph_->tensor(c.result);
  if (kernel_.shape.empty()) kernel_.shape = y->shape;
  auto map = alignedMap(y->shape, {}, node);
  if (!map) return map.error();
  std::vector<int> pieces;
  for (const ConcatPiece& p : c.pieces) {
    auto v = pieceRead(c, p, map.value());
    if (!v) return v.error();
    pieces.push_back(v.value());
  }
  if (pieces.size() == 1) {  // the others are empty
    bind(c.result, pieces[0]);
    return true;
  }
  KernelValue v;
  v.op = ValueOp::Concat;
  v.args = pieces;
  v.dimMap = map.value();
  v.concatDim = map.value()[c.dim];
  for (const ConcatPiece& p : c.pieces) v.concatEnds.push_back(p.end);
  bind(c.result, push(std::move(v)));
  return true;
}

// The piece read at the result's coordinates (`map`: the result's dims to iteration dims): its own
// strides along the dims it shares with the result, none along a stack's dim, and along a cat's
// dim its offset shifted back by its first index there.
Outcome<int> KernelBuilder::pieceRead(const Concatenation& cat, const ConcatPiece& piece, const std::vector<int>& map) {
  const TensorInfo* x = graph_->tensor(piece.tensorId);
  std::vector<int64_t> strides(kernel_.shape.size(), 0);
  for (int q = 0; q < static_cast<int>(map.size()); ++q) {
    if (map[q] < 0 || (cat.stack && q == cat.dim)) continue;
    strides[map[q]] = x->strides[cat.stack && q > cat.dim ? q - 1 : q];
  }
  const int64_t shift = cat.stack ? 0 : -piece.begin * x->strides[cat.dim];
  return externalStrided(x->id, std::move(strides), map, false, shift);
}

}  // namespace stitch::agents::builtin
