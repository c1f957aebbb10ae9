// The passes a row or column kernel makes over its reduced range: one per reduction, except that
// softmax's max and sum of exponentials, and a norm's mean and squared deviations, each reading
// the row twice as two reductions (and a third time to write it), fold into one pass that computes
// both: softmax's online max and rescaled sum, the norm's Welford moments. The emitter generates
// the passes; the planner says how many there are.
#pragma once

#include "agents/builtin/kernel/FusedKernel.h"

#include <vector>

namespace stitch::agents::builtin {

enum class Fold { None, MaxExpSum, Moments };

// What one pass computes: one reduction, or two folded into one state.
struct ReductionPass {
  std::vector<int> reds;  // its Reduce values, in order
  Fold fold = Fold::None;
  int input = -1;  // a fold's: the value both reduce
  int mean = -1;   // Moments: the norm's mean (sum / n), which the state holds
};

// The kernel's Reduce values, in order.
std::vector<int> reductionValues(const FusedKernel& k);
// Whether `value` needs a finished reduction (a Reduce or ArgIndex among its operands).
bool dependsOnReduction(const FusedKernel& k, int value);
// The passes in order. Folding moves the second reduction up to the first's pass, which holds
// where x depends on no reduction.
std::vector<ReductionPass> reductionPasses(const FusedKernel& k);
// Whether every pass reads only the kernel's inputs (none needs a finished reduction) and nothing
// is written per element: the passes can share one read of the row, which no thread need hold for
// a later pass.
bool onePass(const FusedKernel& k);

}  // namespace stitch::agents::builtin
