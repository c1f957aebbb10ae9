// The normalization's rewrites of batch norm and module state updates (Normalizer.h): training-mode
// batch norm as the plain nodes the planner fuses, with its running statistics written back;
// instance norm as a norm over the spatial dims of its own input; and an integer buffer's counter.
#include "agents/builtin/kernel/NodeArgs.h"
#include "agents/builtin/normalize/Normalizer.h"

#include <algorithm>

namespace stitch::agents::builtin::normalize {
namespace {

std::vector<Argument> tensors2(const std::string& a, const std::string& b) {
  return {tensorArg("self", a), tensorArg("other", b)};
}

std::vector<Argument> withScalar(const std::string& a, double v) { return {tensorArg("self", a), valueArg("other", v)}; }

std::vector<Argument> reduceArgs(const std::string& a, const std::vector<int64_t>& dims) {
  return {tensorArg("self", a), valueArg("dim", dims), valueArg("keepdim", true)};
}

}  // namespace

// A float32 [C] buffer the forward may write back into (running statistics).
bool Normalizer::channelBuffer(const std::string& id, int64_t channels) {
  if (id.empty()) return false;
  const TensorInfo& t = info(id);
  return t.role == Role::Buffer && t.dtype == DType::Float32 && t.shape == std::vector<int64_t>{channels} &&
         !isView(id) && t.strides == std::vector<int64_t>{1};
}

// Training-mode batch norm (every nn.BatchNorm* of a model that never calls .eval()) as the
// plain nodes the planner fuses: per (n, c) row its mean and sum of squared deviations (two
// passes over the row, as `normalize` takes a row), then per channel Chan's combination of the
// rows (no cancellation where the mean dwarfs the spread, as PyTorch's Welford), the
// normalization, and running_mean / running_var updated as PyTorch updates them (momentum,
// the unbiased variance), each by a write-back node: copy_ into the buffer. A [N, C] input has
// rows of one element, so its statistics are one pass over the batch instead. The saved
// statistics (the other outputs) must be unread.
bool Normalizer::trainingBatchNorm(const Node& n, const std::string& base, std::vector<Node>& nodes) {
  static const std::set<std::string> ops{"native_batch_norm", "_native_batch_norm_legit", "cudnn_batch_norm",
                                         "_batch_norm_with_update"};
  if (!ops.count(base) || n.outputs.empty()) return false;
  const bool training = base == "_batch_norm_with_update" || isTrue(n.arg("training"));
  if (!training) return false;
  for (std::size_t i = 1; i < n.outputs.size(); ++i)
    if (!unused(n.outputs[i])) return false;
  const std::string x = argTensor(n, "input"), w = argTensor(n, "weight"), b = argTensor(n, "bias");
  const std::string rm = argTensor(n, "running_mean"), rv = argTensor(n, "running_var");
  if (x.empty() || info(x).dtype != DType::Float32) return false;
  const std::vector<int64_t> shape = info(x).shape;
  if (shape.size() < 2) return false;
  const int64_t channels = shape[1];
  const bool update = !rm.empty() || !rv.empty();
  // Without running statistics and one sample (instance norm, which ATen runs as batch norm over
  // [1, N·C, ...]) the rows are the channels: the lowering normalizes each row in one kernel.
  if (!update && shape[0] == 1) return false;
  const auto m = capturedNumber(n.arg(base == "cudnn_batch_norm" ? "exponential_average_factor" : "momentum"));
  if (update && (!channelBuffer(rm, channels) || !channelBuffer(rv, channels) || !m))
    return false;  // momentum None (a cumulative average) stays in PyTorch
  const double momentum = update ? *m : 0.0;
  const double eps = scalarOr(n, base == "cudnn_batch_norm" ? "epsilon" : "eps", 1e-5);
  const TensorInfo& like = info(x);
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
  auto op = [&](const std::string& name, std::vector<Argument> inputs, const std::vector<int64_t>& s,
                std::string out = "") {
    if (out.empty()) out = newTensor(like, s);
    nodes.push_back(node(n, name, std::move(inputs), out));
    return out;
  };
  auto view = [&](const std::string& of, const std::vector<int64_t>& s) {
    const std::string out = newTensor(info(of), s, of);
    nodes.push_back(node(n, "aten::view", {tensorArg("self", of), valueArg("size", s)}, out, NodeKind::View));
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
    const std::string spread = op(
        "aten::mul.Scalar", withScalar(op("aten::mul.Tensor", tensors2(e, e), rowShape), static_cast<double>(spatial)),
        rowShape);
    m2 = op("aten::sum.dim_IntList", reduceArgs(op("aten::add.Tensor", tensors2(rowM2, spread), rowShape), {0}),
            chanShape);
  }
  const std::string var = op("aten::div.Scalar", withScalar(m2, static_cast<double>(count)), chanShape);
  const std::string rstd =
      op("aten::rsqrt", {tensorArg("self", op("aten::add.Scalar", withScalar(var, eps), chanShape))}, chanShape);
  if (update) {
    // running = (1 - momentum) * running + momentum * batch statistic, computed over the
    // statistics' own [1, C, 1...] shape so that it joins the kernel that reduces them.
    auto writeBack = [&](const std::string& buffer, const std::string& stat) {
      const std::string old = op("aten::mul.Scalar", withScalar(view(buffer, chanShape), 1.0 - momentum), chanShape);
      const std::string fresh = op(
          "aten::add.Tensor", tensors2(old, op("aten::mul.Scalar", withScalar(stat, momentum), chanShape)), chanShape);
      const std::string target = newTensor(info(buffer), {channels}, buffer);
      nodes.push_back(node(n, "aten::copy_", {tensorArg("self", buffer), tensorArg("src", view(fresh, {channels}))},
                           target, NodeKind::Inplace));
    };
    writeBack(rm, mean);
    writeBack(rv, op("aten::div.Scalar", withScalar(m2, static_cast<double>(count - 1)), chanShape));
  }
  const std::string out = n.outputs[0];
  const bool affineW = !w.empty(), affineB = !b.empty();
  std::vector<int64_t> paramShape(shape.size() - 1, 1);
  paramShape[0] = channels;
  const std::string centered = op("aten::sub.Tensor", tensors2(x, mean), shape);
  std::string y = op("aten::mul.Tensor", tensors2(centered, rstd), shape, affineW || affineB ? "" : out);
  if (affineW) y = op("aten::mul.Tensor", tensors2(y, view(w, paramShape)), shape, affineB ? "" : out);
  if (affineB) op("aten::add.Tensor", tensors2(y, view(b, paramShape)), shape, out);
  return true;
}

// Instance norm without affine parameters or running statistics (nn.InstanceNorm*d's default), which
// ATen runs as training batch norm over a [1, N·C, ...] view of the [N, C, ...] input and then views
// back: a layer norm over the input's own spatial dims (the same rows, mean and biased variance).
// The views merge and split the dims a kernel iterates, so each kept the kernel making the input (a
// convolution's bias), the statistics and the kernel using the result (a division) apart: three
// passes where one row kernel does (bench/results/conv_tails_2026-11-28_h100). The view in, already
// among `nodes`, is dropped; the view out is skipped when the pass reaches it (`skipped_`), its
// result now the layer norm's.
bool Normalizer::instanceNorm(const Node& n, const std::string& base, std::vector<Node>& nodes) {
  static const std::set<std::string> ops{"native_batch_norm", "_native_batch_norm_legit", "cudnn_batch_norm"};
  if (!ops.count(base) || n.outputs.empty() || !isTrue(n.arg("training"))) return false;
  for (const char* arg : {"weight", "bias", "running_mean", "running_var"})
    if (!argTensor(n, arg).empty()) return false;
  for (std::size_t i = 1; i < n.outputs.size(); ++i)
    if (!unused(n.outputs[i])) return false;
  const std::string flat = argTensor(n, "input"), normed = n.outputs[0];
  if (flat.empty() || returned_.count(flat) || returned_.count(normed) || !info(flat).viewOf) return false;
  const std::string x = *info(flat).viewOf;
  const Node* back = soleReader(normed, "self");
  const auto in = std::find_if(nodes.begin(), nodes.end(), [&](const Node& m) {
    return m.kind == NodeKind::View && m.outputs.size() == 1 && m.outputs[0] == flat && argTensor(m, "self") == x;
  });
  if (!back || back->kind != NodeKind::View || back->outputs.size() != 1 || in == nodes.end() || readers_[flat] != 1)
    return false;
  const std::string y = back->outputs[0];
  const TensorInfo &xi = info(x), &fi = info(flat), &yi = info(y);
  const std::vector<int64_t>& shape = xi.shape;
  if (xi.dtype != DType::Float32 || shape.size() < 3 || !xi.contiguous() || !fi.contiguous() || !yi.contiguous() ||
      yi.shape != shape || fi.shape.size() != shape.size() || fi.shape[0] != 1 || fi.shape[1] != shape[0] * shape[1] ||
      !std::equal(shape.begin() + 2, shape.end(), fi.shape.begin() + 2))
    return false;
  const std::vector<int64_t> spatial(shape.begin() + 2, shape.end());
  std::vector<int64_t> statShape(shape.size(), 1);
  statShape[0] = shape[0], statShape[1] = shape[1];
  Node ln = node(n, "aten::native_layer_norm",
                 {tensorArg("input", x), valueArg("normalized_shape", spatial), valueArg("weight", std::monostate{}),
                  valueArg("bias", std::monostate{}),
                  valueArg("eps", scalarOr(n, base == "cudnn_batch_norm" ? "epsilon" : "eps", 1e-5))},
                 y);
  for (int stat = 0; stat < 2; ++stat) {  // mean and rstd, unread as batch norm's were
    ln.outputs.push_back(newTensor(xi, statShape));
    setProducer(ln.outputs.back(), ln.id);
  }
  info(y).viewOf.reset();
  info(y).storageOffset = 0;
  nodes.erase(in);
  skipped_.insert(back->id);
  dropped_.insert(n.outputs.begin(), n.outputs.end());  // the [1, N·C, ...] result and its unread statistics
  dropped_.insert(flat);
  nodes.push_back(std::move(ln));
  return true;
}

// `num_batches_tracked += 1`: an integer buffer counted up by a write-back node.
bool Normalizer::counterIncrement(const Node& n, const std::string& base, std::vector<Node>& nodes) {
  if (base != "add_" || n.kind != NodeKind::Inplace || n.outputs.size() != 1) return false;
  const std::string target = argTensor(n, "self");
  const Argument* other = n.arg("other");
  const int64_t* step = other && !other->tensor ? std::get_if<int64_t>(&other->value) : nullptr;
  if (target.empty() || !step || scalarOr(n, "alpha", 1.0) != 1.0) return false;
  const TensorInfo& t = info(target);
  if (t.role != Role::Buffer || t.dtype != DType::Int64 || isView(target)) return false;
  const std::string sum = newTensor(t, t.shape);
  nodes.push_back(node(n, "aten::add.Scalar", {tensorArg("self", target), valueArg("other", *step)}, sum));
  nodes.push_back(node(n, "aten::copy_", {tensorArg("self", target), tensorArg("src", sum)}, n.outputs[0],
                       NodeKind::Inplace));
  return true;
}

}  // namespace stitch::agents::builtin::normalize
