// `stitchcuda optimize --out DIR` writes what Accept writes in the editor (design §6): the kept
// candidate's program folder and the model with its edit applied, side by side in DIR.
#pragma once

#include "agents/JobState.h"

#include <filesystem>
#include <optional>
#include <string>

namespace stitch::server {

// The candidate worth keeping: the job's best verified one, else the newest that built (whose
// program exists but is unverified); null when no candidate has a program.
const protocol::Candidate* keptCandidate(const agents::JobState& job);

// `text` with the whole-line range `range` replaced by `newText` (LSP positions, character 0).
std::string applyLineEdit(const std::string& text, const protocol::Range& range, const std::string& newText);

// Writes `c`'s program files and `modelName` (the model's `modelText` with the edit) into `dir`;
// the written model's path, or nullopt with `error` set.
std::optional<std::filesystem::path> exportProgram(const std::filesystem::path& dir, const protocol::Candidate& c,
                                                   const std::string& modelName, const std::string& modelText,
                                                   std::string& error);

}  // namespace stitch::server
