// The stitchcuda/* payloads: what a job streams (plan, candidates, profiles, log lines,
// the finish) and what clients send to start, inspect and steer jobs. The notification
// params are also the records of a job's JSONL log, so one set of types serves the wire,
// the log and the replay of a finished job.
#pragma once

#include "protocol/LspTypes.h"

#include <optional>
#include <string>
#include <vector>

namespace stitch::protocol {

struct PlanTask {
  std::string id;
  std::string title;
  Range range;                         // the source lines the task covers
  std::vector<std::string> operators;  // operators fused or replaced by this task
  std::string technique;               // e.g. "fused elementwise kernel", "cuBLASLt + bias epilogue"
  std::optional<double> expectedGainPct;  // from the roofline floor
  std::string status = "pending";      // pending | active | done | skipped
};

// How much of the forward runs in the candidate's compiled code (a partial candidate leaves the
// rest in PyTorch between its compiled segments).
struct PlanCoverage {
  int operators = 0;         // the forward's computing operators (views and allocations excluded)
  int coveredOperators = 0;  // those in generated kernels or library calls
  double timeShare = 0;      // of the reference's time, 0..1, that the covered operators take
  std::string timeBasis;     // "profile" (the reference's measured time per line) | "bytes" (an estimate)
};

struct PlanParams {
  std::string jobId;
  std::string uri;
  std::vector<PlanTask> tasks;
  std::vector<std::string> uncovered;  // operators left in PyTorch, named, never hidden
  std::optional<PlanCoverage> coverage;
};

// A file of the program an accepted candidate leaves in the user's workspace.
struct CandidateFile {
  std::string path;    // relative to the model's folder, '/'-separated ("stitchcuda_kernels/model.cu")
  std::string source;  // where the host keeps its text (the job's folder); read when the candidate is accepted
};

struct Candidate {
  std::string id;
  std::string taskId;
  std::string title;
  Range range;                      // the code the candidate replaces
  std::string status = "unverified";  // unverified | verified | failed | accepted | rejected
  std::optional<double> speedupEager;
  std::optional<double> speedupCompile;
  std::vector<std::string> failedChecks;
  std::string newText;              // replacement for `range`
  int documentVersion = 0;          // the version of the document the candidate was made from
  std::vector<CandidateFile> files;  // written beside the model on accept (the program newText imports)
};

struct CandidateParams {
  std::string jobId;
  std::string uri;
  Candidate candidate;
};

struct ProfileLine {
  int line = 0;  // zero-based, like LSP positions
  double gpuTimeUs = 0;
  double share = 0;                 // of the whole forward, 0..1
  std::string bound;                // memory | compute | latency
  std::optional<double> achievedPct;  // of the measured ceiling for that bound
  std::optional<std::string> topStall;
  std::vector<std::string> kernels;
  std::string inlineText;           // short end-of-line text for the hottest lines
};

struct ProfileParams {
  std::string jobId;
  std::string uri;
  std::string subject;  // "reference" or a candidate id
  std::string timeKind = "gpu";  // "cpu" when no GPU was visible: the times are CPU times then
  double totalGpuTimeUs = 0;
  std::vector<ProfileLine> lines;
};

struct LogParams {
  std::string jobId;
  std::string level = "info";  // debug | info | warning | error
  std::string phase;           // BASELINE, PLAN, ... (empty outside the loop)
  std::string message;
};

struct JobFinishedParams {
  std::string jobId;
  std::string state;  // improved | noImprovement | failed | cancelled
  std::optional<std::string> bestCandidateId;
  std::optional<double> speedupEager;
  std::string message;
  bool needsGpu = false;  // nothing could be verified or timed: no GPU was visible
};

struct Budget {
  std::optional<int> iterations;
  std::optional<double> wallSeconds;
};

// The lower precisions a job may allow (OptimizeParams::allowPrecision).
inline bool isPrecision(const std::string& name) { return name == "tf32" || name == "fp16" || name == "bf16"; }
// The precision modes of a job (OptimizeParams::precision).
inline bool isPrecisionMode(const std::string& name) { return name == "eager" || name == "fp32"; }
// The memory formats a job may ask for (OptimizeParams::layout).
inline bool isLayoutMode(const std::string& name) { return name == "auto" || name == "nchw" || name == "channels_last"; }

struct Tolerance {
  double atol = 1e-4;
  double rtol = 1e-4;
};

struct OptimizeParams {
  TextDocumentIdentifier textDocument;
  std::string brain = "builtin";  // builtin | openai | anthropic
  std::optional<std::string> model;
  std::optional<std::string> baseUrl;
  Budget budget;
  Tolerance tolerance;
  // Lower precisions the job allows ("tf32", "fp16", "bf16"): the verifier's precision check
  // passes them, and the built-in brain's library calls may use TF32 tensor cores in their
  // fp32-accurate 3xTF32 form. Empty: fp32 stays fp32.
  std::vector<std::string> allowPrecision;
  // The precision of the built-in brain's library calls: "eager" (each runs as eager runs it:
  // TF32 convolutions while torch.backends.cudnn.allow_tf32 is on, TF32 matmuls while
  // torch.backends.cuda.matmul.allow_tf32 is) or "fp32" (exact fp32 everywhere); the verifier then
  // excuses TF32 only under "eager", where the reference itself computes those ops in TF32.
  std::string precision = "eager";
  // The memory format of the built-in brain's convolution networks: "auto" (the planner's choice:
  // channels-last where TF32 convolutions make a network), "nchw" or "channels_last", so one
  // problem can be measured both ways.
  std::string layout = "auto";
  std::optional<int> gpu;
  // Seconds each stage of the model's own code may take (importing it, __init__, get_inputs, each
  // forward); absent: the host's --load-timeout.
  std::optional<double> loadTimeout;
  // The folder beside the model that an accepted program is written to (a Python package name).
  std::string kernelsFolder = "stitchcuda_kernels";
  std::optional<json> workDoneToken;  // LSP WorkDoneProgressParams
};

struct JobRef {
  std::string jobId;
};

struct CandidateRef {
  std::string jobId;
  std::string candidateId;
};

struct OpenJobLogParams {
  std::string path;
};

struct JobSummary {
  std::string jobId;
  std::string uri;
  std::string state;  // running | improved | noImprovement | failed | cancelled
  std::string phase;
  std::string startedAt;  // ISO 8601, UTC
  std::optional<std::string> bestCandidateId;
  std::string logPath;
};

#define STITCH_JSON_BOTH(T)            \
  void from_json(const json& j, T& v); \
  void to_json(json& j, const T& v);
STITCH_JSON_BOTH(PlanTask)
STITCH_JSON_BOTH(PlanCoverage)
STITCH_JSON_BOTH(PlanParams)
STITCH_JSON_BOTH(CandidateFile)
STITCH_JSON_BOTH(Candidate)
STITCH_JSON_BOTH(CandidateParams)
STITCH_JSON_BOTH(ProfileLine)
STITCH_JSON_BOTH(ProfileParams)
STITCH_JSON_BOTH(LogParams)
STITCH_JSON_BOTH(JobFinishedParams)
STITCH_JSON_BOTH(JobSummary)
STITCH_JSON_BOTH(CandidateRef)
#undef STITCH_JSON_BOTH

// Whether `name` can be a Python package's name (the kernels folder is imported by it).
bool isPackageName(const std::string& name);
void from_json(const json& j, OptimizeParams& v);
void from_json(const json& j, JobRef& v);
void from_json(const json& j, OpenJobLogParams& v);

}  // namespace stitch::protocol
