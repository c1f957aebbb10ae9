// The texts of this folder's .cuh files as a generated program holds them (each file's lines after
// its "// stitch-embed:" line), embedded at build time by EmbedCuda.cmake.
#pragma once

namespace stitch::agents::builtin::cuda {

// Written first into every generated program, and after it where a kernel folds two reductions.
extern const char* const kPrelude;
extern const char* const kFoldPrelude;

// The library prelude (emitLibraryPrelude in LibraryEmitter.h), in the order a program holds them.
extern const char* const kLibraryCommon;
extern const char* const kX3Common;
extern const char* const kGemm;
extern const char* const kGemmX3;
extern const char* const kGemmFp32Only;
extern const char* const kGemmCeiling;  // not in candidates: the program measureCeilings times (CeilingProgram.h)
extern const char* const kDnn;
extern const char* const kConv;
extern const char* const kConvEngines;
extern const char* const kConvDirect;
extern const char* const kConvLaunch;
extern const char* const kDeconvDirect;
extern const char* const kConvX3;
extern const char* const kConvFp32Only;
extern const char* const kRnn;

// The segments the host entry runs (emitHostEntry in HostProgram.h): their state, then how they run.
extern const char* const kSegment;
extern const char* const kSegmentDirect;
extern const char* const kSegmentReplay;

}  // namespace stitch::agents::builtin::cuda
