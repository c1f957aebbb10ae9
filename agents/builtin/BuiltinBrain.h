// The built-in brain (design §8) behind the loop's Brain interface: the Planner's fusion plan,
// the Coder's generated candidate, and refine as a search over launch variants.
#pragma once

#include "agents/builtin/emit/Coder.h"
#include "agents/builtin/plan/LayoutSearch.h"
#include "agents/builtin/plan/LibraryVsEager.h"
#include "agents/loop/Brain.h"

#include <set>

namespace stitch::agents::builtin {

class BuiltinBrain final : public loop::Brain {
public:
  loop::BrainPlan plan(const BaselineFacts& facts, const JobRequest& request, bool replan) override;
  std::optional<loop::Draft> next(const std::optional<loop::Feedback>& last, const std::filesystem::path& dir,
                                  std::string& error) override;
  protocol::Range editRange() const override;
  std::string editText(const program::ProgramNames& program, std::optional<double> speedupEager) const override;
  // Its other plan is one kernel per operator, which moves more bytes: a fix for failures only.
  bool replansOnStagnation() const override { return false; }

  // The refine search space, in the order tried without a diagnosis: the default first, then
  // larger and smaller blocks and more work per thread, and scalar accesses last (also the fix
  // for misalignment). A diagnosis reorders the rest or ends the search (chooseVariant).
  static std::vector<Variant> variants();
  std::optional<std::size_t> chooseVariant(const std::optional<loop::Feedback>& last) const;

private:
  // The capture as planned from: normalized (before the layout pass), as the harness sent it, and
  // the reference's time per line.
  struct Capture {
    Graph graph;
    nlohmann::json json;
    std::map<int, double> lineTimesUs;
  };
  // graph_ and plan_ from the capture with options_, and `out` (tasks, operators left in PyTorch,
  // coverage, library math) describing them.
  void layOut(loop::BrainPlan& out);
  // Where the last candidate failed because a library call had no form that ran (a step-tagged
  // status, LibraryEmitter.h): that call's operator left in PyTorch from now on and the plan made
  // again; the reason, or nullopt when the failure names no library step.
  std::optional<std::string> leaveFailedCall(const loop::Feedback& last);
  // The layout trial's part of a refine step (LayoutSearch.h): after the first verified candidate,
  // the plan made again in the other memory format and the same variant picked; after the trial's
  // candidate, the faster format planned from now on and `judged` replaced by its feedback, which
  // the variant search goes on from. The variant to write, or nullopt where the step is not the
  // trial's (`planChanged` set where the plan was made again).
  // The eager-operator trial's part of a refine step (LibraryVsEager.h): after a verified
  // candidate whose trace shows a convolution step slower than eager's lines around it, that
  // convolution left to PyTorch and the same variant picked (`left` saying so); after the trial's
  // candidate, the operators given back where it was not faster (`judged` then the first's).
  std::optional<std::size_t> eagerOpStep(const std::optional<loop::Feedback>& last,
                                         std::optional<loop::Feedback>& judged, bool& planChanged, std::string& left);
  std::optional<std::size_t> layoutStep(const std::optional<loop::Feedback>& last,
                                        std::optional<loop::Feedback>& judged, bool& planChanged);

  std::optional<Capture> capture_;
  PlannerOptions options_;
  loop::BrainPlan planned_;                // the plan as last reported to the loop
  std::map<int, std::string> inPyTorch_;  // kept across replans: options_.inPyTorch
  std::optional<Graph> graph_;
  Plan plan_;
  ForwardSource forward_;
  std::set<std::size_t> tried_;  // indices into variants()
  std::optional<std::size_t> lastPick_;  // the variant of the last draft
  LayoutSearch layout_;
  EagerOpTrial eager_;
  bool replanned_ = false;
  // A candidate missed the tolerance (outputs or running statistics) while its library calls ran
  // eager's TF32: the replan, if the loop asks for one, is then made in exact fp32.
  bool tf32Missed_ = false;
};

}  // namespace stitch::agents::builtin
