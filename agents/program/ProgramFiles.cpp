// The program's file set; see ProgramFiles.h.
#include "agents/program/ProgramFiles.h"

#include "agents/UntrustedFiles.h"

#include <fstream>
#include <regex>
#include <sstream>

namespace stitch::agents::program {

extern const char* const kLoaderPy;
extern const char* const kStitchAbiH;

const std::string& loaderSource() {
  static const std::string text = kLoaderPy;
  return text;
}

ProgramNames programNames(const std::string& folder, const std::string& modelUri) {
  std::string name = modelUri.substr(modelUri.find_last_of('/') + 1);
  if (const auto dot = name.rfind('.'); dot != std::string::npos && dot > 0) name.resize(dot);
  return {folder, (name.empty() ? std::string("model") : name) + ".cu"};
}

std::vector<ProgramFile> programFiles(const ProgramNames& names, const std::string& candidateCuda) {
  // The .cu carries its ABI header: a user's build then needs no include path of ours.
  static const std::regex include(R"([ \t]*#[ \t]*include[ \t]*[<"]stitch_abi\.h[>"][ \t\r]*)");
  std::string header;  // less its `#pragma once`, which means nothing (and warns) in a main file
  std::istringstream abi(kStitchAbiH);
  for (std::string line; std::getline(abi, line);)
    if (line != "#pragma once") header += line + "\n";
  std::string cuda;
  std::istringstream in(candidateCuda);
  for (std::string line; std::getline(in, line);)
    cuda += std::regex_match(line, include) ? "// stitch_abi.h, the program's C ABI:\n" + header : line + "\n";
  return {{names.folder + "/__init__.py", loaderSource()}, {names.folder + "/" + names.cuda, std::move(cuda)}};
}

bool writeProgramFiles(const std::filesystem::path& root, const std::vector<ProgramFile>& files, std::string& error) {
  std::vector<std::filesystem::path> paths;
  try {
    for (const auto& f : files) paths.push_back(placeInside(root, f.path));
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    const auto& f = files[i];
    const auto& path = paths[i];
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << f.text;
    out.close();
    if (ec || !out) {
      error = "cannot write " + path.string() + (ec ? ": " + ec.message() : std::string());
      return false;
    }
  }
  return true;
}

}  // namespace stitch::agents::program
