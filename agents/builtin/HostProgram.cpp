// The entry points and their CUDA-graph replay; see HostProgram.h.
#include "agents/builtin/HostProgram.h"

#include <algorithm>
#include <sstream>

namespace stitch::agents::builtin {
namespace {

// A graph bakes in the data pointers of the call it was captured from, so one is kept per set
// of pointers (a caller that rotates a few input sets or reuses its allocator's blocks hits the
// cache; the oldest of 8 is dropped). Capture happens on a private stream that only records —
// nothing runs on it — and the graph is launched on the caller's stream, so ordering with the
// caller's work is what a direct launch gives. The first call runs directly: it is where library
// launchers choose their algorithms, which must not happen inside a capture. When a capture
// cannot be made (a library call that refuses capture, say), the segment runs directly from
// then on. Each segment keeps its own graphs. A program whose rows are the call's (RuntimeRows.h)
// keys its graphs by the rows too, and runs the first call with each row count directly.
constexpr const char* kSegment = R"(
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
)";

constexpr const char* kDirect = R"(
static int sc_call(sc_segment* g, const StitchTensor* t, int64_t rows, cudaStream_t stream) {
  return g->run(t, rows, stream);
}
)";

constexpr const char* kReplay = R"(
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
)";

}  // namespace

std::string emitHostEntry(const std::vector<SegmentEntry>& segments) {
  std::ostringstream o;
  std::size_t most = 1;
  for (const auto& s : segments) most = std::max(most, s.slots);
  o << "#define SC_MAX_SLOTS " << most << "\n";
  for (std::size_t i = 0; i < segments.size(); ++i) {
    o << "\nstatic int sc_run_" << i << "(const StitchTensor* t, int64_t rows, cudaStream_t stream) {\n  int status = 0;\n";
    for (const auto& l : segments[i].launchers)
      o << "  if ((status = " << l << "(t, rows, stream)) != 0) return status;\n";
    o << "  return 0;\n}\n";
  }
  const bool replay = std::any_of(segments.begin(), segments.end(), [](const SegmentEntry& s) { return s.replay; });
  o << kSegment << (replay ? kReplay : kDirect) << "\nstatic sc_segment sc_segments[" << segments.size() << "] = {";
  for (std::size_t i = 0; i < segments.size(); ++i)
    o << (i ? ", " : "") << "{sc_run_" << i << ", " << segments[i].slots << ", " << (segments[i].replay ? "true" : "false")
      << "}";
  o << "};\n\nextern \"C\" int stitch_segment(int32_t s, const StitchTensor* t, int32_t n, cudaStream_t stream) {\n"
    << "  int64_t rows = 0;  // the call's rows, where the checks take them from its tensors\n  switch (s) {\n";
  for (std::size_t i = 0; i < segments.size(); ++i)
    o << "    case " << i << ": {\n      if (n != " << segments[i].slots << ") return (int)cudaErrorInvalidValue;\n"
      << segments[i].checks << "      break;\n    }\n";
  o << "    default: return (int)cudaErrorInvalidValue;\n  }\n  return sc_call(&sc_segments[s], t, rows, stream);\n}\n";
  if (segments.size() == 1)
    o << "\nextern \"C\" int stitch_forward(const StitchTensor* t, int32_t n, cudaStream_t stream) {\n"
      << "  return stitch_segment(0, t, n, stream);\n}\n";
  return o.str();
}

}  // namespace stitch::agents::builtin
