// What every library call's launcher shares (emitLibraryPrelude in LibraryEmitter.h): a prepared
// state per row count, the one workspace, timing by the median of runs, and the step-tagged status.
// Status codes a launcher returns for library failures lie above every cudaError_t value, so the
// harness's "stitch_forward returned N" names the library; the message goes to stderr.
#pragma once
#include "Prelude.cuh"
// The emitter writes the program's own definition (kStepStatus in LibraryEmitter.h) before this text.
#define SC_STEP_STATUS 100000
// stitch-embed: a generated program holds what follows this line (README.md).

#include <stdio.h>

// A library call whose rows are the call's (RuntimeRows.h: a GEMM's m or batch count, a
// convolution's N) keeps a prepared state per row count: each is prepared (its algorithm
// measured) on the first call with that many rows. A ninth count takes the oldest slot, whose
// descriptors and buffers `release` frees first. Eight, as many counts as a segment remembers
// (HostProgram.cpp), which drops the graphs captured with a count before its states go.
#define SC_ROW_STATES 8
template <class State>
struct sc_per_rows {
  int64_t rows[SC_ROW_STATES];
  State state[SC_ROW_STATES];
  int next;
};

template <class State, class Release>
static State* sc_for_rows(sc_per_rows<State>* r, int64_t rows, Release release) {
  for (int i = 0; i < SC_ROW_STATES; ++i)
    if (r->rows[i] == rows) return &r->state[i];
  const int i = r->next;
  r->next = (i + 1) % SC_ROW_STATES;
  if (r->rows[i]) release(&r->state[i]);
  r->rows[i] = rows;
  return &r->state[i];
}

// Library handles and one workspace, made once per loaded candidate. The workspace only grows
// while algorithms are chosen (a launcher's first call), never inside a captured or timed call.
static void* sc_workspace = nullptr;
static size_t sc_workspace_bytes = 0;
// The most workspace a cuDNN algorithm may ask for: a quarter of the GPU's free memory, at most
// 8 GiB. A fixed 256 MiB left out the tensor-core algorithm of a KernelBench-sized 3x3
// convolution (1 GiB of workspace: 4.0 ms against 9.4 ms for the fastest that fit, and eager's
// 5.7 ms on an H100; the cuDNN probe in bench/results, 2026-11-25), and 4 GiB every fast backend
// engine of a 1-D transposed convolution over 2 GB tensors (4 GiB and 256 KiB: 4.0 ms, against
// 17.0 ms for the best that fit and eager's 5.8 ms on an H200; bench/conv_engines_probe.cu).
static size_t sc_workspace_limit() {
  size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) {
    cudaGetLastError();
    return (size_t)256 << 20;
  }
  const size_t cap = (size_t)8 << 30;
  return sc_workspace_bytes + free_bytes / 4 < cap ? sc_workspace_bytes + free_bytes / 4 : cap;
}

static int sc_reserve_workspace(size_t bytes) {
  if (bytes <= sc_workspace_bytes) return 0;
  if (sc_workspace) cudaFree(sc_workspace);
  sc_workspace = nullptr;
  sc_workspace_bytes = 0;
  cudaError_t e = cudaMalloc(&sc_workspace, bytes);
  if (e != cudaSuccess) return (int)e;
  sc_workspace_bytes = bytes;
  return 0;
}

// Median milliseconds of 5 runs of `run` on `stream`, each between its own pair of events and
// after `before` (untimed), after one untimed run; negative when a run fails.
template <typename Run, typename Before>
static float sc_median5_ms(Run run, Before before, cudaStream_t stream) {
  if (run() != 0) {
    cudaGetLastError();
    return -1.0f;
  }
  cudaEvent_t ev[10];
  for (cudaEvent_t& e : ev) cudaEventCreate(&e);
  int failed = 0;
  for (int r = 0; r < 5; ++r) {
    before();
    cudaEventRecord(ev[2 * r], stream);
    failed |= run();
    cudaEventRecord(ev[2 * r + 1], stream);
  }
  float runs[5];
  bool timed = !failed && cudaEventSynchronize(ev[9]) == cudaSuccess;
  for (int r = 0; r < 5 && timed; ++r) timed = cudaEventElapsedTime(&runs[r], ev[2 * r], ev[2 * r + 1]) == cudaSuccess;
  for (cudaEvent_t& e : ev) cudaEventDestroy(e);
  if (!timed) {
    cudaGetLastError();
    return -1.0f;
  }
  for (int a = 1; a < 5; ++a)
    for (int b = a; b > 0 && runs[b] < runs[b - 1]; --b) {
      const float t = runs[b];
      runs[b] = runs[b - 1];
      runs[b - 1] = t;
    }
  return runs[2];
}

// The median of 5 runs back to back.
template <typename Run>
static float sc_median_ms(Run run, cudaStream_t stream) {
  return sc_median5_ms(run, [] {}, stream);
}

// A library step's failure names the step: its cuBLASLt or cuDNN status plus SC_STEP_STATUS times
// one more than the step's index (step k3's cuDNN status 3000: 423000), so the refine step knows
// which call to leave to PyTorch; a cudaError_t (a fault of the process, not of the call) as is.
static int sc_step_status(int status, int step) {
  return status >= 10000 ? SC_STEP_STATUS * (step + 1) + status : status;
}
