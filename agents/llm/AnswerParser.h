// Strict reading of model answers: fenced code blocks, the Planner's JSON validated against the
// plan schema and the captured graph, the Coder's two files checked for the fast-path contract.
// Every error says exactly what is wrong, because it is sent back to the model verbatim.
#pragma once

#include "agents/ir/Outcome.h"
#include "protocol/StitchTypes.h"

#include <set>
#include <string>
#include <vector>

namespace stitch::agents::llm {

using builtin::Failure;
using builtin::Outcome;

struct FencedBlock {
  std::string info;  // what follows the opening fence: "json", "cuda candidate.cu", ...
  std::string text;
  int line = 0;      // one-based line of the opening fence
};

// Fails on a fence left open (an answer cut off mid-block).
Outcome<std::vector<FencedBlock>> fencedBlocks(const std::string& answer);

struct PlanContext {
  std::set<std::string> operators;  // the graph's compute ops, spelled as captured (aten::mul.Tensor)
  int lineCount = 0;                // of the task file
};

// The plan's tasks (status "active") and uncovered operators, or why the answer is not a plan.
Outcome<protocol::PlanParams> parsePlan(const std::string& answer, const PlanContext& context);

struct CandidateText {
  std::string strategy;  // the answer's "Strategy:" line
  std::string cuda;      // candidate.cu
  std::string python;    // model_new.py
};

Outcome<CandidateText> parseCandidate(const std::string& answer);

}  // namespace stitch::agents::llm
