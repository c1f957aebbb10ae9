// The benchmark commands' shared file and command-line helpers; see ResultFiles.h.
#include "server/ResultFiles.h"

#include <fstream>
#include <sstream>
#include <system_error>

namespace stitch::server {
namespace fs = std::filesystem;

std::string shellWord(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-") ==
                           std::string::npos)
    return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string commandLineOf(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& a : argv) line += (line.empty() ? "" : " ") + shellWord(a);
  return line;
}

std::string readText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::optional<std::string> writeAtomically(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) return "cannot write " + tmp.string();
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return "cannot replace " + path.string() + ": " + ec.message();
  return std::nullopt;
}

}  // namespace stitch::server
