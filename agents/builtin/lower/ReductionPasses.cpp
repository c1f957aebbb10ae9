// Which reductions of a kernel share a pass over its rows; see ReductionPasses.h.
#include "agents/builtin/lower/ReductionPasses.h"

#include "agents/builtin/ops/OpDef.h"

#include <set>

namespace stitch::agents::builtin {

namespace {

// Whether values a and b compute the same thing: one value, or the same operation on the same
// operands. Two nodes that read one tensor each make their own Input value of it: training
// BatchNorm's per-image sums and squared deviations over a channels-last activation were two
// passes over it, not one fold.
bool sameValue(const FusedKernel& k, int a, int b) {
  if (a == b) return true;
  const KernelValue& A = k.values[a];
  const KernelValue& B = k.values[b];
  if (A.op == ValueOp::Reduce || A.op == ValueOp::ArgIndex || A.op == ValueOp::Scan ||
      A.args.size() != B.args.size())
    return false;
  // Every field but the operands, which are compared as values below.
  KernelValue ownA = A, ownB = B;
  ownA.args.clear();
  ownB.args.clear();
  if (!(ownA == ownB)) return false;
  for (std::size_t i = 0; i < A.args.size(); ++i)
    if (!sameValue(k, A.args[i], B.args[i])) return false;
  return true;
}

// Softmax's statistics: `m` the Max of x, `s` a later Sum of exp(x − m).
bool maxExpSum(const FusedKernel& k, int m, int s) {
  const KernelValue& M = k.values[m];
  const KernelValue& S = k.values[s];
  if (M.reduce != ReduceKind::Max || S.reduce != ReduceKind::Sum) return false;
  const KernelValue& e = k.values[S.args[0]];
  if (e.op != ValueOp::Unary || e.fn != ops::fn::kExp || !e.params.empty()) return false;
  const KernelValue& d = k.values[e.args[0]];
  return d.op == ValueOp::Binary && d.fn == ops::fn::kSub && sameValue(k, d.args[0], M.args[0]) && d.args[1] == m;
}

// A norm's statistics: `a` the Sum of x, `b` a later Sum of (x − mean)², mean = a / n with n the
// row's element count. The mean's value, or -1.
int moments(const FusedKernel& k, int a, int b) {
  const KernelValue& A = k.values[a];
  const KernelValue& B = k.values[b];
  if (A.reduce != ReduceKind::Sum || B.reduce != ReduceKind::Sum) return -1;
  const KernelValue& sq = k.values[B.args[0]];
  int c = -1;
  if (sq.op == ValueOp::Binary && sq.fn == ops::fn::kMul && sq.args[0] == sq.args[1]) c = sq.args[0];
  if (sq.op == ValueOp::Unary && sq.fn == ops::fn::kSquare) c = sq.args[0];
  if (sq.op == ValueOp::Unary && sq.fn == ops::fn::kPowScalar && sq.params == std::vector<double>{2.0}) c = sq.args[0];
  if (c < 0) return -1;
  const KernelValue& C = k.values[c];
  if (C.op != ValueOp::Binary || C.fn != ops::fn::kSub || !sameValue(k, C.args[0], A.args[0])) return -1;
  const int q = C.args[1];
  const KernelValue& Q = k.values[q];
  if (Q.op != ValueOp::Binary || Q.fn != ops::fn::kDiv || Q.args[0] != a) return -1;
  const KernelValue& n = k.values[Q.args[1]];
  if (n.op != ValueOp::Constant || n.params.at(0) != static_cast<double>(k.reduced())) return -1;
  return q;
}

}  // namespace

std::vector<int> reductionValues(const FusedKernel& k) {
  std::vector<int> r;
  for (std::size_t i = 0; i < k.values.size(); ++i)
    if (k.values[i].op == ValueOp::Reduce) r.push_back(static_cast<int>(i));
  return r;
}

bool dependsOnReduction(const FusedKernel& k, int value) {
  const KernelValue& v = k.values[value];
  if (v.op == ValueOp::Reduce || v.op == ValueOp::ArgIndex) return true;
  for (int a : v.args)
    if (dependsOnReduction(k, a)) return true;
  return false;
}

std::vector<ReductionPass> reductionPasses(const FusedKernel& k) {
  std::vector<ReductionPass> ps;
  std::set<int> taken;
  const auto reds = reductionValues(k);
  for (std::size_t i = 0; i < reds.size(); ++i) {
    if (taken.count(reds[i])) continue;
    ReductionPass p{{reds[i]}};
    const int x = k.values[reds[i]].args[0];
    if (!dependsOnReduction(k, x) && !k.values[x].integer)
      for (std::size_t j = i + 1; j < reds.size() && p.fold == Fold::None; ++j) {
        if (taken.count(reds[j])) continue;
        if (maxExpSum(k, reds[i], reds[j])) p = {{reds[i], reds[j]}, Fold::MaxExpSum, x};
        else if (const int q = moments(k, reds[i], reds[j]); q >= 0) p = {{reds[i], reds[j]}, Fold::Moments, x, q};
      }
    taken.insert(p.reds.begin(), p.reds.end());
    ps.push_back(p);
  }
  return ps;
}

bool onePass(const FusedKernel& k) {
  for (const KernelOutput& out : k.outputs)
    if (!out.perRow) return false;
  for (const ReductionPass& p : reductionPasses(k))
    if (p.fold == Fold::None && dependsOnReduction(k, k.values[p.reds[0]].args[0])) return false;
  return true;
}

}  // namespace stitch::agents::builtin
