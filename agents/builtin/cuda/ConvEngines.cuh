// Convolutions through cuDNN's backend (graph) API: the engines its heuristics rank for this
// convolution, beyond the legacy API's algorithm list. PyTorch's eager convolutions go through this
// API, and for some shapes its engines are far faster than every legacy algorithm: a 1-D transposed
// convolution (KernelBench level1/64) ran 3.2x slower than eager on the best legacy backward-data
// algorithm. ConvLaunch.cuh times the engines kept here against the legacy algorithm it chose.
#pragma once
#include "Conv.cuh"
// stitch-embed: a generated program holds what follows this line (README.md).

// One engine's plan for one convolution, and the variant pack of the pointers it last ran on.
struct sc_conv_engine {
  cudnnBackendDescriptor_t plan = nullptr;
  cudnnBackendDescriptor_t pack = nullptr;
  const void *x = nullptr, *w = nullptr, *y = nullptr, *workspace = nullptr;  // the pack's pointers
  int64_t workspace_bytes = 0;
  int64_t align = 4;  // the byte alignment the plan was made for; a call on less runs the legacy algorithm
};

#define SC_BACKEND(call)                                                     \
  do {                                                                       \
    const cudnnStatus_t s_ = (call);                                         \
    if (s_ != CUDNN_STATUS_SUCCESS) return 20000 + (int)s_;                  \
  } while (0)

// The alignment a pointer gives (16 bytes at most), as PyTorch tells cuDNN its tensors'.
static int64_t sc_alignment(const void* p) {
  const uintptr_t a = (uintptr_t)p;
  int64_t align = 16;
  while (align > 4 && a % align) align /= 2;
  return align;
}

// A backend descriptor of a dense tensor of `dims` (channels-last or not).
static int sc_backend_tensor(cudnnBackendDescriptor_t* d, int nd, const int* dims, int channels_last, int64_t id,
                             int64_t align) {
  int64_t d64[5], strides[5];
  for (int i = 0; i < nd; ++i) d64[i] = dims[i];
  sc_dense_strides(strides, nd, dims, channels_last);
  const cudnnDataType_t type = CUDNN_DATA_FLOAT;
  SC_BACKEND(cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, d));
  SC_BACKEND(cudnnBackendSetAttribute(*d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type));
  SC_BACKEND(cudnnBackendSetAttribute(*d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, nd, d64));
  SC_BACKEND(cudnnBackendSetAttribute(*d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, nd, strides));
  SC_BACKEND(cudnnBackendSetAttribute(*d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &id));
  SC_BACKEND(cudnnBackendSetAttribute(*d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align));
  SC_BACKEND(cudnnBackendFinalize(*d));
  return 0;
}

// The convolution as a one-operation graph: a forward convolution, or for a transposed one cuDNN's
// backward-data (dy our input, dx our output), in fp32 arithmetic. `descs` receives what the graph
// holds (three tensors, the convolution, the operation) for the caller to destroy after the graph.
static int sc_conv_graph(const sc_conv_shape* s, int64_t align, cudnnBackendDescriptor_t* graph,
                         cudnnBackendDescriptor_t* descs) {
  int st;
  if ((st = sc_backend_tensor(&descs[0], s->nd, s->in, s->channels_last, 'x', align)) != 0 ||
      (st = sc_backend_tensor(&descs[1], s->nd, s->w, s->channels_last, 'w', align)) != 0 ||
      (st = sc_backend_tensor(&descs[2], s->nd, s->out, s->channels_last, 'y', align)) != 0)
    return st;
  const int64_t spatial = s->nd - 2;
  int64_t pad[3], stride[3], dilation[3];
  for (int i = 0; i < spatial; ++i) pad[i] = s->pad[i], stride[i] = s->stride[i], dilation[i] = s->dilation[i];
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  SC_BACKEND(cudnnBackendCreateDescriptor(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, &descs[3]));
  const cudnnBackendDescriptor_t conv = descs[3];
  SC_BACKEND(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial));
  SC_BACKEND(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute));
  SC_BACKEND(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode));
  SC_BACKEND(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, spatial, dilation));
  SC_BACKEND(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, spatial, stride));
  SC_BACKEND(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, spatial, pad));
  SC_BACKEND(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, spatial, pad));
  SC_BACKEND(cudnnBackendFinalize(conv));
  const float alpha = 1.0f, beta = 0.0f;
  const bool t = s->transposed;
  SC_BACKEND(cudnnBackendCreateDescriptor(t ? CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR
                                            : CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
                                          &descs[4]));
  const cudnnBackendDescriptor_t op = descs[4];
  const cudnnBackendDescriptor_t x = t ? descs[2] : descs[0], y = t ? descs[0] : descs[2];  // backward: x is dx
  // Each attribute under its backward-data name for a transposed convolution, else its forward one.
  auto set = [&](cudnnBackendAttributeName_t backward, cudnnBackendAttributeName_t forward,
                 cudnnBackendAttributeType_t type, const void* value) {
    return cudnnBackendSetAttribute(op, t ? backward : forward, type, 1, value);
  };
  const cudnnBackendAttributeType_t desc = CUDNN_TYPE_BACKEND_DESCRIPTOR;
  SC_BACKEND(set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, desc, &x));
  SC_BACKEND(
      set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, desc, &descs[1]));
  SC_BACKEND(set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, desc, &y));
  SC_BACKEND(set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
                 CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, desc, &conv));
  SC_BACKEND(set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
                 CUDNN_TYPE_FLOAT, &alpha));
  SC_BACKEND(set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA,
                 CUDNN_TYPE_FLOAT, &beta));
  SC_BACKEND(cudnnBackendFinalize(op));
  SC_BACKEND(cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, graph));
  SC_BACKEND(cudnnBackendSetAttribute(*graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op));
  SC_BACKEND(cudnnBackendSetAttribute(*graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &sc_dnn));
  SC_BACKEND(cudnnBackendFinalize(*graph));
  return 0;
}

