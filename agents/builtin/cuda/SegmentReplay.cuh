// How a segment runs where some segment replays: the first call with each row count directly, later
// ones as the CUDA graph captured for their pointers (Segment.cuh says why).
#pragma once
#include "Segment.cuh"
// stitch-embed: a generated program holds what follows this line (README.md).

static cudaStream_t sc_capture = nullptr;

// A cudaError_t from the launch, or -1 when no graph could be made.
static int sc_replay(sc_segment* g, const StitchTensor* t, int64_t rows, cudaStream_t stream) {
  for (int i = 0; i < g->count; ++i) {
    bool same = g->graphs[i].exec && g->graphs[i].rows == rows;
    for (int s = 0; s < g->slots && same; ++s) same = g->graphs[i].ptrs[s] == t[s].data;
    if (same) return (int)cudaGraphLaunch(g->graphs[i].exec, stream);
  }
  if (!sc_capture && cudaStreamCreateWithFlags(&sc_capture, cudaStreamNonBlocking) != cudaSuccess) return -1;
  if (cudaStreamBeginCapture(sc_capture, cudaStreamCaptureModeThreadLocal) != cudaSuccess) return -1;
  const int status = g->run(t, rows, sc_capture);
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(sc_capture, &graph);
  cudaGraphExec_t exec = nullptr;
  const bool made = status == 0 && ended == cudaSuccess && graph &&
                    cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess;
  if (graph) cudaGraphDestroy(graph);
  if (!made) {
    cudaGetLastError();  // a failed capture leaves an error that is not the candidate's
    return -1;
  }
  sc_graph_entry* e = nullptr;
  for (int i = 0; i < g->count && !e; ++i)
    if (!g->graphs[i].exec) e = &g->graphs[i];  // a graph dropped with its row count
  if (!e && g->count < SC_GRAPHS) e = &g->graphs[g->count++];
  if (!e) {
    e = &g->graphs[g->oldest];
    g->oldest = (g->oldest + 1) % SC_GRAPHS;
    cudaGraphExecDestroy(e->exec);
  }
  for (int s = 0; s < g->slots; ++s) e->ptrs[s] = t[s].data;
  e->rows = rows;
  e->exec = exec;
  return (int)cudaGraphLaunch(exec, stream);
}

static bool sc_prepared(const sc_segment* g, int64_t rows) {
  for (int i = 0; i < g->prepared; ++i)
    if (g->prepared_rows[i] == rows) return true;
  return false;
}

// A library call keeps its prepared state for as many row counts as a segment remembers, and a
// new count releases the oldest's (its descriptors and buffers, which a graph captured with that
// count uses): that count's graphs go first.
static void sc_drop_graphs(sc_segment* g, int64_t rows) {
  for (int i = 0; i < g->count; ++i)
    if (g->graphs[i].exec && g->graphs[i].rows == rows) {
      cudaGraphExecDestroy(g->graphs[i].exec);
      g->graphs[i].exec = nullptr;
    }
}

static int sc_call(sc_segment* g, const StitchTensor* t, int64_t rows, cudaStream_t stream) {
  if (!g->replay) return g->run(t, rows, stream);
  if (!sc_prepared(g, rows)) {
    if (g->prepared == SC_GRAPHS) sc_drop_graphs(g, g->prepared_rows[g->next_prepared]);
    const int status = g->run(t, rows, stream);
    if (status == 0) {
      g->prepared_rows[g->next_prepared] = rows;
      g->next_prepared = (g->next_prepared + 1) % SC_GRAPHS;
      if (g->prepared < SC_GRAPHS) ++g->prepared;
    }
    return status;
  }
  if (!g->graph_off) {
    const int status = sc_replay(g, t, rows, stream);
    if (status >= 0) return status;
    g->graph_off = true;
  }
  return g->run(t, rows, stream);
}
