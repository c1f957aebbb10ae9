// The generating side of the per-op test (ops_on_cpu.py): `op_candidates GRAPH OUT` writes the
// candidate the built-in brain generates for a captured graph (its task file named by the graph) into
// OUT, and fails naming every operator the plan leaves in PyTorch, with why: a registered operator
// (agents/builtin/ops) must be generated.
#include "agents/builtin/emit/Coder.h"
#include "agents/builtin/normalize/GraphNormalize.h"
#include "agents/builtin/plan/MemoryFormat.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

using namespace stitch::agents::builtin;

namespace {

std::string readFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int generate(const std::filesystem::path& graphFile, const std::filesystem::path& out) {
  auto captured = nlohmann::json::parse(readFile(graphFile), nullptr, false);
  if (captured.is_discarded()) return std::cerr << graphFile << ": not JSON\n", 1;
  auto graph = parseNormalized(captured);
  if (!graph) return std::cerr << graphFile << ": " << graph.error().message << "\n", 1;
  LaidOutPlan laid = planLaidOut(graph.value(), captured, {}, PlannerOptions{});
  for (const auto& u : laid.plan.uncovered) std::cerr << "left in PyTorch: " << u.op << ": " << u.reason << "\n";
  if (!laid.plan.uncovered.empty()) return 1;
  auto forward = findForward(readFile(graph.value().task));
  if (!forward) return std::cerr << graph.value().task << ": " << forward.error().message << "\n", 1;
  auto c = generateCandidate(laid.graph, laid.plan, forward.value(), Variant{}, "registered operators");
  if (!c) return std::cerr << "no candidate: " << c.error().message << "\n", 1;
  std::filesystem::create_directories(out);
  std::ofstream(out / "candidate.cu") << c.value().cuda;
  std::ofstream(out / "model_new.py") << c.value().python;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return std::cerr << "usage: op_candidates GRAPH.json OUT_DIR\n", 2;
  return generate(argv[1], argv[2]);
}
