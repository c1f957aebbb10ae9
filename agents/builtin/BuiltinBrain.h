// The built-in brain (design §8) behind the loop's Brain interface: the Planner's fusion plan,
// the Coder's generated candidate, and refine as a search over launch variants.
#pragma once

#include "agents/builtin/Coder.h"
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
  std::optional<Graph> graph_;
  Plan plan_;
  ForwardSource forward_;
  std::set<std::size_t> tried_;  // indices into variants()
  std::optional<std::size_t> lastPick_;  // the variant of the last draft
  bool replanned_ = false;
};

}  // namespace stitch::agents::builtin