// What an engine configuration's notes say, as far as the choice reads them.
struct sc_engine_notes {
  bool read = false;          // the notes could be read
  bool tensor_cores = false;  // TF32 tensor cores for fp32 data
  bool down_convert = false;  // inputs converted to a narrower type: PyTorch leaves these out too
  // Left out here: reduced-precision sums, results that vary run to run (the verifier runs twice
  // and compares), FFT (cuDNN's FFT forks onto its own streams, as sc_conv_choose says), and
  // kernels compiled at run time (seconds on the first call).
  bool refused = false;
};

static sc_engine_notes sc_engine_notes_of(cudnnBackendDescriptor_t config) {
  sc_engine_notes out;
  cudnnBackendDescriptor_t engine = nullptr;
  if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine) != CUDNN_STATUS_SUCCESS) return out;
  int64_t n = 0, notes_n = 0, behaviors_n = 0;
  cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  cudnnBackendBehaviorNote_t behaviors[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
  out.read =
      cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &engine) ==
          CUDNN_STATUS_SUCCESS &&
      cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                               CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &notes_n, notes) == CUDNN_STATUS_SUCCESS &&
      cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                               CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &behaviors_n, behaviors) == CUDNN_STATUS_SUCCESS;
  for (int64_t i = 0; out.read && i < notes_n; ++i) {
    out.tensor_cores |= notes[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE;
    out.down_convert |= notes[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS;
    out.refused |= notes[i] == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION ||
                   notes[i] == CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC || notes[i] == CUDNN_NUMERICAL_NOTE_FFT;
  }
  for (int64_t i = 0; out.read && i < behaviors_n; ++i)
    out.refused |= behaviors[i] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION;
  cudnnBackendDestroyDescriptor(engine);
  return out;
}

static void sc_conv_engine_release(sc_conv_engine* e) {
  if (e->pack) cudnnBackendDestroyDescriptor(e->pack);
  if (e->plan) cudnnBackendDestroyDescriptor(e->plan);
  delete e;
}

// Runs the plan on these pointers, making its variant pack again only when they changed (the
// workspace moves when a later convolution needs more).
static int sc_conv_engine_run(sc_conv_engine* e, const float* x, const float* w, float* y, cudaStream_t stream) {
  SC_BACKEND(cudnnSetStream(sc_dnn, stream));
  if (e->pack == nullptr || e->x != x || e->w != w || e->y != y || e->workspace != sc_workspace) {
    if (e->pack) cudnnBackendDestroyDescriptor(e->pack);
    e->pack = nullptr;
    void* pointers[3] = {(void*)x, (void*)w, (void*)y};
    const int64_t ids[3] = {'x', 'w', 'y'};
    SC_BACKEND(cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &e->pack));
    SC_BACKEND(
        cudnnBackendSetAttribute(e->pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, pointers));
    SC_BACKEND(cudnnBackendSetAttribute(e->pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, ids));
    SC_BACKEND(
        cudnnBackendSetAttribute(e->pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &sc_workspace));
    SC_BACKEND(cudnnBackendFinalize(e->pack));
    e->x = x, e->w = w, e->y = y, e->workspace = sc_workspace;
  }
  SC_BACKEND(cudnnBackendExecute(sc_dnn, e->plan, e->pack));
  return 0;
}

// Whether the pointers of a call meet the alignment the engine's plan was made for.
static bool sc_conv_engine_fits(const sc_conv_engine* e, const float* x, const float* w, const float* y) {
  return sc_alignment(x) >= e->align && sc_alignment(w) >= e->align && sc_alignment(y) >= e->align;
}

