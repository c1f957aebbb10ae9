// The optimized program as the user keeps it (design §6): a folder beside the model (a Python
// package, `stitchcuda_kernels` unless the job names another) holding the candidate's .cu, with the
// ABI header inlined so that it builds alone, and the loader (loader.py, as the folder's
// __init__.py) that builds it with nvcc on first use. Nothing in it names the host, its cache or
// its harness: it needs PyTorch and the CUDA toolkit only.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace stitch::agents::program {

struct ProgramNames {
  std::string folder;  // the package the model imports the loader from
  std::string cuda;    // the program's file in it: the model file's stem + ".cu"
};

// The names for the model at `modelUri` (a file: URI or a path; its last segment names the .cu).
ProgramNames programNames(const std::string& folder, const std::string& modelUri);

struct ProgramFile {
  std::string path;  // relative to the model's folder, '/'-separated
  std::string text;
};

// The loader and the program for a candidate whose .cu text is `candidateCuda`.
std::vector<ProgramFile> programFiles(const ProgramNames& names, const std::string& candidateCuda);

// Writes `files` under `root` (creating folders); false, with `error` set, when one cannot be written
// or its path is refused (agents/UntrustedFiles.h, placeInside). Every path is checked before anything
// is written.
bool writeProgramFiles(const std::filesystem::path& root, const std::vector<ProgramFile>& files, std::string& error);

// The loader's source (agents/program/loader.py, embedded when the host is built).
const std::string& loaderSource();

}  // namespace stitch::agents::program
