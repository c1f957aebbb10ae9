// The normalization's decompositions (Normalizer.h): addmm and convolution bias, attention, roll,
// cuDNN's RNN and cross_entropy's log_softmax + nll_loss said as the operators the planner lowers,
// and the views they are read through.
#include "agents/builtin/kernel/NodeArgs.h"
#include "agents/builtin/normalize/Normalizer.h"

#include <cmath>
#include <limits>

namespace stitch::agents::builtin::normalize {
namespace {

std::vector<Argument> transposeArgs(const std::string& of) {
  return {tensorArg("self", of), valueArg("dim0", int64_t{0}), valueArg("dim1", int64_t{1})};
}

Argument formatArg() {
  Argument a = valueArg("memory_format", std::string("contiguous_format"));
  a.py = "torch.contiguous_format";
  a.keyword = true;
  return a;
}

}  // namespace

// addmm(self, mat1, mat2, beta, alpha) = beta * self + alpha * (mat1 @ mat2): the product
// becomes mm (bmm for baddbmm), and the scaling and the add explicit nodes after it, which
// the planner folds into the library's epilogue or fuses into a generated kernel.
bool Normalizer::splitAddmm(const Node& n, const std::string& base, std::vector<Node>& nodes) {
  const Argument* self = n.arg("self");
  const Argument* a = n.arg(base == "addmm" ? "mat1" : "batch1");
  const Argument* b = n.arg(base == "addmm" ? "mat2" : "batch2");
  if (!self || !a || !b || !self->tensor || !a->tensor || !b->tensor || n.outputs.size() != 1) return false;
  const double beta = scalarOr(n, "beta", 1.0), alpha = scalarOr(n, "alpha", 1.0);
  const std::string out = n.outputs[0];
  const TensorInfo& outInfo = info(out);
  const std::vector<int64_t> shape = outInfo.shape;
  std::string product = newTensor(outInfo, shape);
  nodes.push_back(node(n, base == "addmm" ? "aten::mm" : "aten::bmm",
                       {tensorArg("self", *a->tensor), tensorArg("mat2", *b->tensor)}, product));
  const bool last = beta == 0.0;
  if (alpha != 1.0) {
    const std::string scaled = last ? out : newTensor(outInfo, shape);
    nodes.push_back(node(n, "aten::mul.Scalar", {tensorArg("self", product), valueArg("other", alpha)}, scaled));
    product = scaled;
  }
  if (last) {
    if (alpha == 1.0) nodes.back().outputs = {out};
    return true;
  }
  std::string addend = *self->tensor;
  if (beta != 1.0) {
    const std::string scaled = newTensor(info(addend), info(addend).shape);
    nodes.push_back(node(n, "aten::mul.Scalar", {tensorArg("self", addend), valueArg("other", beta)}, scaled));
    addend = scaled;
  }
  nodes.push_back(node(n, "aten::add.Tensor", {tensorArg("self", product), tensorArg("other", addend)}, out));
  return true;
}

// convolution(input, weight, bias, ...) with a bias: the library computes the convolution and
// the bias becomes an add of a [C, 1, ...] view, the first step of the fused tail.
bool Normalizer::splitConvBias(const Node& n, std::vector<Node>& nodes) {
  const Argument* bias = n.arg("bias");
  if (!bias || !bias->tensor || n.outputs.size() != 1) return false;
  const std::string out = n.outputs[0];
  const std::vector<int64_t> outShape = info(out).shape;
  if (outShape.size() < 3) return false;
  Node conv = n;
  for (Argument& a : conv.inputs)
    if (a.name == "bias") a = valueArg("bias", std::monostate{});
  const std::string raw = newTensor(info(out), outShape);
  conv.outputs = {raw};
  nodes.push_back(conv);
  const std::string biasId = *bias->tensor;
  std::vector<int64_t> viewShape(outShape.size() - 1, 1);
  viewShape[0] = outShape[1];
  const std::string view = reshaped(n, biasId, viewShape, nodes);
  nodes.push_back(node(n, "aten::add.Tensor", {tensorArg("self", raw), tensorArg("other", view)}, out));
  return true;
}

// softmax(q kᵀ · scale + bias + causal mask) v, as PyTorch's math path computes attention: the
// heads' batched GEMMs (bmm over batch × heads) around one row softmax with the scale and masks
// fused (design §8). The causal mask is -inf above the diagonal, a filled [L, S] made triangular,
// added. The result is written at the strides the kernel gave it, so the views the forward takes
// of it stand. In half precision, with dropout, a grouped-query broadcast, or the kernel's
// log-sum-exp or random state read, the node stays as captured.
bool Normalizer::splitAttention(const Node& n, std::vector<Node>& nodes) {
  const std::string q = argTensor(n, "query"), k = argTensor(n, "key"), v = argTensor(n, "value");
  const std::string bias = argTensor(n, "attn_bias");
  if (q.empty() || k.empty() || v.empty() || n.outputs.empty() || scalarOr(n, "dropout_p", 0.0) != 0.0) return false;
  for (const std::string& t : {q, k, v})  // the generated kernels are float32
    if (info(t).dtype != DType::Float32) return false;
  for (std::size_t i = 1; i < n.outputs.size(); ++i)
    if (!unused(n.outputs[i])) return false;
  const std::vector<int64_t> qs = info(q).shape, ks = info(k).shape, vs = info(v).shape;
  if (qs.size() != 4 || ks.size() != 4 || vs.size() != 4 || qs[0] != ks[0] || qs[1] != ks[1] || ks[0] != vs[0] ||
      ks[1] != vs[1] || ks[2] != vs[2] || qs[3] != ks[3])
    return false;
  const int64_t heads = qs[0] * qs[1], L = qs[2], S = ks[2], D = qs[3], Dv = vs[3];
  const double scale = capturedNumber(n.arg("scale")).value_or(1.0 / std::sqrt(static_cast<double>(D)));
  const bool causal = isTrue(n.arg("is_causal"));
  const std::string out = n.outputs[0];
  const TensorInfo& like = info(out);

  const std::string q3 = batched(n, q, {heads, L, D}, nodes);
  const std::string kT = transposedLast(n, k, nodes);
  const std::string k3 = batched(n, kT, {heads, D, S}, nodes);
  const std::string v3 = batched(n, v, {heads, S, Dv}, nodes);
  std::string scores = newTensor(like, {heads, L, S});
  nodes.push_back(node(n, "aten::bmm", {tensorArg("self", q3), tensorArg("mat2", k3)}, scores));
  scores = reshaped(n, scores, {qs[0], qs[1], L, S}, nodes);
  std::string logits = newTensor(like, {qs[0], qs[1], L, S});
  nodes.push_back(node(n, "aten::mul.Tensor", {tensorArg("self", scores), valueArg("other", scale)}, logits));
  auto add = [&](const std::string& term) {
    const std::string sum = newTensor(like, {qs[0], qs[1], L, S});
    nodes.push_back(node(n, "aten::add.Tensor", {tensorArg("self", logits), tensorArg("other", term)}, sum));
    logits = sum;
  };
  if (!bias.empty()) add(bias);
  if (causal) {
    const std::string filled = newTensor(like, {L, S}), mask = newTensor(like, {L, S});
    nodes.push_back(node(n, "aten::full",
                         {valueArg("size", std::vector<int64_t>{L, S}),
                          valueArg("fill_value", -std::numeric_limits<double>::infinity())},
                         filled));
    nodes.push_back(node(n, "aten::triu", {tensorArg("self", filled), valueArg("diagonal", int64_t{1})}, mask));
    add(mask);
  }
  const std::string probs = newTensor(like, {qs[0], qs[1], L, S});
  nodes.push_back(node(n, "aten::_softmax",
                       {tensorArg("self", logits), valueArg("dim", int64_t{-1}), valueArg("half_to_float", false)},
                       probs));
  const std::string p3 = batched(n, probs, {heads, L, S}, nodes);
  const std::string o3 = newTensor(like, {heads, L, Dv});
  nodes.push_back(node(n, "aten::bmm", {tensorArg("self", p3), tensorArg("mat2", v3)}, o3));
  const std::string result = reshaped(n, o3, {qs[0], qs[1], L, Dv}, nodes);
  nodes.push_back(node(n, "aten::clone", {tensorArg("self", result)}, out));
  return true;
}

// `of` [B, H, R, C] as the [B·H, R, C] a bmm takes: a view where its first two dims merge, else a
// contiguous copy viewed so (what reshape does).
std::string Normalizer::batched(const Node& like, const std::string& of, const std::vector<int64_t>& shape,
                                std::vector<Node>& nodes) {
  const std::vector<int64_t> st = info(of).strides, sh = info(of).shape;
  if (sh[0] == 1 || sh[1] == 1 || st[0] == sh[1] * st[1]) {
    const std::string view = newTensor(info(of), shape, of);
    const int64_t lead = sh[1] == 1 ? st[0] : st[1];
    info(view).strides = {lead, st[2], st[3]};
    nodes.push_back(node(like, "aten::view", {tensorArg("self", of), valueArg("size", shape)}, view, NodeKind::View));
    return view;
  }
  const std::string copy = newTensor(info(of), sh);
  nodes.push_back(node(like, "aten::clone", {tensorArg("self", of), formatArg()}, copy));
  return reshaped(like, copy, shape, nodes);
}

// A view of the contiguous `of` with another shape of as many elements.
std::string Normalizer::reshaped(const Node& like, const std::string& of, const std::vector<int64_t>& shape,
                                 std::vector<Node>& nodes) {
  const std::string view = newTensor(info(of), shape, of);
  nodes.push_back(node(like, "aten::view", {tensorArg("self", of), valueArg("size", shape)}, view, NodeKind::View));
  return view;
}

// `of` with its last two dims swapped (kᵀ), a view.
std::string Normalizer::transposedLast(const Node& like, const std::string& of, std::vector<Node>& nodes) {
  std::vector<int64_t> shape = info(of).shape, strides = info(of).strides;
  const std::size_t r = shape.size();
  std::swap(shape[r - 1], shape[r - 2]);
  std::swap(strides[r - 1], strides[r - 2]);
  const std::string view = newTensor(info(of), shape, of);
  info(view).strides = strides;
  nodes.push_back(node(like, "aten::transpose.int",
                       {tensorArg("self", of), valueArg("dim0", int64_t{-2}), valueArg("dim1", int64_t{-1})}, view,
                       NodeKind::View));
  return view;
}

// torch.roll along dims (a shifted window's `torch.roll(x, (-s, -s), (1, 2))`) is, per rolled dim,
// the concatenation of its last `shift` elements and the rest: two slices of the tensor (views,
// read through its strides) and a cat, which the planner generates. Each further dim rolls the
// previous dim's result. A roll of the flattened tensor (no dims) stays as it is.
bool Normalizer::splitRoll(const Node& n, std::vector<Node>& nodes) {
  const Argument* shiftsArg = n.arg("shifts");
  const Argument* dimsArg = n.arg("dims");
  std::string cur = argTensor(n, "self");
  if (cur.empty() || !shiftsArg || !dimsArg || n.outputs.size() != 1) return false;
  const auto shifts = asIntList(shiftsArg->value), dims = asIntList(dimsArg->value);
  if (!shifts || !dims || dims->empty() || shifts->size() != dims->size()) return false;
  const std::string out = n.outputs[0];
  const std::vector<int64_t> shape = info(out).shape;
  const auto rank = static_cast<int64_t>(shape.size());
  std::vector<std::pair<int64_t, int64_t>> rolls;  // (dim, elements moved from its end to its start)
  for (std::size_t i = 0; i < dims->size(); ++i) {
    const int64_t d = (*dims)[i] < 0 ? (*dims)[i] + rank : (*dims)[i];
    if (d < 0 || d >= rank) return false;
    const int64_t size = shape[d], shift = size ? (((*shifts)[i] % size) + size) % size : 0;
    if (shift) rolls.emplace_back(d, shift);
  }
  if (rolls.empty()) {
    nodes.push_back(node(n, "aten::clone", {tensorArg("self", cur)}, out));
    return true;
  }
  for (std::size_t i = 0; i < rolls.size(); ++i) {
    const auto [d, shift] = rolls[i];
    const std::string tail = slice(n, cur, d, shape[d] - shift, shape[d], nodes);
    const std::string head = slice(n, cur, d, 0, shape[d] - shift, nodes);
    cur = i + 1 == rolls.size() ? out : newTensor(info(out), shape);
    Argument pieces;
    pieces.name = "tensors";
    pieces.tensors = {tail, head};
    nodes.push_back(node(n, "aten::cat", {pieces, valueArg("dim", d)}, cur));
  }
  return true;
}

// A view of `of`'s elements [start, end) along `dim`, as aten::slice makes it.
std::string Normalizer::slice(const Node& like, const std::string& of, int64_t dim, int64_t start, int64_t end,
                              std::vector<Node>& nodes) {
  std::vector<int64_t> shape = info(of).shape;
  const std::vector<int64_t> strides = info(of).strides;
  shape[dim] = end - start;
  const std::string view = newTensor(info(of), shape, of);
  info(view).strides = strides;
  info(view).storageOffset = info(of).storageOffset + start * strides[dim];
  nodes.push_back(node(like, "aten::slice.Tensor",
                       {tensorArg("self", of), valueArg("dim", dim), valueArg("start", start), valueArg("end", end),
                        valueArg("step", int64_t{1})},
                       view, NodeKind::View));
  return view;
}

// The node that reads `id` as its argument `name`, when it is the only reader of `id`.
const Node* Normalizer::soleReader(const std::string& id, const std::string& name) const {
  if (!readers_.count(id) || readers_.at(id) != 1) return nullptr;
  const Node& reader = g_.nodes[lastReader_.at(id)];
  return argTensor(reader, name) == id ? &reader : nullptr;
}

// PyTorch's try_get_weight_buf, `at::empty({0}).set_(weight[0].storage())`, hands _cudnn_rnn the
// storage its parameters are views into: the whole of it from offset 0, of which the first
// parameter is the start. The set_ becomes that view of the first parameter (as_strided over
// its storage), so the ABI passes the parameter's pointer and a forward that leaves the RNN in
// PyTorch makes the same view again; the empty tensor is then unread.
void Normalizer::flatWeightBuffer(Node& n) {
  if (overload(n.op) != "source_Storage" || n.outputs.size() != 1) return;
  const std::string buf = n.outputs[0];
  const Node* rnn = soleReader(buf, "weight_buf");
  const Argument* weights = rnn ? rnn->arg("weight") : nullptr;
  if (!weights || weights->tensors.empty() || weights->tensors[0].empty()) return;
  const std::string first = weights->tensors[0];
  const TensorInfo& b = info(buf);
  const TensorInfo& w = info(first);
  const std::vector<int64_t> shape = b.shape;
  if (baseName(rnn->op) != "_cudnn_rnn" || shape.size() != 1 || b.strides != std::vector<int64_t>{1} ||
      b.storageOffset != 0 || w.storageOffset != 0 || w.dtype != b.dtype)
    return;
  n.op = "aten::as_strided";
  n.kind = NodeKind::View;
  n.inputs = {tensorArg("self", first), valueArg("size", shape), valueArg("stride", std::vector<int64_t>{1}),
              valueArg("storage_offset", int64_t{0})};
  n.resultIndex.reset();
  setViewOf(buf, first);
}

// _cudnn_rnn with batch_first transposes its [N, T, I] input to a contiguous [T, N, I] copy, runs
// cuDNN sequence-major and returns its [T, N, H] output transposed: the captured output's strides
// are that transpose's, and the views the forward takes of it are computed from them. Said as
// nodes: a transpose of the input, a contiguous clone (a generated copy kernel), the RNN
// sequence-major, and the captured output a transpose view of what it writes.
bool Normalizer::sequenceMajorRnn(const Node& n, std::vector<Node>& nodes) {
  const Argument* sizes = n.arg("batch_sizes");
  const auto* noSizes = sizes && !sizes->tensor ? std::get_if<std::vector<int64_t>>(&sizes->value) : nullptr;
  const std::string x = argTensor(n, "input");
  if (!isTrue(n.arg("batch_first")) || !noSizes || !noSizes->empty() || x.empty() || n.outputs.empty() ||
      (n.resultIndex && (n.resultIndex->empty() || (*n.resultIndex)[0] != 0)))
    return false;
  const std::string out = n.outputs[0];
  const std::vector<int64_t> xShape = info(x).shape, xStrides = info(x).strides;
  const std::vector<int64_t> outShape = info(out).shape, outStrides = info(out).strides;
  if (xShape.size() != 3 || outShape.size() != 3 || info(out).storageOffset != 0 ||
      outStrides != std::vector<int64_t>{outShape[2], outShape[0] * outShape[2], 1})
    return false;
  const std::string xt = transposed(n, x, xStrides, nodes);
  const std::string xc = newTensor(info(x), {xShape[1], xShape[0], xShape[2]});
  nodes.push_back(node(n, "aten::clone", {tensorArg("self", xt), formatArg()}, xc));
  const std::string raw = newTensor(info(out), {outShape[1], outShape[0], outShape[2]});
  Node rnn = n;
  for (Argument& a : rnn.inputs) {
    if (a.name == "input") a = tensorArg("input", xc);
    if (a.name == "batch_first") {
      a = valueArg("batch_first", false);
      a.py = "False";
    }
  }
  rnn.outputs[0] = raw;
  setProducer(raw, rnn.id);
  nodes.push_back(rnn);
  nodes.push_back(node(n, "aten::transpose.int", transposeArgs(raw), out, NodeKind::View));
  setViewOf(out, raw);
  return true;
}

// A [T, N, ...] view of `of` ([N, T, ...]) with its first two dims swapped.
std::string Normalizer::transposed(const Node& like, const std::string& of, std::vector<int64_t> strides,
                                   std::vector<Node>& nodes) {
  std::vector<int64_t> shape = info(of).shape;
  std::swap(shape[0], shape[1]);
  std::swap(strides[0], strides[1]);
  const std::string view = newTensor(info(of), shape, of);
  info(view).strides = strides;
  nodes.push_back(node(like, "aten::transpose.int", transposeArgs(of), view, NodeKind::View));
  return view;
}

// cross_entropy: a log_softmax over the classes of [N, C] logits that only its nll_loss reads.
// The loss is the mean (or sum) over counted samples of lse_i - x[i, t_i], with lse_i the row's
// log-sum-exp: nll_loss of the logits themselves plus the counted samples' log-sum-exps. So the
// [N, C] log-probabilities are never written: one read of the logits for the row reductions and one
// element per sample for nll_loss, where the log_softmax's kernel wrote as many bytes as it read
// (level1/95_CrossEntropyLoss at 44% of its floor). All of it ATen, so a step left in PyTorch
// computes the same. The log_softmax node becomes the log-sum-exp; its nll_loss the rest.
bool Normalizer::crossEntropy(const Node& n, const std::string& base, std::vector<Node>& nodes) {
  if (base == "_log_softmax") {
    const std::string x = argTensor(n, "self");
    if (x.empty() || n.outputs.size() != 1 || returned_.count(n.outputs[0]) || isTrue(n.arg("half_to_float")))
      return false;
    const TensorInfo& logits = info(x);
    const double dim = scalarOr(n, "dim", 0);
    if (logits.shape.size() != 2 || logits.dtype != DType::Float32 || (dim != 1 && dim != -1)) return false;
    const Node* nll = soleReader(n.outputs[0], "self");
    if (!nll || baseName(nll->op) != "nll_loss_forward" || nll->outputs.size() != 2 || !isNone(*nll, "weight"))
      return false;
    const double reduction = scalarOr(*nll, "reduction", 0);
    const std::string target = argTensor(*nll, "target");
    if ((reduction != 1 && reduction != 2) || target.empty() || info(target).dtype != DType::Int64 ||
        !capturedNumber(nll->arg("ignore_index")))
      return false;
    const std::string lse = newTensor(logits, {logits.shape[0]});
    nodes.push_back(node(n, "aten::logsumexp",
                         {tensorArg("self", x), valueArg("dim", std::vector<int64_t>{1}), valueArg("keepdim", false)}, lse));
    logSoftmax_[n.outputs[0]] = {x, lse};
    dropped_.insert(n.outputs[0]);
    return true;
  }
  if (base != "nll_loss_forward") return false;
  const auto it = logSoftmax_.find(argTensor(n, "self"));
  if (it == logSoftmax_.end()) return false;
  const auto [x, lse] = it->second;
  const std::string out = n.outputs[0], totalWeight = n.outputs[1], target = argTensor(n, "target");
  const TensorInfo& scalar = info(out);
  const std::string picked = newTensor(scalar, {});
  std::vector<Argument> inputs = n.inputs;
  for (Argument& a : inputs)
    if (a.name == "self") a = tensorArg("self", x);
  Node nll = node(n, n.op, std::move(inputs), picked);
  nll.outputs.push_back(totalWeight);
  setProducer(totalWeight, nll.id);
  nodes.push_back(std::move(nll));
  const std::string counted = newTensor(info(target), info(target).shape);
  info(counted).dtype = DType::Bool;
  nodes.push_back(node(n, "aten::ne.Scalar",
                       {tensorArg("self", target), valueArg("other", static_cast<int64_t>(*capturedNumber(n.arg("ignore_index"))))},
                       counted));
  const std::string lseCounted = newTensor(info(lse), info(lse).shape);
  nodes.push_back(node(n, "aten::mul.Tensor", {tensorArg("self", lse), tensorArg("other", counted)}, lseCounted));
  std::string shift = newTensor(scalar, {});
  nodes.push_back(node(n, "aten::sum", {tensorArg("self", lseCounted)}, shift));
  if (scalarOr(n, "reduction", 0) == 1) {
    const std::string mean = newTensor(scalar, {});
    nodes.push_back(node(n, "aten::div.Tensor", {tensorArg("self", shift), tensorArg("other", totalWeight)}, mean));
    shift = mean;
  }
  nodes.push_back(node(n, "aten::add.Tensor", {tensorArg("self", picked), tensorArg("other", shift)}, out));
  return true;
}

}  // namespace stitch::agents::builtin::normalize
