// Generated kernels that are the same but for their names, compiled once. A network's repeated
// blocks make the same kernels again with other tensors (ResNet-101's 449 generated kernels are 50
// distinct ones), and nvcc's time goes by the kernels it compiles. A repeat keeps its own launcher,
// which binds its own tensors and launches the first kernel's code; the trace then names the
// first kernel for both, which stepTimesUs (plan/LibraryVsEager.h) reads by plan order.
#pragma once

#include "agents/builtin/emit/CudaEmitter.h"

#include <map>
#include <string>
#include <vector>

namespace stitch::agents::builtin {

class SharedKernels {
public:
  // Step `id`'s kernel (`e`, named after `id` as CudaEmitter names it): the index of the block that
  // holds it, a new one unless an earlier kernel's device code is the same but for its name.
  std::size_t add(const std::string& id, const EmittedKernel& e);
  // Block `b` between its markers (Coder.h): its device code, then every launcher it serves.
  std::string text(std::size_t b) const;

private:
  struct Block {
    std::string id;                      // the step its device code is named after
    std::string code;                    // device code and the first launcher
    std::vector<std::string> launchers;  // their names, the first's first
    std::string repeats;                 // the other launchers, calling the first's code
  };
  std::vector<Block> blocks_;
  std::map<std::string, std::size_t> byCode_;  // device code with the names made neutral -> block
};

}  // namespace stitch::agents::builtin
