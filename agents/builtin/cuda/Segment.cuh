// A program's segments as the host entry runs them (emitHostEntry in HostProgram.h): each one's
// launchers, slot count, and the CUDA graphs it replays. A graph bakes in the data pointers of the
// call it was captured from, so one is kept per set of pointers (a caller that rotates a few input
// sets or reuses its allocator's blocks hits the cache; the oldest of 8 is dropped). Capture happens
// on a private stream that only records — nothing runs on it — and the graph is launched on the
// caller's stream, so ordering with the caller's work is what a direct launch gives. The first call
// runs directly: it is where library launchers choose their algorithms, which must not happen inside
// a capture. When a capture cannot be made (a library call that refuses capture, say), the segment
// runs directly from then on. Each segment keeps its own graphs. A program whose rows are the call's
// (RuntimeRows.h) keys its graphs by the rows too, and runs the first call with each row count directly.
#pragma once
#include "Prelude.cuh"
// The emitter writes the program's own definition (its most slots of a segment) before this text.
#define SC_MAX_SLOTS 8
// stitch-embed: a generated program holds what follows this line (README.md).

#define SC_GRAPHS 8
typedef int (*sc_run_fn)(const StitchTensor*, int64_t, cudaStream_t);
struct sc_graph_entry {
  void* ptrs[SC_MAX_SLOTS];
  int64_t rows;
  cudaGraphExec_t exec;
};
struct sc_segment {
  sc_run_fn run;
  int slots;
  bool replay;
  bool graph_off;
  int count, oldest;
  sc_graph_entry graphs[SC_GRAPHS];
  int prepared, next_prepared;  // the row counts run directly once (the oldest forgotten first)
  int64_t prepared_rows[SC_GRAPHS];
};
