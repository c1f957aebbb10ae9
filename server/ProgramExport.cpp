// The program written by `optimize --out` and by Accept; see ProgramExport.h.
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

namespace {

constexpr std::uintmax_t kMaxReplacedBytes = 16u << 20;  // a file Accept replaces is kept in memory for Undo

std::optional<std::string> readIfThere(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  // writeProgramFiles refuses what is not a regular file; a FIFO must not be opened for reading here either.
  if (!std::filesystem::is_regular_file(path, ec)) throw std::runtime_error(path.string() + " is not a regular file; refused");
  if (std::filesystem::file_size(path, ec) > kMaxReplacedBytes)
    throw std::runtime_error(path.string() + " is too large to keep for Undo; move it away first");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return s.str();
}

std::optional<std::string> contentOf(const std::filesystem::path& path) {
  try {
    return readIfThere(path);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<WrittenProgram> writeAcceptedProgram(const std::filesystem::path& folder,
                                                   const std::vector<agents::program::ProgramFile>& files,
                                                   std::string& error) {
  WrittenProgram written{folder, {}, {}};
  try {
    for (const auto& f : files) {
      const auto path = folder / f.path;
      for (auto dir = path.parent_path(); dir != folder && dir.has_relative_path() && !std::filesystem::exists(dir);
           dir = dir.parent_path())
        written.createdFolders.insert(written.createdFolders.begin(), dir);
      written.files.push_back({f.path, f.text, readIfThere(path)});
    }
  } catch (const std::exception& e) {
    error = e.what();
    return std::nullopt;
  }
  if (!agents::program::writeProgramFiles(folder, files, error)) return std::nullopt;
  return written;
}

void takeBackProgram(const WrittenProgram& program, const std::function<bool(const std::filesystem::path&)>& keep) {
  std::vector<agents::program::ProgramFile> restore;
  std::vector<std::filesystem::path> remove;
  for (const auto& f : program.files) {
    const auto path = program.folder / f.path;
    if (keep(path) || contentOf(path) != f.text) continue;
    if (f.previous) restore.push_back({f.path, *f.previous});
    else remove.push_back(path);
  }
  std::string error;
  if (!restore.empty()) agents::program::writeProgramFiles(program.folder, restore, error);
  for (const auto& path : remove) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(std::filesystem::symlink_status(path, ec))) std::filesystem::remove(path, ec);
  }
  for (auto it = program.createdFolders.rbegin(); it != program.createdFolders.rend(); ++it) {
    std::error_code ec;
    if (std::filesystem::is_empty(*it, ec)) std::filesystem::remove(*it, ec);
  }
}

bool rewriteProgram(const WrittenProgram& program, std::string& error) {
  std::vector<agents::program::ProgramFile> files;
  for (const auto& f : program.files) files.push_back({f.path, f.text});
  return agents::program::writeProgramFiles(program.folder, files, error);
}

}  // namespace stitch::server
