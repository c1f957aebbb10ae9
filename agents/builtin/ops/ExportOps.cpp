// `stitch_ops_json OUT`: writes the operator registry as JSON (opsJson) to OUT, the list the harness
// reads (harness/stitchcuda_harness/ops.json). Run by the build (OpsJson.cmake), never by hand.
#include "agents/builtin/ops/OpDef.h"

#include <fstream>
#include <iostream>

int main(int argc, char** argv) {
  if (argc != 2) return std::cerr << "usage: stitch_ops_json OUT.json\n", 2;
  std::ofstream out(argv[1]);
  out << stitch::agents::builtin::ops::opsJson().dump(1) << "\n";
  if (!out) return std::cerr << "stitch_ops_json: cannot write " << argv[1] << "\n", 1;
  return 0;
}
