// A module's plain tensor attribute that forward reads and rebinds (a vanilla RNN cell's
// `self.hidden`): the capture names it (role "attribute") and records what the forward leaves in it
// (`state`); ModelNew passes it to the program and binds the attribute as Model does, so the next
// call reads the same state. generated_on_cpu.py runs module_state over consecutive calls.
#include "FixtureGraphs.h"

#include <functional>
#include <stdexcept>

#include <gtest/gtest.h>

namespace stitch::agents::builtin {
namespace {

using nlohmann::json;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The candidate of a fixture's graph as `edit` changes it.
Outcome<CandidateSource> editedCandidate(const std::string& name, const std::function<void(json&)>& edit) {
  auto j = testing::fixtureJson(name);
  if (!j) return j.error();
  edit(j.value());
  auto g = parseNormalized(j.value());
  if (!g) return g.error();
  auto laid = planLaidOut(g.value(), j.value(), {}, {});
  auto f = testing::fixtureForward(laid.graph);
  if (!f) return f.error();
  return generateCandidate(laid.graph, laid.plan, f.value(), Variant{}, name);
}

json& tensorOf(json& graph, const std::string& id) {
  for (json& t : graph["tensors"])
    if (t["id"] == id) return t;
  throw std::runtime_error("no tensor " + id);
}

TEST(ModuleState, TheCellsHiddenStateIsReadFromAndLeftInItsAttribute) {
  auto g = testing::loadFixture("rnn_cell_state");
  ASSERT_TRUE(g.ok()) << g.error().message;
  ASSERT_EQ(g.value().state.size(), 1u);
  EXPECT_EQ(g.value().state[0].first, "hidden");
  EXPECT_EQ(g.value().stateOutputs, 1u);  // the forward returns h2o's output, not the state
  auto c = testing::fixtureCandidate("rnn_cell_state");
  ASSERT_TRUE(c.ok()) << c.error().message;
  const std::string& py = c.value().python;
  EXPECT_TRUE(has(py, "_stitch_lib.forward(x, self.hidden, ")) << py;
  EXPECT_TRUE(has(py, "        self.hidden = out0\n        return out1\n")) << py;
}

TEST(ModuleState, ReturnedStateIsTheOneFreshResult) {
  auto c = editedCandidate("module_state", [](json& j) { j["outputs"] = json::array({j["state"][0]["tensor"]}); });
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(has(c.value().python, "        self.hidden = out0\n        return out0\n")) << c.value().python;
}

// `old = self.hidden; self.hidden = new; return old`: the result is taken before the rebinding.
TEST(ModuleState, AResultThatIsTheOldStateIsTakenFirst) {
  auto c = editedCandidate("module_state", [](json& j) { j["outputs"] = {"t2"}; });
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(has(c.value().python, "v_t2 = self.hidden\n        self.hidden = out0\n        return v_t2\n"))
      << c.value().python;
}

// As a GPU captures it: the attribute stays on the CPU (Module.to moves only parameters and
// buffers), so forward's `.to(x.device)` is a copy between devices, which PyTorch makes.
TEST(ModuleState, TheCopyOfACpuAttributeToTheGpuStaysInPyTorch) {
  auto c = editedCandidate("module_state", [](json& j) {
    for (json& t : j["tensors"]) t["device"] = t["id"] == "t2" ? "cpu" : "cuda:0";
    j["tensors"].push_back(tensorOf(j, "t2"));
    j["tensors"].back()["id"] = "t99";
    j["tensors"].back()["role"] = "intermediate";
    j["tensors"].back()["name"] = nullptr;
    j["tensors"].back()["producer"] = 99;
    j["tensors"].back()["device"] = "cuda:0";
    json copy = {{"id", 99},
                 {"op", "aten::_to_copy"},
                 {"kind", "compute"},
                 {"module", ""},
                 {"inputs", {{{"name", "self"}, {"tensor", "t2"}},
                             {{"name", "device"}, {"value", "cuda:0"}, {"py", "{device}"}, {"keyword", true}}}},
                 {"outputs", {"t99"}},
                 {"source", j["nodes"][0]["source"]}};
    for (json& n : j["nodes"])
      for (json& a : n["inputs"])
        if (a.contains("tensor") && a["tensor"] == "t2") a["tensor"] = "t99";
    j["nodes"].insert(j["nodes"].begin(), copy);
  });
  ASSERT_TRUE(c.ok()) << c.error().message;
  const std::string& py = c.value().python;
  EXPECT_TRUE(has(py, "torch.ops.aten._to_copy.default(self.hidden, device=x.device)")) << py;
  EXPECT_TRUE(has(py, "self.hidden = out0\n")) << py;
  EXPECT_FALSE(has(py, "forward(self.hidden")) << py;
}

}  // namespace
}  // namespace stitch::agents::builtin
