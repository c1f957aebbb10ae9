// What the editor shows from a job's state: hover markdown for a line, the Accept / Reject /
// Diff lenses over each open candidate, code actions, the edit that applies a candidate, and what
// the editor's Undo of that edit means. Pure functions of the state, so they are tested without a server.
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

// Markdown for `line` (zero-based) of the document whose text is `text` (empty when the host does not
// have it), or nullopt when there is nothing to say. A profiled line gets its profile; the model's
// `class` line and its `def forward` line get the whole forward's time and the candidates' status.
std::optional<std::string> hoverMarkdown(const agents::JobState& job, int line, const std::string& text = {});

// The class the harness loads as the model: named by a `# stitchcuda: model=Name` comment, else Model.
std::string modelClassName(const std::string& text);

// A candidate's status in a few words: "1.80×, verified", "unverified", "failed: numerics".
std::string candidateBadge(const protocol::Candidate& c);

// True while the user has neither accepted nor rejected the candidate.
bool isOpen(const protocol::Candidate& c);

// Above each open candidate: Accept, Reject, Diff for a verified one; for one the verifier did
// not pass, "Accept anyway…" (kAcceptUnverifiedCommand, which asks first), Reject, Diff.
json codeLenses(const agents::JobState& job);
json codeActions(const agents::JobState& job, const protocol::Range& range);

// The WorkspaceEdit that applies the candidate to the model: versioned documentChanges when the client
// supports them, plain changes otherwise. It changes the model only: the host writes the program the
// candidate's text imports itself (ProgramExport.h), so that Undo of the edit, which the host follows,
// takes back exactly what Accept wrote.
json candidateEdit(const std::string& uri, const protocol::Candidate& c, bool documentChanges);

// An applied Accept, kept so that the editor's Undo of it reopens the candidate and Redo accepts it again.
struct AcceptedEdit {
  std::string jobId;
  std::string candidateId;
  std::string openStatus;  // the candidate's status before Accept, which Undo returns it to
  std::string textBefore;  // the document before and after the edit
  std::string textAfter;
};

// The candidate event that the document's change to `text` (now at `version`) implies: back to the
// text before Accept, the candidate is open again (its lens back, Accept valid for this version);
// the accepted text again, it is accepted again. Nullopt for any other change.
std::optional<protocol::CandidateParams> undoOrRedoOfAccept(const AcceptedEdit& edit, const agents::JobState& job,
                                                            const std::string& text, int version);

}  // namespace stitch::server
