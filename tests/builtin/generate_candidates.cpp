// Writes each graph fixture's generated candidate (OUT/<fixture>/candidate.cu and model_new.py)
// for compile_candidates.py; exits 1 naming every fixture it cannot generate.
#include "FixtureGraphs.h"

#include <fstream>
#include <iostream>

using namespace stitch::agents::builtin;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: generate_candidates OUT_DIR\n";
    return 2;
  }
  const std::filesystem::path out = argv[1];
  int failures = 0;
  for (const auto& name : testing::fixtureNames()) {
    auto c = testing::fixtureCandidate(name);
    if (!c) {
      std::cerr << name << ": no candidate: " << c.error().message << "\n";
      ++failures;
      continue;
    }
    std::filesystem::create_directories(out / name);
    std::ofstream(out / name / "candidate.cu") << c.value().cuda;
    std::ofstream(out / name / "model_new.py") << c.value().python;
    std::cout << (out / name / "candidate.cu").string() << "\n";
  }
  return failures ? 1 : 0;
}
