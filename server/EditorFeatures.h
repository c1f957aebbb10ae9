// What the editor shows from a job's state: hover markdown for a line, the Accept / Reject /
// Diff lenses over each open candidate, code actions, and the edit that applies a candidate.
// Pure functions of the state, so they are tested without a server.
#pragma once

#include "agents/JobState.h"

#include <optional>
#include <string>
#include <vector>

namespace stitch::server {

using protocol::json;

// Commands the host executes (advertised in executeCommandProvider).
inline constexpr const char* kAcceptCommand = "stitchcuda.acceptCandidate";
inline constexpr const char* kRejectCommand = "stitchcuda.rejectCandidate";
// Client-side: the extension opens a diff; other clients may ignore it.
inline constexpr const char* kDiffCommand = "stitchcuda.showCandidateDiff";
// Client-side: Accept of a candidate the verifier did not pass; the extension asks first, saying
// why it is unverified, then runs kAcceptCommand.
inline constexpr const char* kAcceptUnverifiedCommand = "stitchcuda.acceptUnverified";

// Markdown for `line` (zero-based), or nullopt when no profile covers it.
std::optional<std::string> hoverMarkdown(const agents::JobState& job, int line);

// A candidate's status in a few words: "1.80×, verified", "unverified", "failed: numerics".
std::string candidateBadge(const protocol::Candidate& c);

// True while the user has neither accepted nor rejected the candidate.
bool isOpen(const protocol::Candidate& c);

// Above each open candidate: Accept, Reject, Diff for a verified one; for one the verifier did
// not pass, "Accept anyway…" (kAcceptUnverifiedCommand, which asks first), Reject, Diff.
json codeLenses(const agents::JobState& job);
json codeActions(const agents::JobState& job, const protocol::Range& range);

// A file of the accepted program, as the edit creates it.
struct NewFile {
  std::string uri;
  std::string text;
};

// The WorkspaceEdit that applies the candidate: versioned documentChanges when the client
// supports them, plain changes otherwise. `files` (the program the candidate's text imports) are
// created, or overwritten, by the same edit, so the editor lists them and Undo removes them; pass
// none to a client that cannot create files.
json candidateEdit(const std::string& uri, const protocol::Candidate& c, const std::vector<NewFile>& files,
                   bool documentChanges);

}  // namespace stitch::server
