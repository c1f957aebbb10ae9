// What drives the PLAN and CODE/REFINE phases of the loop (design §5): the built-in brain here,
// the LLM brain later. The loop owns the worker, the verifier calls, budgets and events; a
// brain only decides what to try next from the facts and the last verdict.
#pragma once

#include "agents/BaselineJob.h"
#include "agents/program/ProgramFiles.h"
#include "profiling/ComputeFloor.h"
#include "profiling/VerifierFeedback.h"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace stitch::agents::loop {

// One kernel of a traced forward of the candidate (PROFILE's trace).
struct Launch {
  std::string name;
  double us = 0;
  int forward = 0;  // which traced forward launched it
};

// The verifier's judgement of the last candidate, reduced to what a brain acts on.
struct Feedback {
  bool built = false;
  bool passed = false;
  std::vector<std::string> failedChecks;
  std::optional<double> medianMs;
  std::string diagnosis;  // one issue, one suggestion
  // The Verifier's structured round (protocol/FEEDBACK.md): `category` is the diagnosis code,
  // `suggestion` the one change to try, `evidence` the metric values behind both. Fix mode for
  // a failed candidate, optimize mode for a verified one; absent when nothing could be said.
  std::optional<profiling::VerifierFeedback> verifier;
  std::string metricsSource;             // what the optimize round rests on: "ncu" | "trace" | "timing"
  std::optional<std::string> bound;      // the hottest kernel's: memory | compute | latency (needs ncu)
  std::optional<double> achievedPct;     // of that bound's measured ceiling
  std::optional<double> floorFraction;   // roofline floor / measured median, from the harness's timing
  std::optional<double> speedupEager;    // eager's median / this candidate's, timed side by side
  // From PROFILE's trace, where one was taken: the program's own kernels over `tracedForwards`
  // forwards, in launch order (those of operators left in PyTorch excluded), so a brain can tell
  // the time of each of its steps.
  std::vector<Launch> launches;
  int tracedForwards = 0;
};

struct BrainPlan {
  protocol::PlanParams plan;  // tasks and uncovered operators, for the editor
  bool generatable = false;   // a candidate can be generated for it
  std::string reason;         // why not, when it cannot
  // The math its library calls (GEMMs, convolutions, RNNs) must do, each on the units it may run
  // on: the compute floor (profiling/ComputeFloor.h).
  std::vector<profiling::LibraryMath> math;
};

struct Draft {
  std::string title;
  std::string variant;
  std::filesystem::path dir;  // holds the candidate's .cu and .py
  // The plan this draft was made from, where the brain changed it while refining (an operator
  // moved to PyTorch after its library call could not run): the loop announces it.
  std::optional<BrainPlan> plan;
};

class Brain {
public:
  virtual ~Brain() = default;
  // PLAN (replan: after repeated failures or stagnation, another partition).
  virtual BrainPlan plan(const BaselineFacts& facts, const JobRequest& request, bool replan) = 0;
  // Whether a replan can help when verified candidates stop getting faster. A brain whose only
  // other plan moves more bytes (the built-in one's unfused partition) says no.
  virtual bool replansOnStagnation() const { return true; }
  // CODE/REFINE: writes the next candidate into `dir`; nullopt when the search is exhausted.
  virtual std::optional<Draft> next(const std::optional<Feedback>& last, const std::filesystem::path& dir,
                                    std::string& error) = 0;
  // The edit of the user's file that runs the last candidate as the program `program` (its .cu and
  // loader written beside the model, agents/program): its range and text. `speedupEager`, once the
  // candidate is timed, lets the program's loader weigh chunks of another batch size against the
  // original forward.
  virtual protocol::Range editRange() const = 0;
  virtual std::string editText(const program::ProgramNames& program, std::optional<double> speedupEager) const = 0;
};

}  // namespace stitch::agents::loop
