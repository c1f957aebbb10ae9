// Layout as a measured decision (issue 32): where the job leaves a convolution network's memory
// format to the planner, its choice (MemoryFormat.h's policy) is a guess until timed. The
// candidate after the first verified one runs the other format with the same launch variant, the
// faster by the verifier's median is kept for the rest of the search, and the plan says what was
// tried and what each measured.
#pragma once

#include "agents/builtin/plan/Planner.h"
#include "agents/loop/Brain.h"

#include <optional>
#include <string>

namespace stitch::agents::builtin {

class LayoutSearch {
public:
  // A new plan: a trial is open only where the job left the layout to the planner (--layout auto).
  void reset(LayoutMode requested);

  // Whether the candidate `last` judged should be followed by the trial, no trial having been made
  // for this plan yet: it passed with a median, or it ran channels-last (`channelsLast`) with TF32
  // convolutions (`tf32`) and missed the tolerance. cuDNN's NHWC kernels run TF32 where eager's
  // NCHW algorithm for the same shape may be exact fp32 (8 of 22 lone convolutions of level 2 on an
  // H100, bench/results/layout_ab_2026-11-27_h100): NCHW in eager's precision comes before the
  // exact-fp32 retry then, unless the verifier's fp64 truth shows eager's output about as far off
  // as the candidate's (eager ran TF32 too).
  bool opens(const std::optional<loop::Feedback>& last, bool channelsLast, bool tf32) const;
  // Starts the trial after `first`, a candidate planned in the planner's layout (channels-last for
  // some convolution where `firstChannelsLast`): the mode to plan the trial's candidate with, and
  // the note its plan carries.
  LayoutMode begin(const loop::Feedback& first, bool firstChannelsLast);
  // The other layout plans the same program (no convolution changes format): no trial.
  void abandon();
  // Whether the last draft was the trial's candidate.
  bool trying() const { return state_ == State::Trying; }

  struct Decision {
    LayoutMode mode;        // to plan with from now on
    loop::Feedback judged;  // the kept layout's feedback, which the variant search goes on from
    bool switched = false;  // the other layout was kept
  };
  // Ends the trial with the other layout's verdict: kept only where it passed and measured faster
  // (or where the first failed).
  Decision decide(const loop::Feedback& other);

  // For the plan's convolution steps: what was tried and measured ("" before any trial).
  const std::string& note() const { return note_; }
  // For the candidate's title: "channels-last (layout trial)", "NCHW kept (measured)", ...
  std::string titlePart() const;

private:
  enum class State { Closed, Open, Trying, Decided };
  static std::string name(bool channelsLast) { return channelsLast ? "channels-last" : "NCHW"; }

  State state_ = State::Closed;
  bool firstChannelsLast_ = false;
  std::optional<loop::Feedback> first_;
  bool switched_ = false;
  std::string note_;
};

}  // namespace stitch::agents::builtin