// The heuristics' first SC_ENGINES usable configurations for this convolution (the whole batch in
// one call, no group split): exact fp32 ones, and where eager runs it in TF32 eager's own; each
// made into a plan and timed by the median of 5 runs on these buffers. The fastest is returned
// where it beats `*ms` (updated), else nullptr. Workspace up to sc_workspace_limit(). Any cuDNN
// refusal only leaves an engine out.
#define SC_ENGINES 6
static sc_conv_engine* sc_conv_engine_choose(const sc_conv_shape* s, const float* x, const float* w, float* y,
                                             float* ms, cudaStream_t stream) {
  const int64_t align = sc_alignment(x) < sc_alignment(w) ? sc_alignment(x) : sc_alignment(w);
  const int64_t aligned = align < sc_alignment(y) ? align : sc_alignment(y);
  cudnnBackendDescriptor_t graph = nullptr, heur = nullptr, descs[5] = {};
  cudnnBackendDescriptor_t configs[64] = {};
  int64_t count = 0;
  const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
  const bool listed =
      sc_conv_graph(s, aligned, &graph, descs) == 0 &&
      cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur) == CUDNN_STATUS_SUCCESS &&
      cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph) ==
          CUDNN_STATUS_SUCCESS &&
      cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode) ==
          CUDNN_STATUS_SUCCESS &&
      cudnnBackendFinalize(heur) == CUDNN_STATUS_SUCCESS &&
      cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                               nullptr) == CUDNN_STATUS_SUCCESS;
  if (count > 64) count = 64;
  int64_t made = 0;  // the results are read into descriptors made beforehand
  while (listed && made < count &&
         cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &configs[made]) == CUDNN_STATUS_SUCCESS)
    ++made;
  if (!listed || made < count ||
      cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &count,
                               configs) != CUDNN_STATUS_SUCCESS)
    count = 0;
  sc_conv_engine* best = nullptr;
  const bool eager_tensor_cores = s->math[0] != CUDNN_FMA_MATH;  // eager runs this convolution in TF32
  const size_t limit = sc_workspace_limit();
  bool eager_seen = false;
  for (int64_t i = 0, tried = 0; i < count && tried < SC_ENGINES; ++i) {
    const sc_engine_notes notes = sc_engine_notes_of(configs[i]);
    if (!notes.read || notes.down_convert) continue;
    // Eager's own configuration is the first PyTorch's filter keeps whose plan is made. A TF32
    // engine runs here only if it is that one, so its rounding is eager's: another TF32 kernel
    // is as far from the fp64 truth as eager on average but not element by element, and on a
    // network of 27 TF32 convolutions (level3/19 MobileNetV1) every candidate then missed the
    // verifier's rule by about 2% of eager's error. Exact fp32 engines are as good as any.
    const bool eagers = !eager_seen;
    const bool usable = !notes.refused && (!notes.tensor_cores || (eager_tensor_cores && eagers));
    if (!usable && !eagers) continue;
    sc_conv_engine* e = new sc_conv_engine();
    e->align = aligned;
    int64_t n = 0;
    const bool finalized =
        cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &e->plan) == CUDNN_STATUS_SUCCESS &&
        cudnnBackendSetAttribute(e->plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &sc_dnn) ==
            CUDNN_STATUS_SUCCESS &&
        cudnnBackendSetAttribute(e->plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                 &configs[i]) == CUDNN_STATUS_SUCCESS &&
        cudnnBackendFinalize(e->plan) == CUDNN_STATUS_SUCCESS;
    eager_seen |= finalized;
    const bool planned =
        usable && finalized &&
        cudnnBackendGetAttribute(e->plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n,
                                 &e->workspace_bytes) == CUDNN_STATUS_SUCCESS &&
        (size_t)e->workspace_bytes <= limit && sc_reserve_workspace((size_t)e->workspace_bytes) == 0;
    float t = -1.0f;
    if (planned) {
      ++tried;
      t = sc_median_ms([&] { return sc_conv_engine_run(e, x, w, y, stream); }, stream);
    }
    if (t >= 0.0f && t < *ms) {
      if (best) sc_conv_engine_release(best);
      best = e, *ms = t;
    } else {
      sc_conv_engine_release(e);
    }
  }
  for (int64_t i = 0; i < 64; ++i)
    if (configs[i]) cudnnBackendDestroyDescriptor(configs[i]);
  if (heur) cudnnBackendDestroyDescriptor(heur);
  if (graph) cudnnBackendDestroyDescriptor(graph);
  for (cudnnBackendDescriptor_t d : descs)
    if (d) cudnnBackendDestroyDescriptor(d);
  cudaGetLastError();
  return best;
}
