// Headless verify; see HeadlessVerify.h.
#include "server/HeadlessVerify.h"

#include "protocol/StitchTypes.h"

#include "server/HostShutdown.h"
#include "server/VerifyBatch.h"
#include "server/WorkerProcess.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

namespace stitch::server {
namespace {

// A verdict's status, and what the command exits with for it: the verifier's own failure is an
// error of the run (2), no GPU to run the candidate on is its own case (4), never "FAILED".
int exitFor(const std::string& status) {
  if (status == "passed") return 0;
  if (status == "verifier_error") return 2;
  if (status == "needs_gpu") return 4;
  return 1;
}

std::string headline(const std::string& status) {
  if (status == "passed") return "PASSED";
  if (status == "verifier_error") return "NOT JUDGED (the verifier failed)";
  if (status == "needs_gpu") return "NEEDS A GPU";
  return "FAILED";
}

void printVerdict(const protocol::json& v) {
  const std::string status = v.value("status", v.value("passed", false) ? "passed" : "failed");
  std::cout << headline(status) << "  " << v.value("candidate", "") << "\n";
  for (const auto& f : v.value("findings", protocol::json::array())) {
    std::cout << "  ✗ " << f.value("check", "?") << ": " << f.value("message", "");
    if (f.contains("file") && f["file"].is_string())
      std::cout << " (" << f["file"].get<std::string>()
                << (f.contains("line") && f["line"].is_number() ? ":" + std::to_string(f["line"].get<int>()) : "") << ")";
    std::cout << "\n";
  }
  const protocol::json skipped = v.value("skipped_checks", protocol::json::object());
  for (const auto& [check, why] : skipped.items())
    std::cout << "  - skipped " << check << ": " << (why.is_string() ? why.get<std::string>() : why.dump()) << "\n";
  for (const auto& f : v.value("flags", protocol::json::array()))
    std::cout << "  ! " << f.value("name", "?") << ": " << f.value("reason", "") << "\n";
  // Tolerances mean something only where trials compared outputs.
  if (auto t = v.value("tolerance", protocol::json()); t.is_object() && !v.value("trials", protocol::json::array()).empty()) {
    std::cout << "  tolerance: atol " << t.value("atol", 0.0) << ", rtol " << t.value("rtol", 0.0);
    if (v.value("correctness_rule", protocol::json()) == "truth") std::cout << ", passed by the fp64-truth rule";
    if (auto strict = v.value("kernelbench_strict", protocol::json()); strict.is_boolean())
      std::cout << "; KernelBench's 1e-4 check " << (strict.get<bool>() ? "passes" : "fails");
    std::cout << "\n";
  }
  if (auto timing = v.value("timing", protocol::json()); timing.is_object() && timing.contains("speedup_vs_eager"))
    std::printf("  speedup: %.2f× vs eager%s\n", timing["speedup_vs_eager"].get<double>(),
                timing.contains("speedup_vs_compile") && timing["speedup_vs_compile"].is_number()
                    ? (", " + std::to_string(timing["speedup_vs_compile"].get<double>()).substr(0, 4) + "× vs torch.compile").c_str()
                    : "");
}

// `--kernelbench`: the harness's count of KernelBench's own protocol (HARNESS.md, verifyKernelBench).
void printKernelBench(const protocol::json& r) {
  const std::string status = r.value("status", "failed");
  const int trials = r.value("trials", 0);
  std::cout << headline(status) << " (KernelBench protocol, seed " << r.value("seed", 0) << ")  " << r.value("candidate", "")
            << "\n  correct: " << r.value("correct_1e-4", 0) << "/" << trials << " at atol=rtol=1e-4, "
            << r.value("correct_1e-2", 0) << "/" << trials << " at 1e-2\n";
  if (auto w = r.value("weights", protocol::json()); w.is_string()) std::cout << "  weights under one seed: " << w.get<std::string>() << "\n";
  if (auto e = r.value("error", protocol::json()); e.is_object())
    std::cout << "  stopped at " << e.value("stage", "?") << ": " << e.value("message", "") << "\n";
}

// The command line's mistakes, said before anything runs.
void checkVerifyUsage(const CLI::App& cmd, const VerifyArgs& a) {
  for (const auto& name : slurmOptionNames())
    if (cmd.get_option(name)->count() > 0 && !a.slurm.enabled)
      throw cli::UsageError(name + " is for a Slurm run: it needs --slurm");
  if (a.batch.empty()) {
    for (const char* name : {"--out", "--gpus", "--slurm"})
      if (cmd.get_option(name)->count() > 0)
        throw cli::UsageError(std::string(name) + " is for many candidates: it needs --batch ROWS.jsonl");
    if (a.reference.empty() || a.candidate.empty())
      throw cli::UsageError(std::string(a.reference.empty() ? "--reference TASK.py" : "--candidate CAND") +
                            " is required: stitchcuda verify --reference TASK.py --candidate CAND [options]");
    return;
  }
  if (!a.reference.empty() || !a.candidate.empty())
    throw cli::UsageError("--batch verifies many candidates: --reference and --candidate are for one");
  if (a.out.empty()) throw cli::UsageError("--batch needs --out VERDICTS.jsonl");
  if (a.json) throw cli::UsageError("--json is for one candidate: a batch writes JSON lines to --out");
  if (a.slurm.enabled && cmd.get_option("--gpus")->count() > 0)
    throw cli::UsageError("--gpus is for one machine, not with --slurm (each element gets one GPU)");
}

}  // namespace

CLI::App* addVerifyCommand(CLI::App& app, VerifyArgs& a) {
  CLI::App* cmd = app.add_subcommand(
      "verify", "verify any candidate, ours or a KernelBench-style ModelNew by anyone, against its task");
  cli::addText(*cmd, "--reference", a.reference, "the task: the reference model (required)", "TASK.py");
  cli::addText(*cmd, "--candidate", a.candidate, "the candidate: a ModelNew file or a candidate folder (required)", "CAND");
  cmd->add_flag("--json", a.json, "the verdict as JSON");
  cli::addToleranceOptions(*cmd, a.atol, a.rtol);
  cli::addValue(
      *cmd, "--trials", a.trials,
      [](const std::string& name, const std::string& text) { return std::optional<int>(cli::positiveWholeNumber(name, text)); },
      "seeded trials (default 5)", "N");
  cli::addAllowPrecision(*cmd, a.allowPrecision);
  cli::addPrecision(*cmd, a.precision);
  cmd->add_flag("--no-timing", a.noTiming, "correctness and guards only");
  cmd->add_flag("--kernelbench", a.kernelbench,
                "KernelBench's own protocol instead: seeded construction, no state copy, 5 trials, allclose at 1e-4 "
                "and 1e-2");
  cli::addValue(
      *cmd, "--seed", a.seed,
      [](const std::string& name, const std::string& text) { return std::optional<int>(cli::wholeNumber(name, text)); },
      "the seed of the construction and the inputs (default 0; 42 with --kernelbench)", "S");
  const std::string many = "Many candidates";
  cli::addText(*cmd, "--batch", a.batch,
               "verify every row of this file (one JSON object a line: reference, candidate, id, and verify's options)",
               "ROWS.jsonl")
      ->group(many);
  cli::addText(*cmd, "--out", a.out, "one JSON line per row; rows already verified there are kept and skipped",
               "VERDICTS.jsonl")
      ->group(many);
  cli::addValue(*cmd, "--gpus", a.gpus, cli::positiveWholeNumber, "one worker per GPU (default 1)", "N")->group(many);
  addSlurmOptions(*cmd, a.slurm);
  cmd->footer("The verdict names every failed check; the candidate runs in a supervised harness worker.\n"
              "many:             stitchcuda verify --batch ROWS.jsonl --out VERDICTS.jsonl [--gpus N] (the options above "
              "are each row's defaults)\n"
              "past one machine: ... --slurm [--partition P] [--time T]: one Slurm job array, a GPU per row "
              "(protocol/SLURM.md)\n"
              "exit: 0 passed, 1 failed, 2 usage or harness error or the verifier's own failure, 3 the candidate left "
              "the GPU in a sticky error state, 4 no GPU to run the candidate on, 128 + N when signal N stopped it;\n"
              "      a batch: 0 every row has a verdict (passed or not), 1 some row has none, 2 usage error");
  cmd->callback([cmd, &a] { checkVerifyUsage(*cmd, a); });
  return cmd;
}

VerifyCall verifyCallOf(const VerifyArgs& args) {
  VerifyCall call;
  protocol::json& params = call.params;
  if (args.atol) params["atol"] = *args.atol;
  if (args.rtol) params["rtol"] = *args.rtol;
  if (args.trials) params["trials"] = *args.trials;
  if (args.seed) params["seed"] = *args.seed;
  for (const auto& p : args.allowPrecision) params["allowPrecision"].push_back(p);
  if (args.precision) params["precision"] = *args.precision;
  if (args.noTiming) params["timing"] = false;
  call.kernelbench = args.kernelbench;
  return call;
}

int runHeadlessVerify(const HostConfig& config, const VerifyArgs& args) {
  if (!args.batch.empty()) return runVerifyBatch(config, args);
  protocol::json params = verifyCallOf(args).params;
  std::error_code ec;
  params["reference"] = std::filesystem::absolute(args.reference, ec).string();
  params["candidate"] = std::filesystem::absolute(args.candidate, ec).string();
  params["cacheDir"] = (config.jobsDir / ".verify-cache").string();

  WorkerProcess worker(WorkerSettings{config.python, config.harnessDir, {}, std::nullopt, config.loadTimeoutSeconds},
                       [](const protocol::json& event) {
                         if (event.value("event", "") == "log")  // verifyStage events are for deadlines
                           std::cerr << "harness: " << event.value("message", "") << "\n";
                       });
  // SIGTERM, SIGINT, SIGHUP stop the worker through the call's cancel: no verdict, and no worker left.
  agents::CancelSource cancel;
  StopOnSignal stopOnSignal([&cancel](int) { cancel.cancel(); });
  auto reply = worker.call(args.kernelbench ? "verifyKernelBench" : "verify", params,
                           callDeadline(config.workerDeadline, config.loadTimeoutSeconds), cancel.token());
  if (int signal = terminationSignal()) {
    std::cerr << "stitchcuda verify: stopped by SIG" << sigabbrev_np(signal) << " before a verdict\n";
    return 128 + signal;
  }
  if (!reply.ok()) {
    const auto& e = *reply.error;
    if (args.json) std::cout << protocol::json{{"error", {{"code", e.code}, {"message", e.message}}}}.dump(2) << "\n";
    else std::cerr << "stitchcuda verify: " << e.message << " [" << e.code << "]\n";
    return e.code == "cuda_sticky_error" ? 3 : 2;
  }
  if (args.json) std::cout << reply.result->dump(2) << "\n";
  else if (args.kernelbench) printKernelBench(*reply.result);
  else printVerdict(*reply.result);
  return exitFor(reply.result->value("status", reply.result->value("passed", false) ? "passed" : "failed"));
}

}  // namespace stitch::server
