// Building the ncu command line, running it, and telling its failures apart (see NcuRunner.h).
#include "profiling/NcuRunner.h"

#include "process/ChildProcess.h"
#include "profiling/NcuCsvParser.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace stitch::profiling {
namespace fs = std::filesystem;
namespace {

// Sections rather than single metrics: their files name the right counters for each GPU
// generation; the raw page then lists every counter they collected by its raw name.
const char* const kSections[] = {"SpeedOfLight", "Occupancy", "LaunchStats", "MemoryWorkloadAnalysis",
                                 "ComputeWorkloadAnalysis", "WarpStateStats", "InstructionStats"};
// Counters the sections do not collect: DRAM bytes and FP32 operations for the roofline.
const char* const kMetrics =
    "dram__bytes_read.sum,dram__bytes_write.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,"
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,smsp__sass_thread_inst_executed_op_fmul_pred_on.sum";

std::string firstLineWith(const std::string& text, const std::string& needle) {
  std::stringstream s(text);
  for (std::string line; std::getline(s, line);)
    if (line.find(needle) != std::string::npos) return line;
  return "";
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

std::vector<std::string> ncuCommand(const NcuRequest& r, const fs::path& logFile) {
  std::vector<std::string> c = {r.ncu.string(), "--csv", "--page", "raw", "--print-units", "base",
                                "--clock-control", "none", "--nvtx", "--nvtx-include", std::string(kNcuRange) + "/",
                                "--target-processes", "all", "--log-file", logFile.string()};
  for (const char* s : kSections) {
    c.push_back("--section");
    c.push_back(s);
  }
  c.push_back("--metrics");
  c.push_back(kMetrics);
  for (const std::string& a : {r.python, std::string("-m"), std::string("stitchcuda_harness.ncu_target"),
                               std::string("--task"), r.task.string(), std::string("--iterations"),
                               std::to_string(r.iterations)})
    c.push_back(a);
  if (r.candidate) {
    c.push_back("--candidate");
    c.push_back(r.candidate->string());
  }
  if (r.cacheDir) {
    c.push_back("--cache-dir");
    c.push_back(r.cacheDir->string());
  }
  return c;
}

ProfileResult<NcuRun> interpretNcuRun(int exitCode, bool timedOut, const std::string& log,
                                      const std::string& stdoutText, const std::string& stderrText) {
  const std::string all = log + "\n" + stdoutText + "\n" + stderrText;
  if (all.find("ERR_NVGPUCTRPERM") != std::string::npos)
    return ProfileError{"counters_permission",
                        "Nsight Compute may not read the GPU's performance counters on this machine (ERR_NVGPUCTRPERM). "
                        "An administrator can allow it (nvidia driver option NVreg_RestrictProfilingToAdminUsers=0) "
                        "or run the host with the needed capability"};
  if (timedOut) return ProfileError{"timeout", "Nsight Compute did not finish within its time limit"};
  if (std::string e = firstLineWith(stdoutText, "{\"error\""); !e.empty())
    return ProfileError{"target_failed", "the profiled program could not run the subject: " + e};
  if (std::string e = firstLineWith(all, "==ERROR=="); !e.empty())
    return ProfileError{"profiler_error", "Nsight Compute failed: " + e.substr(e.find("==ERROR==") + 9)};
  auto kernels = parseNcuCsv(log);
  if (!kernels) {
    std::string warning = firstLineWith(all, "==WARNING==");
    ProfileError err = kernels.error();
    if (!warning.empty()) err.message += " (ncu said: " + warning.substr(warning.find("==WARNING==") + 11) + ")";
    if (exitCode != 0) err.message += " (exit status " + std::to_string(exitCode) + ")";
    return err;
  }
  return NcuRun{std::move(kernels).value(), log, {}};
}

ProfileResult<NcuRun> runNcu(const NcuRequest& request) {
  if (request.ncu.empty()) return ProfileError{"tool_missing", "Nsight Compute (ncu) is not installed"};
  char tmpl[] = "/tmp/stitch-ncu-XXXXXX";
  if (!::mkdtemp(tmpl)) return ProfileError{"profiler_error", "cannot make a temporary folder for ncu's log"};
  const fs::path dir = tmpl, logFile = dir / "ncu.csv";
  process::ChildSpec spec;
  spec.argv = ncuCommand(request, logFile);
  std::string pythonPath = request.harnessDir.string();
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) pythonPath += std::string(":") + old;
  spec.setEnv = {"PYTHONPATH=" + pythonPath, "PYTHONUNBUFFERED=1"};
  if (request.gpu) spec.setEnv.push_back("CUDA_VISIBLE_DEVICES=" + std::to_string(*request.gpu));
  spec.pipeStderr = true;
  std::string out, err;
  const process::ChildOutcome o = process::runChild(
      spec, request.timeout, [&](std::string_view line) { (out += line) += '\n'; },
      [&](std::string_view chunk) { err += chunk; }, request.cancelled);
  if (!o.startError.empty()) {
    fs::remove_all(dir);
    return ProfileError{"tool_missing", "Nsight Compute could not be started: " + o.startError};
  }
  std::string log = slurp(logFile);
  fs::remove_all(dir);
  if (o.cancelled) return ProfileError{"cancelled", "the job was cancelled while Nsight Compute ran"};
  auto run = interpretNcuRun(o.exitCode.value_or(-1), o.timedOut, log, out, err);
  if (!run) return run;
  NcuRun r = std::move(run).value();
  r.command = spec.argv;
  return r;
}

}  // namespace stitch::profiling
