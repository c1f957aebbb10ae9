// Never slower than eager's library choice (issue 32): a convolution whose cuDNN step, as the
// candidate's trace timed it, took longer than eager's whole source line around the same
// convolution (the reference's profile) is left to PyTorch in the next candidate, with the fused
// steps around it; the loop's measurement of that partial candidate then decides whether it stays.
#pragma once

#include "agents/builtin/plan/Planner.h"
#include "agents/loop/Brain.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace stitch::agents::builtin {

// The GPU time per forward of each step of `plan` that the trace can tell apart, by step index:
// a generated kernel is named after its step (`k3_kernel`); every other activity (cuDNN's and
// cuBLASLt's kernels, a convolution's epilogue pass) belongs to the library steps between the
// generated ones around it in its forward, and is counted only where those are one step.
std::map<std::size_t, double> stepTimesUs(const Plan& plan, const std::vector<loop::Launch>& launches, int forwards);

// Convolution steps slower than eager by the profiles: those whose operators are on the same
// source lines (one, or a Sequential's several on the line that calls it), together.
struct SlowerThanEager {
  std::vector<std::size_t> steps;
  std::vector<int> nodes;  // each step's convolution node, what Plan options leave to PyTorch
  std::set<int> lines;
  double oursUs = 0;       // the steps, from the candidate's trace
  double eagerUs = 0;      // eager's time for those lines: an upper bound of eager's convolutions there
  std::string reason() const;
};

// The convolution steps of `plan` (by its candidate's trace) that took longer, per group of steps
// whose operators share source lines, than the reference's time for those whole lines
// (`lineTimesUs`), by more than `margin`. A group is judged only where each of its steps was timed
// and no library step outside it has an operator on its lines, so that the lines' time bounds
// eager's own convolutions (and what their epilogues folded) from above.
std::vector<SlowerThanEager> slowerThanEager(const Graph& graph, const Plan& plan,
                                             const std::map<int, double>& lineTimesUs,
                                             const std::map<std::size_t, double>& stepUs, double margin = 0.1);

// The trial of one plan: after a verified candidate with such steps, the next leaves them to
// PyTorch (same launch variant), and it is kept only where it measured faster.
class EagerOpTrial {
public:
  void reset() { state_ = State::Open, first_.reset(), left_.clear(); }
  bool open() const { return state_ == State::Open; }
  bool trying() const { return state_ == State::Trying; }
  void close() { state_ = State::Decided; }
  // Starts the trial after `first`, leaving `nodes` (with their reasons) to PyTorch.
  void begin(const loop::Feedback& first, std::map<int, std::string> nodes);
  const std::map<int, std::string>& left() const { return left_; }
  // Whether `other` (the trial's verdict) keeps the operators in PyTorch; else the first
  // candidate's feedback is what the search goes on from (`judged`).
  bool keep(const loop::Feedback& other, std::optional<loop::Feedback>& judged);

private:
  enum class State { Open, Trying, Decided };
  State state_ = State::Open;
  std::optional<loop::Feedback> first_;
  std::map<int, std::string> left_;
};

}  // namespace stitch::agents::builtin
