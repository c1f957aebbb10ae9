// The agent's transitions as training data (protocol/TRANSITIONS.md): every CODE and REFINE step
// of a job as one atomic-skill record — the skill, what the Coder was given (task, plan, feedback,
// the previous candidate), the candidate it produced, its verdict, what PROFILE said about it and
// its rubric reward — one JSON line each, so a job run over a task set yields a training set.
#pragma once

#include "protocol/Result.h"
#include "protocol/StitchTypes.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stitch::agents::loop {

inline constexpr const char* kTransitionSchema = "stitchcuda.transition/1";

struct Transition {
  std::string jobId;
  int step = 0;                 // 1-based, in the order the job took them
  std::string skill;            // "generate" (CODE: from scratch) | "refine" (REFINE: from feedback)
  std::string candidateId;
  // Prompt context: what the Coder was given.
  std::string taskFile;         // the job's snapshot of the model
  std::string taskSource;       // its text
  protocol::json plan;          // PlanParams as streamed (tasks, uncovered, coverage)
  std::optional<protocol::json> feedback;  // stitchcuda.feedback/1 the refinement answers
  std::optional<std::string> previousCandidateId;
  // What it produced.
  std::string candidateDir;
  std::string title;
  std::string variant;
  std::map<std::string, std::string> files;  // file name in candidateDir → text (.cu, .py)
  // Its judgement.
  protocol::json verdict;                  // the harness's verdict (HARNESS.md), or the build result without a GPU
  std::optional<protocol::json> profile;   // stitchcuda.feedback/1 PROFILE or the fix rules gave for it
  std::optional<protocol::json> reward;    // stitchcuda.score/1, or {"error": ...} when scoring failed
};

protocol::json toJson(const Transition& t);
// Strict: every required field present with its type; the error names the first that is not.
protocol::Result<Transition, std::string> transitionFromJson(const protocol::json& j);

// Appends one line per transition to DIR/<jobId>.transitions.jsonl, flushed at once, so a job that
// stops midway leaves every finished step.
class TransitionLog {
public:
  TransitionLog(const std::filesystem::path& dir, const std::string& jobId);
  bool ok() const { return out_.good(); }
  const std::filesystem::path& path() const { return path_; }
  void append(const Transition& t);

private:
  std::filesystem::path path_;
  std::ofstream out_;
};

// Every line of a transitions file; the error names the line that does not fit the schema.
protocol::Result<std::vector<Transition>, std::string> readTransitions(const std::filesystem::path& path);

}  // namespace stitch::agents::loop
