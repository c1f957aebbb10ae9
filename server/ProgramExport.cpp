// The program written by `optimize --out`; see ProgramExport.h.
#include "server/ProgramExport.h"

#include "agents/program/ProgramFiles.h"

#include <fstream>
#include <sstream>

namespace stitch::server {

const protocol::Candidate* keptCandidate(const agents::JobState& job) {
  const protocol::Candidate* kept = nullptr;
  const auto best = job.finished ? job.finished->bestCandidateId : std::nullopt;
  for (const auto& c : job.candidates) {
    if (c.files.empty() || c.newText.empty()) continue;
    if (best && c.id == *best) return &c;
    if (c.status != "failed") kept = &c;
  }
  return kept;
}

std::string applyLineEdit(const std::string& text, const protocol::Range& range, const std::string& newText) {
  std::vector<std::size_t> starts{0};
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') starts.push_back(i + 1);
  auto offset = [&](const protocol::Position& p) {
    if (p.line < 0) return std::size_t{0};
    if (static_cast<std::size_t>(p.line) >= starts.size()) return text.size();
    return std::min(starts[static_cast<std::size_t>(p.line)] + static_cast<std::size_t>(p.character), text.size());
  };
  const std::size_t a = offset(range.start), b = std::max(a, offset(range.end));
  return text.substr(0, a) + newText + text.substr(b);
}

std::optional<std::filesystem::path> exportProgram(const std::filesystem::path& dir, const protocol::Candidate& c,
                                                   const std::string& modelName, const std::string& modelText,
                                                   std::string& error) {
  std::vector<agents::program::ProgramFile> files;
  for (const auto& f : c.files) {
    std::ifstream in(f.source, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    if (!in) {
      error = "cannot read " + f.source;
      return std::nullopt;
    }
    files.push_back({f.path, s.str()});
  }
  files.push_back({modelName, applyLineEdit(modelText, c.range, c.newText)});
  if (!agents::program::writeProgramFiles(dir, files, error)) return std::nullopt;
  return dir / modelName;
}

}  // namespace stitch::server
