// How a segment runs where no segment replays a graph: directly (SegmentReplay.cuh's stand-in).
#pragma once
#include "Segment.cuh"
// stitch-embed: a generated program holds what follows this line (README.md).

static int sc_call(sc_segment* g, const StitchTensor* t, int64_t rows, cudaStream_t stream) {
  return g->run(t, rows, stream);
}
