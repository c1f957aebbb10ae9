// Prints a captured graph (stitchcuda.graph/1 JSON) as the built-in brain's normalization rewrites
// it, for normalized_on_cpu.py to run both forms on PyTorch and compare them.
#include "agents/builtin/normalize/GraphNormalize.h"

#include <fstream>
#include <iostream>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: normalize_graph GRAPH.json\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  const auto graph = nlohmann::json::parse(in, nullptr, false);
  if (graph.is_discarded()) {
    std::cerr << argv[1] << ": not JSON\n";
    return 1;
  }
  std::cout << stitch::agents::builtin::normalizeGraph(graph).dump() << "\n";
  return 0;
}
