// Headless verify; see HeadlessVerify.h.
#include "server/HeadlessVerify.h"

#include "protocol/StitchTypes.h"

#include "server/HostShutdown.h"
#include "server/WorkerProcess.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

namespace stitch::server {
namespace {

const char* kVerifyUsage = R"(usage: stitchcuda verify --reference TASK.py --candidate CAND [options]   (also --name=value)
  --json                       the verdict as JSON
  --atol A  --rtol R           tolerances (default 1e-4 each)
  --trials N                   seeded trials (default 5)
  --allow-precision tf32|fp16|bf16 (repeatable)   --precision eager|fp32
  --no-timing                  correctness and guards only
  --kernelbench [--seed S]     KernelBench's protocol: seeded construction, 5 trials, 1e-4 and 1e-2
exit: 0 passed, 1 failed, 2 error, 3 sticky CUDA error, 4 no GPU to run the candidate on
)";

struct Args {
  bool help = false;
  std::string reference;
  std::string candidate;
  bool json = false;
  bool kernelbench = false;  // KernelBench's protocol count instead of the verdict
  protocol::json params = protocol::json::object();
};

std::optional<Args> parseArgs(const std::vector<std::string>& args) {
  Args a;
  for (std::size_t i = 0; i < args.size(); ++i) {
    // `--name=value` is `--name value`.
    const std::string& whole = args[i];
    const std::string arg = whole.rfind("--", 0) == 0 ? whole.substr(0, whole.find('=')) : whole;
    auto value = [&]() -> std::optional<std::string> {
      if (arg.size() < whole.size()) return whole.substr(arg.size() + 1);
      if (i + 1 < args.size()) return args[++i];
      std::cerr << "stitchcuda verify: " << arg << " needs a value\n";
      return std::nullopt;
    };
    auto number = [&](const char* key) {
      auto v = value();
      if (!v) return false;
      try {
        a.params[key] = std::stod(*v);
      } catch (const std::exception&) {
        std::cerr << "stitchcuda verify: " << arg << " takes a number, not " << *v << "\n";
        return false;
      }
      return true;
    };
    if (arg == "--help" || arg == "-h") {
      a.help = true;
      return a;
    }
    if (arg == "--json") a.json = true;
    else if (arg == "--kernelbench") a.kernelbench = true;
    else if (arg == "--seed") { if (!number("seed")) return std::nullopt; a.params["seed"] = static_cast<int>(a.params["seed"].get<double>()); }
    else if (arg == "--reference") { if (auto v = value()) a.reference = *v; else return std::nullopt; }
    else if (arg == "--candidate") { if (auto v = value()) a.candidate = *v; else return std::nullopt; }
    else if (arg == "--atol") { if (!number("atol")) return std::nullopt; }
    else if (arg == "--rtol") { if (!number("rtol")) return std::nullopt; }
    else if (arg == "--trials") { if (!number("trials")) return std::nullopt; a.params["trials"] = static_cast<int>(a.params["trials"].get<double>()); }
    else if (arg == "--allow-precision") { if (auto v = value()) a.params["allowPrecision"].push_back(*v); else return std::nullopt; }
    else if (arg == "--precision") {
      auto v = value();
      if (!v || !protocol::isPrecisionMode(*v)) {
        std::cerr << "stitchcuda verify: --precision takes eager or fp32\n";
        return std::nullopt;
      }
      a.params["precision"] = *v;
    } else if (arg == "--no-timing") a.params["timing"] = false;
    else {
      std::cerr << "stitchcuda verify: unexpected argument " << arg << "\n";
      return std::nullopt;
    }
  }
  if (a.reference.empty() || a.candidate.empty()) {
    std::cerr << kVerifyUsage;
    return std::nullopt;
  }
  return a;
}

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

}  // namespace

int runHeadlessVerify(const HostConfig& config, const std::vector<std::string>& rawArgs) {
  auto args = parseArgs(rawArgs);
  if (!args) return 2;
  if (args->help) {
    std::cout << kVerifyUsage;
    return 0;
  }
  std::error_code ec;
  args->params["reference"] = std::filesystem::absolute(args->reference, ec).string();
  args->params["candidate"] = std::filesystem::absolute(args->candidate, ec).string();
  args->params["cacheDir"] = (config.jobsDir / ".verify-cache").string();

  WorkerProcess worker(WorkerSettings{config.python, config.harnessDir, {}, std::nullopt},
                       [](const protocol::json& event) {
                         if (event.value("event", "") == "log")  // verifyStage events are for deadlines
                           std::cerr << "harness: " << event.value("message", "") << "\n";
                       });
  // SIGTERM, SIGINT, SIGHUP stop the worker through the call's cancel: no verdict, and no worker left.
  agents::CancelSource cancel;
  StopOnSignal stopOnSignal([&cancel](int) { cancel.cancel(); });
  auto reply = worker.call(args->kernelbench ? "verifyKernelBench" : "verify", args->params, config.workerDeadline,
                           cancel.token());
  if (int signal = terminationSignal()) {
    std::cerr << "stitchcuda verify: stopped by SIG" << sigabbrev_np(signal) << " before a verdict\n";
    return 128 + signal;
  }
  if (!reply.ok()) {
    const auto& e = *reply.error;
    if (args->json) std::cout << protocol::json{{"error", {{"code", e.code}, {"message", e.message}}}}.dump(2) << "\n";
    else std::cerr << "stitchcuda verify: " << e.message << " [" << e.code << "]\n";
    return e.code == "cuda_sticky_error" ? 3 : 2;
  }
  if (args->json) std::cout << reply.result->dump(2) << "\n";
  else if (args->kernelbench) printKernelBench(*reply.result);
  else printVerdict(*reply.result);
  return exitFor(reply.result->value("status", reply.result->value("passed", false) ? "passed" : "failed"));
}

}  // namespace stitch::server
