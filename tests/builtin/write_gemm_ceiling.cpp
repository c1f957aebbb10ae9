// Writes the program measureCeilings builds for the FP32 GEMM ceiling (CeilingProgram.h) to the
// file named, for builtin_gemm_ceiling_compile to build with nvcc as the harness does.
#include "agents/builtin/emit/CeilingProgram.h"

#include <fstream>
#include <iostream>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: write_gemm_ceiling OUT.cu\n";
    return 2;
  }
  std::ofstream out(argv[1]);
  out << stitch::agents::builtin::gemmCeilingProgram();
  return out ? 0 : 1;
}
