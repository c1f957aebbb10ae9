// `stitchcuda optimize --out DIR` writes what Accept writes in the editor (design §6): the kept
// candidate's program folder and the model with its edit applied, side by side in DIR. And Accept's own
// writing of the program beside the model, which the editor's Undo of the Accept takes back.
#pragma once

#include "agents/JobState.h"
#include "agents/program/ProgramFiles.h"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

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

// A program Accept wrote beside the model: each file's text and what it replaced (nullopt where there was
// no file), and the folders the writing created, outermost first.
struct WrittenProgram {
  struct File {
    std::string path;  // relative to `folder`, as the candidate names it
    std::string text;
    std::optional<std::string> previous;
  };
  std::filesystem::path folder;  // the model's
  std::vector<File> files;
  std::vector<std::filesystem::path> createdFolders;
};

// Writes `files` under `folder` (agents::program::writeProgramFiles, with its checks), first reading what
// each replaces; nullopt with `error` set when a file cannot be read or written.
std::optional<WrittenProgram> writeAcceptedProgram(const std::filesystem::path& folder,
                                                   const std::vector<agents::program::ProgramFile>& files,
                                                   std::string& error);

// Takes the program back (the editor undid its Accept): a file still as written gets back what it
// replaced, or is removed, and a folder the writing created goes once empty. A file changed since
// stays, and so does one `keep` names (another accepted program wrote it too: the shared loader).
// Paths are checked again as writeProgramFiles checks them.
void takeBackProgram(const WrittenProgram& program, const std::function<bool(const std::filesystem::path&)>& keep);

// Writes the program again (the editor redid its Accept); false with `error` set when it cannot.
bool rewriteProgram(const WrittenProgram& program, std::string& error);

}  // namespace stitch::server
