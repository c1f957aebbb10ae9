// What the benchmark commands (bench, bench --no-gpu) share for their results files: the command
// line as a shell reads it back, and files read whole or replaced atomically.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace stitch::server {

// One word of a command line as a shell would read it back (quoted only where it must be).
std::string shellWord(const std::string& word);
std::string commandLineOf(const std::vector<std::string>& argv);

// The file's bytes; empty when it cannot be read.
std::string readText(const std::filesystem::path& path);

// Writes `text` to `path` through a temporary file and a rename, so that a reader (or a run
// stopped midway) never sees half a file. The error names the path.
std::optional<std::string> writeAtomically(const std::filesystem::path& path, const std::string& text);

}  // namespace stitch::server
