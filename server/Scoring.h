// One candidate's rubric reward (protocol/SCORE.md), the one path `stitchcuda score`, its batch
// mode and the stitchcuda/score method share: the verdict (recorded, or the verifier run now on a
// GPU; without one, none: the candidate's code alone is read), the operator coverage (the plan's, or
// counted from the reference's graph as the planner counts it), then the harness's `score` method.
#pragma once

#include "agents/Worker.h"
#include "protocol/Result.h"
#include "protocol/StitchTypes.h"

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

namespace stitch::server {

struct ScoreInputs {
  std::string reference;                      // task file
  std::string candidate;                      // as verify takes it (file, pair, directory)
  std::optional<protocol::json> verdict;      // recorded; absent: verify now
  std::optional<std::string> previous;        // a refinement's previous candidate
  std::optional<protocol::json> previousVerdict;
  std::optional<protocol::json> feedback;     // stitchcuda.feedback/1 the refinement was given
  std::optional<protocol::PlanCoverage> coverage;  // the plan's; absent: counted from the graph
  std::optional<std::string> profile;         // Nsight Compute's CSV of its kernels; absent: its folder's ncu.csv, if any
  protocol::json weights = protocol::json::object();
  protocol::json verifyParams = protocol::json::object();  // allowPrecision, precision, atol, ...
};

// Reads a plan's coverage from a file or object: a PlanParams ({"coverage": {...}}), a
// stitchcuda/plan notification, or the coverage object itself.
std::optional<protocol::PlanCoverage> coverageFrom(const protocol::json& plan);

// Fills `inputs` from a JSON object (a batch row, the protocol's params): reference, candidate,
// verdict, previous, previousVerdict, feedback, coverage or plan, profile (a file path), weights,
// allowPrecision, precision. Objects may be given inline or as file paths. Throws
// std::invalid_argument naming the field.
ScoreInputs scoreInputsFrom(const protocol::json& j);

using ScoreResult = protocol::Result<protocol::json, agents::WorkerError>;

ScoreResult scoreCandidate(agents::Worker& worker, ScoreInputs inputs, const std::filesystem::path& cacheDir,
                           std::chrono::milliseconds deadline, const agents::CancelToken& cancel);

}  // namespace stitch::server
