// The LLM brain's prompts, written for this project: the Planner's (a JSON plan), the Coder's
// (one complete fast-path candidate, from scratch or refining the last one), the Verifier's
// advice (one issue per round), the rubric judge's (`stitchcuda score --judge`) and the message
// that sends an invalid answer back. Each function only fills text in; what goes into the slots
// is decided by the brain.
#pragma once

#include "agents/loop/Brain.h"

#include <string>

namespace stitch::agents::llm::prompts {

struct PlannerInput {
  std::string fileName;
  std::string source;      // the task file, lines numbered
  std::string graph;       // the captured ATen graph, one node per line
  std::string lineTimes;   // the reference's time per source line
  std::string builtinPlan; // what the built-in planner would do, as JSON ("" when it has nothing)
  std::string hardware;
  std::string memory;      // earlier attempts ("" on the first plan)
  bool replan = false;
};

std::string plannerSystem();
std::string plannerUser(const PlannerInput& in);

struct CoderInput {
  std::string fileName;
  std::string source;        // the task file, lines numbered
  std::string graph;
  std::string plan;          // the plan's tasks as JSON
  std::string hardware;
  std::string startingPoint; // the built-in brain's candidate ("" when it has none)
  std::string memory;
};

struct RefineInput {
  CoderInput task;
  std::string previousCuda;
  std::string previousPython;
  std::string advice;  // the Verifier's one issue, from advice()
};

std::string coderSystem();
std::string coderFromScratch(const CoderInput& in);
std::string coderRefine(const RefineInput& in);

// The Verifier's judgement of the last candidate as one issue for the Coder: what failed (or
// limits speed), why, and the one change to make — backed by the numbers the verifier had.
std::string advice(const loop::Feedback& feedback);

// The rubric judge (protocol/SCORE.md, --judge): the four dimensions scored by a model, reported
// beside the deterministic scores and never replacing them or the guards.
struct JudgeInput {
  std::string taskSource;      // the reference (KernelBench format)
  std::string candidateCuda;   // "" for a load_inline file
  std::string candidatePython;
  std::string deterministic;   // the deterministic score's summary, JSON
  std::string feedback;        // a refinement's feedback, JSON ("" for a generation)
  std::string previousCuda;    // the refined candidate's CUDA ("" for a generation)
};

std::string judgeSystem();
std::string judgeUser(const JudgeInput& in);

// Sends an answer that failed parsing back: the exact error and what a valid answer looks like.
std::string repair(const std::string& error, bool truncated);

}  // namespace stitch::agents::llm::prompts
