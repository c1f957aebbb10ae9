// The loop's phases; see OptimizeLoop.h. With a GPU each candidate goes through the harness's
// `verify` (build, correctness, guards, timing in one call) and, when verified, through PROFILE
// (ProfilePhase); without one it is only built, and the job says plainly that verification needs a GPU.
#include "agents/loop/OptimizeLoop.h"
#include "agents/loop/TransitionLog.h"

#include "protocol/NumberText.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace stitch::agents::loop {
namespace {

using protocol::json;
using Clock = std::chrono::steady_clock;

using protocol::fixed;

std::optional<double> number(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

// Whose code the harness last said runs inside `verify` (its verifyStage events, HARNESS.md): a
// deadline that passes while only the verifier's own work runs (the reference, the fp64 truth, a
// comparison) is the verifier's failure, never the candidate's.
struct VerifyActivity {
  std::string stage;
  bool verifierRunning = false;
};

class Run {
public:
  Run(const JobRequest& request, JobContext& context, Worker& worker, Brain& brain, const LoopLimits& limits,
      VerifyActivity& activity)
      : request_(request), context_(context), worker_(worker), brain_(brain), limits_(limits), activity_(activity),
        start_(Clock::now()),
        profiler_(request, worker, limits.profile, cacheDir(),
                  [this](const std::string& level, const std::string& message) { log("PROFILE", message, level); }) {
    if (limits.recordTransitions) transitions_ = std::make_unique<TransitionLog>(*limits.recordTransitions, request.jobId);
  }

  protocol::JobFinishedParams go(const BaselineFacts& facts) {
    cuda_ = facts.cuda;
    gpu_ = facts.gpu.empty() ? "the GPU" : facts.gpu;
    const int iterations = request_.options.budget.iterations.value_or(limits_.iterations);
    const double wall = request_.options.budget.wallSeconds.value_or(limits_.wallSeconds);
    if (!planPhase(facts, false)) return finish(noPlanReason_);
    int failuresInRow = 0;
    int stagnantInRow = 0;  // verified, but no faster than the best by stagnantBelowGain
    std::optional<Feedback> last;
    for (int i = 1; i <= iterations; ++i) {
      if (context_.cancelToken().cancelled()) return cancelled();
      const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
      if (elapsed > wall) {
        log("REFINE", "wall-time budget of " + fixed(wall, 0) + " s spent after " + std::to_string(i - 1) + " candidate(s)");
        break;
      }
      const bool failing = failuresInRow >= limits_.replanAfterFailures;
      const bool stagnant = stagnantInRow >= limits_.replanAfterStagnant && brain_.replansOnStagnation();
      if ((failing || stagnant) && !replanned_) {
        log("REPLAN", failing ? std::to_string(failuresInRow) + " failed candidates in a row; replanning"
                              : std::to_string(stagnantInRow) + " verified candidates in a row no faster than " +
                                    best_->id + "; replanning");
        replanned_ = true;
        failuresInRow = stagnantInRow = 0;
        last.reset();
        if (!planPhase(facts, true)) break;
      }
      const std::string phase = last ? "REFINE" : "CODE";
      context_.progress(phase == "CODE" ? "generating a candidate" : "refining (variant " + std::to_string(i) + ")",
                        std::min(95, 40 + i * 50 / std::max(1, iterations)));
      std::string error;
      const std::string id = "c" + std::to_string(i);
      auto draft = brain_.next(last, request_.jobDir / "candidates" / id, error);
      if (!draft) {
        if (!error.empty()) log(phase, "the coder could not write a candidate: " + error, "error");
        else log(phase, "variant search finished");
        break;
      }
      if (draft->plan) {
        adoptPlan(*draft->plan);
        log(phase, "the plan changed: " + std::to_string(plan_.tasks.size()) + " step(s), " +
                       std::to_string(plan_.uncovered.size()) + " operator(s) left in PyTorch");
      }
      log(phase, "candidate " + id + ": " + draft->title + " in " + draft->dir.string());
      if (cuda_ && !referenceTimed_)
        if (auto ended = timeReferenceBeside(id, *draft)) return *ended;
      given_ = last;
      Feedback fb = cuda_ ? verify(id, *draft) : build(id, *draft);
      record(id, *draft, fb);
      if (!cuda_) break;  // without measurements there is nothing to choose between variants
      if (!verifierFailure_.empty()) break;  // the next candidate would meet the same verifier
      if (context_.cancelToken().cancelled()) return cancelled();
      if (!compileTimed_ && fb.passed)
        if (auto ended = timeCompile()) return *ended;
      failuresInRow = fb.passed ? 0 : failuresInRow + 1;
      stagnantInRow = fb.passed && !improvedBest_ ? stagnantInRow + 1 : 0;
      last = fb;
    }
    return done();
  }

private:
  void log(const std::string& phase, const std::string& message, const std::string& level = "info") {
    context_.emit(protocol::LogParams{request_.jobId, level, phase, message});
  }

  // The brain's plan becomes the job's: the editor's tasks, and the math of the compute floor.
  void adoptPlan(const BrainPlan& p) {
    plan_ = p.plan;
    planMath_ = p.math;
    for (auto& t : plan_.tasks) t.status = p.generatable ? "active" : "skipped";
    context_.emit(plan_);
  }

  // BASELINE's eager timing, once, before the first verify (which reads it from the harness's
  // cache), while the first candidate builds in the worker's background; torch.compile's only after
  // the first candidate that passes (timeCompile): its compile took 41-55 s of the 75-94 s before
  // ResNet-101's and DenseNet121's first verified candidates (bench/results/kernelbench_2026-11-29_h200's
  // first_candidate_phases.md), no candidate's correctness needs it, and a candidate that failed
  // has no speedup to set against it (timed after ResNet-101's failed c1, it held c2 back 44.5 s on an
  // H200). A value when the job ended.
  std::optional<protocol::JobFinishedParams> timeReferenceBeside(const std::string& id, const Draft& d) {
    referenceTimed_ = true;
    std::string beside;
    if (std::error_code ec; std::filesystem::is_regular_file(d.dir / "candidate.cu", ec)) {
      json params{{"path", (d.dir / "candidate.cu").string()}, {"cacheDir", cacheDir()}, {"background", true}};
      WorkerReply started = worker_.call("buildCandidate", params, limits_.buildDeadline, context_.cancelToken());
      if (started.ok()) beside = id + "'s build";
      else if (started.error->code != "cancelled")
        log("VERIFY", "the build of " + id + " did not start beside the timing (" + started.error->message +
                          "); verify builds it", "warning");
    }
    protocol::JobFinishedParams finished;
    if (auto baseline = timeReference(request_, context_, worker_, limits_.baseline, finished, beside, false)) {
      // A baseline cached with torch.compile (an earlier job on this task) leaves nothing to time later.
      compileTimed_ = compileInVerify_ = !baseline->value("compile", json()).is_null();
      return std::nullopt;
    }
    if (context_.cancelToken().cancelled()) return cancelled();
    return finished;
  }

  // torch.compile timed beside eager (the harness's baseline, cached for the later verifies), after
  // the first verified candidate, which gets its speedup over torch.compile the way
  // the verifier computes it (its speedup over eager over torch.compile's), sent again. A job cut
  // here keeps what it verified; a failed timing leaves the candidate without that number.
  std::optional<protocol::JobFinishedParams> timeCompile() {
    compileTimed_ = true;
    protocol::JobFinishedParams finished;
    auto baseline = timeReference(request_, context_, worker_, limits_.baseline, finished);
    if (context_.cancelToken().cancelled()) return cancelled();
    if (!baseline) {
      log("BASELINE", "torch.compile was not timed: " + finished.message, "warning");
      return std::nullopt;
    }
    compileInVerify_ = true;
    const auto eager = number(baseline->value("eager", json::object()), "median_ms");
    const auto compiled = number(baseline->value("compile", json::object()), "median_ms");
    if (!eager || !compiled || *compiled <= 0) return std::nullopt;
    if (auto& event = verifiedBeforeCompile_) {
      event->candidate.speedupCompile = *event->candidate.speedupEager / (*eager / *compiled);
      log("BASELINE", event->candidate.id + ": " + fixed(*event->candidate.speedupCompile, 2) +
                          "x torch.compile (its speedup over eager, over torch.compile's)");
      context_.emit(*event);
    }
    return std::nullopt;
  }

  bool planPhase(const BaselineFacts& facts, bool replan) {
    context_.progress(replan ? "replanning" : "planning the kernels", 35);
    BrainPlan p = brain_.plan(facts, request_, replan);
    adoptPlan(p);
    log(replan ? "REPLAN" : "PLAN", std::to_string(plan_.tasks.size()) + " step(s) planned, " +
                                        std::to_string(plan_.uncovered.size()) + " operator(s) left in PyTorch");
    if (!p.generatable) {
      noPlanReason_ = "no candidate: " + p.reason;
      log("PLAN", noPlanReason_, "warning");
    }
    return p.generatable;
  }

  // `verdict`: what the kept forward's comment says of the program (see programEdit).
  protocol::CandidateParams candidateEvent(const std::string& id, const Draft& d, const std::string& library,
                                           const std::string& verdict = "",
                                           std::optional<double> speedupEager = std::nullopt) {
    protocol::CandidateParams c;
    c.jobId = request_.jobId;
    c.uri = request_.uri;
    c.candidate.id = id;
    c.candidate.taskId = plan_.tasks.empty() ? "" : plan_.tasks.front().id;
    c.candidate.title = d.title;
    c.candidate.range = brain_.editRange();
    c.candidate.documentVersion = request_.documentVersion;
    if (!library.empty()) programEdit(d, c.candidate, verdict, speedupEager);
    return c;
  }

  // A built candidate's edit and the program it imports: the .cu and the loader, written into the
  // candidate's folder (program/) and copied beside the model when the candidate is accepted.
  // The brain's "# StitchCUDA:" comment on what the program is gets `verdict` on the line below, so
  // that the kept model says whether its program was verified, where, and how fast it measured.
  void programEdit(const Draft& d, protocol::Candidate& c, const std::string& verdict,
                   std::optional<double> speedupEager) {
    const auto names = program::programNames(request_.options.kernelsFolder, request_.uri);
    std::ifstream in(d.dir / "candidate.cu", std::ios::binary);
    std::ostringstream cuda;
    cuda << in.rdbuf();
    const auto files = program::programFiles(names, cuda.str());
    std::string error;
    if (!in || !program::writeProgramFiles(d.dir / "program", files, error)) {
      log("VERIFY", "the program of " + c.id + " could not be written: " + (error.empty() ? "no candidate.cu" : error), "error");
      return;
    }
    c.newText = brain_.editText(names, speedupEager);
    if (const auto mark = c.newText.find("# StitchCUDA:"); mark != std::string::npos && !verdict.empty()) {
      const auto lineStart = c.newText.rfind('\n', mark) == std::string::npos ? 0 : c.newText.rfind('\n', mark) + 1;
      const auto lineEnd = c.newText.find('\n', mark);
      if (lineEnd != std::string::npos)
        c.newText.insert(lineEnd + 1, c.newText.substr(lineStart, mark - lineStart) + "# " + verdict + "\n");
    }
    for (const auto& f : files) c.files.push_back({f.path, (d.dir / "program" / f.path).string()});
  }

  // No GPU: compile for the CI architecture so a broken generator shows, and say what is missing.
  Feedback build(const std::string& id, const Draft& d) {
    Feedback fb;
    json params{{"path", (d.dir / "candidate.cu").string()}, {"cacheDir", cacheDir()}, {"arch", "sm_90"}};
    WorkerReply reply = worker_.call("buildCandidate", params, limits_.buildDeadline, context_.cancelToken());
    auto event = candidateEvent(id, d, "");
    if (!reply.ok()) {
      event.candidate.status = "failed";
      event.candidate.failedChecks = {reply.error->code};
      log("VERIFY", "build of " + id + " did not run: " + reply.error->message, "error");
    } else {
      const json b = reply.result->value("builds", json::array()).empty() ? json::object() : (*reply.result)["builds"][0];
      fb.built = b.value("ok", false);
      if (fb.built) {
        event = candidateEvent(id, d, b.value("library", ""), "compiled only: not verified or timed (no GPU here)");
        log("VERIFY", id + " compiled for sm_90 in " + fixed(b.value("seconds", 0.0), 1) +
                          " s; correctness and timing need a GPU, so it stays unverified");
      } else {
        event.candidate.status = "failed";
        event.candidate.failedChecks = {"build_error"};
        std::string first;
        for (const json& diag : b.value("diagnostics", json::array()))
          if (diag.value("severity", "") == "error") {
            // nvcc's own failures (no host compiler on PATH, a bad flag) name no file or line: null there.
            const json file = diag.value("file", json()), line = diag.value("line", json());
            const json message = diag.value("message", json());
            first = (file.is_string() ? file.get<std::string>() : std::string("nvcc")) +
                    (line.is_number_integer() ? ":" + std::to_string(line.get<int>()) : std::string()) + ": " +
                    (message.is_string() ? message.get<std::string>() : std::string());
            break;
          }
        log("VERIFY", id + " failed to compile: " + first, "error");
      }
    }
    lastVerdict_ = buildVerdict(reply, fb.built);
    keepVerdict(d.dir);
    context_.emit(event);
    builtAny_ = builtAny_ || fb.built;
    return fb;
  }

  Feedback verify(const std::string& id, const Draft& d) {
    Feedback fb;
    context_.progress("verifying " + id, std::nullopt);
    json params{{"reference", request_.taskFile.string()},
                {"candidate", d.dir.string()},
                {"cacheDir", cacheDir()},
                {"atol", request_.options.tolerance.atol},
                {"rtol", request_.options.tolerance.rtol},
                {"allowPrecision", request_.options.allowPrecision},
                {"precision", request_.options.precision},
                {"compileBaseline", compileInVerify_},
                {"timer", {{"maxSeconds", limits_.baseline.timingSeconds}}}};
    activity_ = {};
    WorkerReply reply = worker_.call("verify", params, limits_.verifyDeadline, context_.cancelToken());
    lastVerdict_ = verdictOf(reply);
    keepVerdict(d.dir);
    auto event = candidateEvent(id, d, "");
    if (!reply.ok() && reply.error->code == "cancelled") {
      log("VERIFY", "verification of " + id + " was cancelled; it stays unjudged");
      return fb;
    }
    if (!reply.ok() && reply.error->code == "deadline_exceeded" && activity_.verifierRunning)
      return verifierFailed(id, d, "verifier_error",
                            "its own work (" + activity_.stage + " stage) was still running at the deadline: " +
                                reply.error->message);
    // A crash, a hang or a sticky CUDA error happened while the candidate ran: its fault. Any other
    // error is the verifier's (internal_error, its own out of memory, the task) and says nothing
    // about the candidate.
    const bool candidateFault = !reply.ok() && (reply.error->code == "cuda_sticky_error" ||
                                                reply.error->code == "worker_crashed" ||
                                                reply.error->code == "deadline_exceeded");
    if (!reply.ok() && !candidateFault) return verifierFailed(id, d, reply.error->code, reply.error->message);
    if (!reply.ok()) {
      event.candidate.status = "failed";
      event.candidate.failedChecks = {reply.error->code};
      fb.failedChecks = event.candidate.failedChecks;
      log("VERIFY", id + " could not be judged: " + reply.error->message + " [" + reply.error->code + "]", "error");
      context_.emit(event);
      fixFeedback(id, {{reply.error->code, reply.error->message, reply.error->file, reply.error->line, {}}}, fb);
      return fb;
    }
    const json& v = *reply.result;
    const std::string status = v.value("status", "");
    if (status == "verifier_error" || status == "needs_gpu") {
      for (const json& f : v.value("findings", json::array()))
        if (profiling::isVerifierFailure(f.value("check", "")))
          return verifierFailed(id, d, f.value("check", status), f.value("message", ""));
      return verifierFailed(id, d, status, "the verdict names no finding");
    }
    const json build = v.value("build", json::object());
    const json timing = v.value("timing", json::object());
    const std::optional<double> speedupEager = number(timing, "speedup_vs_eager");
    fb.built = build.value("ok", true);
    fb.passed = v.value("passed", false);
    fb.failedChecks = v.value("failed_checks", std::vector<std::string>{});
    const auto speedupCompile = number(timing, "speedup_vs_compile");
    std::string verdict = fb.passed ? "verified on " + gpu_ : "failed verification on " + gpu_;
    if (!fb.passed && !fb.failedChecks.empty()) verdict += " (" + fb.failedChecks.front() + ")";
    if (fb.passed && speedupEager)
      verdict += ": " + fixed(*speedupEager, 2) + "x eager" +
                 (speedupCompile ? ", " + fixed(*speedupCompile, 2) + "x torch.compile" : std::string());
    event = candidateEvent(id, d, build.value("library", ""), verdict, speedupEager);
    event.candidate.failedChecks = fb.failedChecks;
    event.candidate.status = fb.passed ? "verified" : "failed";
    event.candidate.speedupEager = speedupEager;
    event.candidate.speedupCompile = speedupCompile;
    if (timing.contains("candidate")) fb.medianMs = number(timing["candidate"], "median_ms");
    fb.speedupEager = event.candidate.speedupEager;
    context_.emit(event);
    if (fb.passed && !compileInVerify_ && speedupEager && !speedupCompile) verifiedBeforeCompile_ = event;
    if (!fb.passed) {
      std::vector<profiling::FailedCheck> failed;
      for (const json& f : v.value("findings", json::array())) {
        profiling::FailedCheck c{f.value("check", ""), f.value("message", ""), std::nullopt, std::nullopt, {}};
        if (f.contains("file") && f["file"].is_string()) c.file = f["file"].get<std::string>();
        if (f.contains("line") && f["line"].is_number_integer()) c.line = f["line"].get<int>();
        // A wrong answer's distances from the fp64 truth (HARNESS.md): how far off the candidate is
        // beside how far off eager itself is tells rounding as eager's from a rounding of its own.
        const json data = f.value("data", json::object());
        for (const char* key : {"candidate_truth_err", "reference_truth_err"})
          if (data.is_object() && data.contains(key) && data[key].is_number())
            c.evidence.push_back({key, data[key].get<double>(), "abs err"});
        failed.push_back(std::move(c));
      }
      if (failed.empty())
        for (const auto& check : fb.failedChecks) failed.push_back({check, "the verdict gives no finding", {}, {}, {}});
      log("VERIFY", id + " failed: " + (failed.empty() ? "no check named" : failed.front().check + ": " + failed.front().message),
          "warning");
      fixFeedback(id, failed, fb);
      return fb;
    }
    log("VERIFY", id + " verified: " + (event.candidate.speedupEager ? fixed(*event.candidate.speedupEager, 2) : "?") +
                      "x vs eager, " +
                      (event.candidate.speedupCompile ? fixed(*event.candidate.speedupCompile, 2) + "x" : "n/a") +
                      " vs torch.compile");
    const bool newBest = !best_ || (fb.medianMs && best_->medianMs && *fb.medianMs < *best_->medianMs);
    improvedBest_ = !best_ || (newBest && *fb.medianMs < *best_->medianMs * (1 - limits_.stagnantBelowGain));
    if (newBest) best_ = Best{id, fb.medianMs, event.candidate.speedupEager};
    profile(id, d, timing, newBest, fb);
    return fb;
  }

  // PROFILE: the forward against its memory floor (the harness's timing), then the kernels
  // (trace, and ncu for a new best), the editor's profile and one diagnosis + one suggestion.
  void profile(const std::string& id, const Draft& d, const json& timing, bool newBest, Feedback& fb) {
    const json roof = timing.value("roofline", json::object());
    ProfileSubject subject{id, d.dir, newBest, std::nullopt, brain_.editRange()};
    auto floorMs = number(roof, "floor_ms");
    if (floorMs && fb.medianMs && *fb.medianMs > 0) {
      subject.floor = profiling::MemoryFloor{*floorMs * 1000, *fb.medianMs * 1000, roof.value("bytes", 0.0),
                                             roof.value("bandwidth_gbps", 0.0)};
      double floor = *floorMs;
      std::string which = "memory-roofline floor (" + fixed(*floorMs, 3) + " ms for " +
                          fixed(subject.floor->bytes / 1e6, 1) + " MB at " + fixed(subject.floor->bandwidthGBps, 0) +
                          " GB/s)";
      // Library calls (GEMMs, convolutions) are bound by math: their floor is each call's FLOPs
      // over the ceiling of the units it runs on (TF32 tensor cores for a TF32 call), when that is
      // the higher of the two.
      if (!planMath_.empty())
        if (const auto& ceilings = profiler_.ceilings(context_.cancelToken()))
          if (const auto compute = profiling::computeFloor(planMath_, *ceilings); compute && compute->seconds * 1e3 > floor) {
            floor = compute->seconds * 1e3;
            which = "compute-roofline floor (" + fixed(floor, 3) + " ms for " + compute->basis + ")";
          }
      const double frac = floor / *fb.medianMs;
      fb.floorFraction = frac;
      // The bench runner reads the trailing [roofline_fraction=...] of this line. Past the floor,
      // the floor's model misses how the work was done (or the timing is wrong): said, not hidden.
      log("PROFILE", id + " reaches " + fixed(frac * 100, 0) + "% of the " + which + " [roofline_fraction=" +
                         fixed(frac, 3) + "]" +
                         (frac > 1 ? "; faster than its floor: check the floor's assumptions and the timing" : ""),
          frac > 1 ? "warning" : "info");
    }
    if (auto params = profiler_.run(subject, plan_, context_.cancelToken(), fb)) context_.emit(std::move(*params));
    if (fb.verifier) {
      fb.diagnosis = fb.verifier->diagnosis + " " + fb.verifier->suggestion;
      log("PROFILE", id + " feedback " + describe(*fb.verifier));
    } else if (fb.floorFraction) {
      fb.diagnosis = "reaches " + fixed(*fb.floorFraction * 100, 0) + "% of the roofline floor";
    }
  }

  // The verifier could not judge the candidate: reported as the verifier's failure, the candidate
  // left unverified, and no advice to change it (the loop stops: the next one would meet the same).
  Feedback verifierFailed(const std::string& id, const Draft& d, const std::string& code, const std::string& message) {
    Feedback fb;
    auto event = candidateEvent(id, d, "");
    event.candidate.status = "unverified";
    event.candidate.failedChecks = {code};
    context_.emit(event);
    verifierFailure_ = code + ": " + message;
    log("VERIFY", "the verifier failed on " + id + ", not the candidate: " + verifierFailure_, "error");
    return fb;
  }

  // Fix mode: the first failed check and its standard remedy, for the brain and the log.
  void fixFeedback(const std::string& id, const std::vector<profiling::FailedCheck>& failed, Feedback& fb) {
    fb.verifier = profiling::failureFeedback(failed);
    if (!fb.verifier) return;
    fb.diagnosis = fb.verifier->diagnosis + " " + fb.verifier->suggestion;
    log("VERIFY", id + " feedback " + describe(*fb.verifier));
  }

  // "[optimize/memory_bound_at_ceiling] diagnosis → suggestion (metric=value unit, ...)"
  static std::string describe(const profiling::VerifierFeedback& f) {
    std::string evidence;
    for (const auto& e : f.evidence)
      evidence += (evidence.empty() ? "" : ", ") + e.metric + "=" +
                  (e.value != 0 && std::abs(e.value) < 0.01 ? protocol::significant(e.value)
                                                             : fixed(e.value, e.value >= 100 ? 0 : 2)) +
                  " " + e.unit;
    return "[" + f.mode + "/" + f.category + "] " + f.diagnosis + " → " + f.suggestion +
           (evidence.empty() ? "" : " (" + evidence + ")");
  }

  protocol::JobFinishedParams done() {
    for (auto& t : plan_.tasks) t.status = best_ ? "done" : "skipped";
    context_.emit(plan_);
    if (best_) {
      log("DONE", "best verified candidate: " + best_->id);
      const bool faster = best_->speedupEager && *best_->speedupEager > 1.0;
      return {request_.jobId, faster ? "improved" : "noImprovement", best_->id, best_->speedupEager,
              faster ? "verified " + best_->id + ", " + fixed(*best_->speedupEager, 2) + "x faster than eager"
                     : "verified " + best_->id + ", but it is not faster than eager"};
    }
    if (!cuda_)
      return finish("noImprovement", builtAny_ ? "planned, generated and compiled a candidate; timing and verification "
                                                 "need a GPU, and none is visible"
                                               : "planned, but no candidate compiled; timing and verification need a GPU, "
                                                 "and none is visible");
    if (!verifierFailure_.empty()) return finish("noImprovement", "the verifier failed: " + verifierFailure_);
    return finish("noImprovement", "no candidate passed verification");
  }

  protocol::JobFinishedParams cancelled() {
    return finish("cancelled", best_ ? "cancelled; the best verified candidate, " + best_->id + ", is kept"
                                     : "cancelled before any candidate was verified");
  }

  protocol::JobFinishedParams finish(const std::string& message) { return finish("noImprovement", message); }
  protocol::JobFinishedParams finish(const std::string& state, const std::string& message) {
    log("DONE", message);
    protocol::JobFinishedParams f{request_.jobId, state, std::nullopt, std::nullopt, message};
    if (best_) f.bestCandidateId = best_->id, f.speedupEager = best_->speedupEager;
    if (!cuda_ && state == "noImprovement" && message.find("GPU") == std::string::npos)
      f.message += "; timing and verification need a GPU, and none is visible";
    f.needsGpu = !cuda_ && state == "noImprovement";
    return f;
  }

  std::string cacheDir() const { return (request_.jobDir.parent_path() / ".baseline-cache").string(); }

  // The verdict a transition records: the harness's, or, for a reply that is an error, the failed
  // check it stands for; null when the step was cancelled (nothing was judged).
  static json verdictOf(const WorkerReply& reply) {
    if (reply.ok()) return *reply.result;
    if (reply.error->code == "cancelled") return json();
    return {{"passed", false}, {"status", "failed"}, {"failed_checks", {reply.error->code}},
            {"findings", {{{"check", reply.error->code}, {"message", reply.error->message}, {"evidence", "runtime"}}}}};
  }

  // Without a GPU only the build judges the candidate: needs_gpu when it compiled.
  static json buildVerdict(const WorkerReply& reply, bool built) {
    const std::string check = built ? "needs_gpu" : "build_error";
    json v{{"passed", false}, {"status", built ? "needs_gpu" : "failed"}, {"failed_checks", {check}}};
    if (reply.ok() && !reply.result->value("builds", json::array()).empty()) v["build"] = (*reply.result)["builds"][0];
    return v;
  }

  // The verdict beside the candidate (verdict.json), so it can be scored later without running it
  // again (stitchcuda/score of a job's candidate).
  void keepVerdict(const std::filesystem::path& dir) {
    if (lastVerdict_.is_null()) return;
    std::ofstream out(dir / "verdict.json");
    out << lastVerdict_.dump(1) << "\n";
  }

  // One CODE/REFINE step as a training transition, with its rubric reward (the harness's `score`).
  void record(const std::string& id, const Draft& d, const Feedback& fb) {
    if (!transitions_ || lastVerdict_.is_null()) return;
    Transition t;
    t.jobId = request_.jobId;
    t.step = ++steps_;
    t.candidateId = id;
    const bool refine = given_ && given_->verifier;  // feedback-driven; a variant tried blind is generation
    t.skill = refine ? "refine" : "generate";
    t.taskFile = request_.taskFile.string();
    std::ifstream task(request_.taskFile);
    t.taskSource.assign(std::istreambuf_iterator<char>(task), std::istreambuf_iterator<char>());
    t.plan = plan_;
    if (refine) t.feedback = profiling::feedbackToJson(*given_->verifier);
    if (refine && previous_) t.previousCandidateId = previous_->first;
    t.candidateDir = d.dir.string();
    t.title = d.title;
    t.variant = d.variant;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(d.dir, ec))
      if (e.is_regular_file() && (e.path().extension() == ".cu" || e.path().extension() == ".py")) {
        std::ifstream in(e.path());
        t.files[e.path().filename().string()].assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      }
    t.verdict = lastVerdict_;
    // What PROFILE (or the fix rules) said about it: the feedback it produced and the numbers behind it.
    if (fb.verifier || fb.floorFraction || !fb.metricsSource.empty()) {
      json p{{"feedback", fb.verifier ? profiling::feedbackToJson(*fb.verifier) : json()}, {"metricsSource", fb.metricsSource}};
      if (fb.bound) p["bound"] = *fb.bound;
      if (fb.achievedPct) p["achievedPct"] = *fb.achievedPct;
      if (fb.floorFraction) p["floorFraction"] = *fb.floorFraction;
      if (fb.medianMs) p["medianMs"] = *fb.medianMs;
      t.profile = p;
    }
    json params{{"reference", t.taskFile}, {"candidate", t.candidateDir}, {"verdict", t.verdict},
                {"verdictSource", "verified"}, {"cacheDir", cacheDir()},
                {"allowPrecision", request_.options.allowPrecision}, {"precision", request_.options.precision}};
    if (plan_.coverage) params["coverage"] = *plan_.coverage;
    if (refine && previous_) {
      params["previous"] = previous_->second.string();
      params["previousVerdict"] = previousVerdict_;
      params["feedback"] = *t.feedback;
    }
    auto scored = worker_.call("score", params, limits_.buildDeadline, context_.cancelToken());
    t.reward = scored.ok() ? *scored.result : json{{"error", {{"code", scored.error->code}, {"message", scored.error->message}}}};
    transitions_->append(t);
    previous_ = {id, d.dir};
    previousVerdict_ = lastVerdict_;
  }

  struct Best {
    std::string id;
    std::optional<double> medianMs;
    std::optional<double> speedupEager;
  };

  const JobRequest& request_;
  JobContext& context_;
  Worker& worker_;
  Brain& brain_;
  const LoopLimits& limits_;
  VerifyActivity& activity_;  // written by the worker's events during each call
  Clock::time_point start_;
  bool cuda_ = false;
  std::string gpu_;  // the device the candidates are verified on, as the harness names it
  bool replanned_ = false;
  bool referenceTimed_ = false;  // eager, timed beside the first candidate's build
  bool compileTimed_ = false;    // torch.compile's timing was tried, after the first verified candidate
  bool compileInVerify_ = false;  // it is cached: each verify gives the speedup over torch.compile
  std::optional<protocol::CandidateParams> verifiedBeforeCompile_;  // its speedup over it comes later
  bool improvedBest_ = false;  // the last verified candidate beat the best by more than noise
  bool builtAny_ = false;
  std::string noPlanReason_;
  std::string verifierFailure_;  // "code: message" once the verifier could not judge a candidate
  protocol::PlanParams plan_;
  std::optional<Best> best_;
  ProfilePhase profiler_;
  std::vector<profiling::LibraryMath> planMath_;  // the plan's library math, for the compute floor
  // --record-transitions: the training record of each CODE/REFINE step (TransitionLog.h).
  std::unique_ptr<TransitionLog> transitions_;
  std::optional<Feedback> given_;  // what the step being judged was given
  json lastVerdict_;               // its verdict (null: unjudged, not recorded)
  std::optional<std::pair<std::string, std::filesystem::path>> previous_;  // the last recorded candidate
  json previousVerdict_;
  int steps_ = 0;
};

}  // namespace

protocol::JobFinishedParams OptimizeLoop::run(const JobRequest& request, JobContext& context) {
  VerifyActivity activity;
  auto worker = workers_([&](const json& event) {
    if (event.value("event", "") == "verifyStage") {
      activity = {event.value("stage", ""), event.value("running", "") == "verifier"};
      return;
    }
    if (event.value("event", "") != "log") return;
    context.emit(protocol::LogParams{request.jobId, event.value("level", "info"), "", event.value("message", "")});
  });
  protocol::JobFinishedParams finished;
  auto facts = runBaselinePhase(request, context, *worker, limits_.baseline, finished, /*withTiming=*/false);
  if (!facts) return finished;
  auto brain = brains_();
  return Run(request, context, *worker, *brain, limits_, activity).go(*facts);
}

}  // namespace stitch::agents::loop
