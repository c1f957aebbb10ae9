// Writes each graph fixture's generated candidate (OUT/<fixture>/candidate.cu and model_new.py)
// for compile_candidates.py, and for fixtures with library calls also the candidate of a job that
// allows TF32 (OUT/<fixture>.tensor_cores/), the candidate in eager's TF32 precision, both flags
// on (OUT/<fixture>.eager_tf32/), and that one with the convolutions channels-last as a job may ask
// (OUT/<fixture>.channels_last/, MemoryFormat.h); exits 1 naming every fixture it cannot generate.
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
  auto write = [&](const std::string& dir, const CandidateSource& c) {
    std::filesystem::create_directories(out / dir);
    std::ofstream(out / dir / "candidate.cu") << c.cuda;
    std::ofstream(out / dir / "model_new.py") << c.python;
    std::cout << (out / dir / "candidate.cu").string() << "\n";
  };
  for (const auto& name : testing::fixtureNames()) {
    auto c = testing::fixtureCandidate(name);
    if (!c) {
      std::cerr << name << ": no candidate: " << c.error().message << "\n";
      ++failures;
      continue;
    }
    write(name, c.value());
    PlannerOptions tensorCores;
    tensorCores.tensorCores = true;
    auto t = testing::fixtureCandidate(name, tensorCores);
    if (!t) {
      std::cerr << name << ": no candidate when TF32 is allowed: " << t.error().message << "\n";
      ++failures;
    } else if (t.value().cuda != c.value().cuda) {
      write(name + ".tensor_cores", t.value());
    }
    PlannerOptions eager;
    eager.convTf32 = eager.matmulTf32 = true;
    eager.precisionWhy = PrecisionWhy::Eager;
    auto e = testing::fixtureCandidate(name, eager);
    if (!e) {
      std::cerr << name << ": no candidate in eager's TF32 precision: " << e.error().message << "\n";
      ++failures;
    } else if (e.value().cuda != c.value().cuda) {
      write(name + ".eager_tf32", e.value());
    }
    PlannerOptions channelsLast = eager;
    channelsLast.layout = LayoutMode::ChannelsLast;
    auto l = testing::fixtureCandidate(name, channelsLast);
    if (!l) {
      std::cerr << name << ": no candidate with channels-last convolutions: " << l.error().message << "\n";
      ++failures;
    } else if (e && l.value().cuda != e.value().cuda) {
      write(name + ".channels_last", l.value());
    }
  }
  return failures ? 1 : 0;
}
