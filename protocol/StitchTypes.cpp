// JSON conversions for the stitchcuda/* payloads in StitchTypes.h.
#include "protocol/StitchTypes.h"

#include <algorithm>
#include <cctype>

namespace stitch::protocol {
namespace {

template <typename T>
void put(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

}  // namespace

void from_json(const json& j, PlanTask& v) {
  v.id = required<std::string>(j, "id");
  v.title = required<std::string>(j, "title");
  v.range = required<Range>(j, "range");
  v.operators = optional<std::vector<std::string>>(j, "operators").value_or(std::vector<std::string>{});
  v.technique = optional<std::string>(j, "technique").value_or("");
  v.expectedGainPct = optional<double>(j, "expectedGainPct");
  v.status = optional<std::string>(j, "status").value_or("pending");
}
void to_json(json& j, const PlanTask& v) {
  j = json{{"id", v.id},       {"title", v.title},         {"range", v.range},
           {"operators", v.operators}, {"technique", v.technique}, {"status", v.status}};
  put(j, "expectedGainPct", v.expectedGainPct);
}

void from_json(const json& j, PlanParams& v) {
  v.jobId = required<std::string>(j, "jobId");
  v.uri = required<std::string>(j, "uri");
  v.tasks = required<std::vector<PlanTask>>(j, "tasks");
  v.uncovered = optional<std::vector<std::string>>(j, "uncovered").value_or(std::vector<std::string>{});
  v.coverage = optional<PlanCoverage>(j, "coverage");
}
void to_json(json& j, const PlanParams& v) {
  j = json{{"jobId", v.jobId}, {"uri", v.uri}, {"tasks", v.tasks}, {"uncovered", v.uncovered}};
  put(j, "coverage", v.coverage);
}

void from_json(const json& j, PlanCoverage& v) {
  v.operators = required<int>(j, "operators");
  v.coveredOperators = required<int>(j, "coveredOperators");
  v.timeShare = optional<double>(j, "timeShare").value_or(0.0);
  v.timeBasis = optional<std::string>(j, "timeBasis").value_or("");
}
void to_json(json& j, const PlanCoverage& v) {
  j = json{{"operators", v.operators}, {"coveredOperators", v.coveredOperators}, {"timeShare", v.timeShare},
           {"timeBasis", v.timeBasis}};
}

void from_json(const json& j, CandidateFile& v) {
  v.path = required<std::string>(j, "path");
  v.source = required<std::string>(j, "source");
}
void to_json(json& j, const CandidateFile& v) { j = json{{"path", v.path}, {"source", v.source}}; }

void from_json(const json& j, Candidate& v) {
  v.id = required<std::string>(j, "id");
  v.taskId = optional<std::string>(j, "taskId").value_or("");
  v.title = required<std::string>(j, "title");
  v.range = required<Range>(j, "range");
  v.status = optional<std::string>(j, "status").value_or("unverified");
  v.speedupEager = optional<double>(j, "speedupEager");
  v.speedupCompile = optional<double>(j, "speedupCompile");
  v.failedChecks =
      optional<std::vector<std::string>>(j, "failedChecks").value_or(std::vector<std::string>{});
  v.newText = required<std::string>(j, "newText");
  v.documentVersion = optional<int>(j, "documentVersion").value_or(0);
  v.files = optional<std::vector<CandidateFile>>(j, "files").value_or(std::vector<CandidateFile>{});
}
void to_json(json& j, const Candidate& v) {
  j = json{{"id", v.id},         {"taskId", v.taskId},   {"title", v.title},
           {"range", v.range},   {"status", v.status},   {"failedChecks", v.failedChecks},
           {"newText", v.newText}, {"documentVersion", v.documentVersion}};
  put(j, "speedupEager", v.speedupEager);
  put(j, "speedupCompile", v.speedupCompile);
  if (!v.files.empty()) j["files"] = v.files;
}

void from_json(const json& j, CandidateParams& v) {
  v.jobId = required<std::string>(j, "jobId");
  v.uri = required<std::string>(j, "uri");
  v.candidate = required<Candidate>(j, "candidate");
}
void to_json(json& j, const CandidateParams& v) {
  j = json{{"jobId", v.jobId}, {"uri", v.uri}, {"candidate", v.candidate}};
}

void from_json(const json& j, ProfileLine& v) {
  v.line = required<int>(j, "line");
  v.gpuTimeUs = required<double>(j, "gpuTimeUs");
  v.share = required<double>(j, "share");
  v.bound = optional<std::string>(j, "bound").value_or("");
  v.achievedPct = optional<double>(j, "achievedPct");
  v.topStall = optional<std::string>(j, "topStall");
  v.kernels = optional<std::vector<std::string>>(j, "kernels").value_or(std::vector<std::string>{});
  v.inlineText = optional<std::string>(j, "inlineText").value_or("");
}
void to_json(json& j, const ProfileLine& v) {
  j = json{{"line", v.line},   {"gpuTimeUs", v.gpuTimeUs}, {"share", v.share},
           {"bound", v.bound}, {"kernels", v.kernels},     {"inlineText", v.inlineText}};
  put(j, "achievedPct", v.achievedPct);
  put(j, "topStall", v.topStall);
}

void from_json(const json& j, ProfileParams& v) {
  v.jobId = required<std::string>(j, "jobId");
  v.uri = required<std::string>(j, "uri");
  v.subject = required<std::string>(j, "subject");
  v.timeKind = optional<std::string>(j, "timeKind").value_or("gpu");
  if (v.timeKind != "gpu" && v.timeKind != "cpu") throw ParamsError("\"timeKind\" must be \"gpu\" or \"cpu\"");
  v.totalGpuTimeUs = optional<double>(j, "totalGpuTimeUs").value_or(0.0);
  v.lines = required<std::vector<ProfileLine>>(j, "lines");
}
void to_json(json& j, const ProfileParams& v) {
  j = json{{"jobId", v.jobId},
           {"uri", v.uri},
           {"subject", v.subject},
           {"timeKind", v.timeKind},
           {"totalGpuTimeUs", v.totalGpuTimeUs},
           {"lines", v.lines}};
}

void from_json(const json& j, LogParams& v) {
  v.jobId = required<std::string>(j, "jobId");
  v.level = optional<std::string>(j, "level").value_or("info");
  v.phase = optional<std::string>(j, "phase").value_or("");
  v.message = required<std::string>(j, "message");
}
void to_json(json& j, const LogParams& v) {
  j = json{{"jobId", v.jobId}, {"level", v.level}, {"phase", v.phase}, {"message", v.message}};
}

void from_json(const json& j, JobFinishedParams& v) {
  v.jobId = required<std::string>(j, "jobId");
  v.state = required<std::string>(j, "state");
  v.bestCandidateId = optional<std::string>(j, "bestCandidateId");
  v.speedupEager = optional<double>(j, "speedupEager");
  v.message = optional<std::string>(j, "message").value_or("");
  v.needsGpu = optional<bool>(j, "needsGpu").value_or(false);
}
void to_json(json& j, const JobFinishedParams& v) {
  j = json{{"jobId", v.jobId}, {"state", v.state}, {"message", v.message}};
  put(j, "bestCandidateId", v.bestCandidateId);
  put(j, "speedupEager", v.speedupEager);
  if (v.needsGpu) j["needsGpu"] = true;
}

void from_json(const json& j, JobSummary& v) {
  v.jobId = required<std::string>(j, "jobId");
  v.uri = required<std::string>(j, "uri");
  v.state = required<std::string>(j, "state");
  v.phase = optional<std::string>(j, "phase").value_or("");
  v.startedAt = optional<std::string>(j, "startedAt").value_or("");
  v.bestCandidateId = optional<std::string>(j, "bestCandidateId");
  v.logPath = optional<std::string>(j, "logPath").value_or("");
}
void to_json(json& j, const JobSummary& v) {
  j = json{{"jobId", v.jobId}, {"uri", v.uri},           {"state", v.state},
           {"phase", v.phase}, {"startedAt", v.startedAt}, {"logPath", v.logPath}};
  put(j, "bestCandidateId", v.bestCandidateId);
}

void from_json(const json& j, CandidateRef& v) {
  v.jobId = required<std::string>(j, "jobId");
  v.candidateId = required<std::string>(j, "candidateId");
}
void to_json(json& j, const CandidateRef& v) {
  j = json{{"jobId", v.jobId}, {"candidateId", v.candidateId}};
}

bool isPackageName(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

void from_json(const json& j, OptimizeParams& v) {
  v.textDocument = required<TextDocumentIdentifier>(j, "textDocument");
  v.brain = optional<std::string>(j, "brain").value_or("builtin");
  if (v.brain != "builtin" && v.brain != "openai" && v.brain != "anthropic")
    throw ParamsError("\"brain\" must be \"builtin\", \"openai\" or \"anthropic\"");
  v.model = optional<std::string>(j, "model");
  v.baseUrl = optional<std::string>(j, "baseUrl");
  if (auto b = optional<json>(j, "budget")) {
    v.budget.iterations = optional<int>(*b, "iterations");
    v.budget.wallSeconds = optional<double>(*b, "wallSeconds");
    if ((v.budget.iterations && *v.budget.iterations < 1) ||
        (v.budget.wallSeconds && *v.budget.wallSeconds <= 0))
      throw ParamsError("budget values must be positive");
  }
  if (auto t = optional<json>(j, "tolerance")) {
    v.tolerance.atol = optional<double>(*t, "atol").value_or(v.tolerance.atol);
    v.tolerance.rtol = optional<double>(*t, "rtol").value_or(v.tolerance.rtol);
    if (v.tolerance.atol < 0 || v.tolerance.rtol < 0) throw ParamsError("tolerances must be >= 0");
  }
  v.allowPrecision = optional<std::vector<std::string>>(j, "allowPrecision").value_or(std::vector<std::string>{});
  for (const auto& p : v.allowPrecision)
    if (!isPrecision(p))
      throw ParamsError("\"allowPrecision\" entries must be \"tf32\", \"fp16\" or \"bf16\"");
  v.precision = optional<std::string>(j, "precision").value_or("eager");
  if (!isPrecisionMode(v.precision)) throw ParamsError("\"precision\" must be \"eager\" or \"fp32\"");
  v.layout = optional<std::string>(j, "layout").value_or("auto");
  if (!isLayoutMode(v.layout)) throw ParamsError("\"layout\" must be \"auto\", \"nchw\" or \"channels_last\"");
  v.gpu = optional<int>(j, "gpu");
  v.loadTimeout = optional<double>(j, "loadTimeout");
  if (v.loadTimeout && !(*v.loadTimeout > 0)) throw ParamsError("\"loadTimeout\" must be a positive number of seconds");
  v.kernelsFolder = optional<std::string>(j, "kernelsFolder").value_or("stitchcuda_kernels");
  if (!isPackageName(v.kernelsFolder))
    throw ParamsError("\"kernelsFolder\" must be a Python package name (letters, digits and _, not starting with a digit)");
  v.workDoneToken = optional<json>(j, "workDoneToken");
}

void from_json(const json& j, JobRef& v) { v.jobId = required<std::string>(j, "jobId"); }

void from_json(const json& j, OpenJobLogParams& v) { v.path = required<std::string>(j, "path"); }

}  // namespace stitch::protocol
