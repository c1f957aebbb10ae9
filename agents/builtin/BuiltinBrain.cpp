// The built-in brain; see BuiltinBrain.h.
#include "agents/builtin/BuiltinBrain.h"
#include "agents/builtin/emit/LibraryEmitter.h"
#include "agents/builtin/normalize/GraphNormalize.h"
#include "agents/builtin/plan/MemoryFormat.h"

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>
#include <tuple>

namespace stitch::agents::builtin {
namespace {

std::string fileName(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string shortOp(const std::string& op) { return op.rfind("aten::", 0) == 0 ? op.substr(6) : op; }

// "2 generated kernel(s) + 1 cuBLASLt call": what a candidate is made of.
std::string stepsText(const Plan& plan) {
  std::size_t kernels = 0, gemms = 0, convs = 0;
  for (const auto& k : plan.kernels) {
    if (!k.library) ++kernels;
    else if (k.library->kind == LibraryCall::Kind::Gemm) ++gemms;
    else ++convs;
  }
  std::string s;
  auto part = [&](std::size_t n, const char* what) {
    if (n) s += (s.empty() ? "" : " + ") + std::to_string(n) + " " + what;
  };
  part(kernels, "generated kernel(s)");
  part(gemms, "cuBLASLt call(s)");
  part(convs, "cuDNN call(s)");
  return s;
}

}  // namespace

std::vector<Variant> BuiltinBrain::variants() {
  return {{256, 4, 1}, {512, 4, 1}, {128, 4, 2}, {1024, 4, 1}, {256, 4, 4}, {256, 1, 1}};
}

loop::BrainPlan BuiltinBrain::plan(const BaselineFacts& facts, const JobRequest& request, bool replan) {
  loop::BrainPlan out;
  out.plan.jobId = request.jobId;
  out.plan.uri = request.uri;
  auto g = parseNormalized(facts.graph);
  if (!g) {
    out.reason = g.error().message;
    return out;
  }
  PlannerOptions options;
  options.fuse = !replan;
  const auto& allowed = request.options.allowPrecision;
  options.tensorCores = std::find(allowed.begin(), allowed.end(), "tf32") != allowed.end();
  // Each library call in eager's precision for it, unless the job asks for exact fp32.
  if (request.options.precision == "fp32") {
    options.precisionWhy = PrecisionWhy::JobFp32;
  } else if (facts.precision) {
    options.convTf32 = facts.precision->convTf32;
    options.matmulTf32 = facts.precision->matmulTf32;
    options.precisionWhy = PrecisionWhy::Eager;
  }
  // The loop replans after failures in a row; where they missed the tolerance in eager's TF32,
  // another fusion rounds no closer to it than the last did (MobileNetV1 on an H200: the first
  // candidate, its NCHW layout trial and the unfused replan all in TF32, all 1-7% further from the
  // fp64 truth than eager), while exact fp32 is closer to the truth than either.
  const bool fp32Replan = replan && tf32Missed_ && (options.convTf32 || options.matmulTf32);
  // The replan keeps the fusion then: unfused, MobileNetV1's fp32 replan ran 798 kernels where
  // the fused plan has 121.
  if (fp32Replan) {
    options.fuse = true;
    options.tensorCores = options.convTf32 = options.matmulTf32 = false;
    options.precisionWhy = PrecisionWhy::Unstated;
  }
  if (!replan) tf32Missed_ = false;
  options.layout = request.options.layout == "nchw"            ? LayoutMode::Nchw
                   : request.options.layout == "channels_last" ? LayoutMode::ChannelsLast
                                                               : LayoutMode::Auto;
  options.inPyTorch = inPyTorch_;
  layout_.reset(options.layout);
  eager_.reset();
  replanned_ = replan;
  tried_.clear();
  lastPick_.reset();
  capture_ = Capture{std::move(g).value(), facts.graph, facts.lineTimesUs};
  options_ = options;
  layOut(out);
  if (plan_.kernels.empty()) {
    out.reason = "no operator of this forward has a generated kernel";
    return out;
  }
  std::ifstream in(request.taskFile);
  std::stringstream text;
  text << in.rdbuf();
  auto f = findForward(text.str(), facts.modelClass);
  if (!f) {
    out.reason = fileName(request.taskFile.string()) + ": " + f.error().message;
    return out;
  }
  forward_ = f.value();
  out.generatable = true;
  return out;
}

void BuiltinBrain::layOut(loop::BrainPlan& out) {
  // The layout pass adds conversions to the graph the program is made from; coverage counts the
  // user's operators.
  auto laid = planLaidOut(capture_->graph, capture_->json, capture_->lineTimesUs, options_);
  graph_ = std::move(laid.graph);
  plan_ = std::move(laid.plan);
  out.plan.tasks.clear();
  out.plan.uncovered.clear();
  out.math.clear();
  for (std::size_t i : plan_.priority) {
    const PlannedKernel& k = plan_.kernels[i];
    protocol::PlanTask t;
    t.id = k.id;
    std::string ops;
    for (const auto& o : k.operators) ops += (ops.empty() ? "" : " + ") + shortOp(o);
    if (k.library)
      t.title = std::string(k.library->kind == LibraryCall::Kind::Gemm ? "cuBLASLt: " : "cuDNN: ") + ops;
    else
      t.title = (k.operators.size() > 1 ? "Fuse " : "Generate ") + ops;
    if (k.firstLine > 0) t.range = {{k.firstLine - 1, 0}, {k.lastLine, 0}};
    t.operators = k.operators;
    t.technique = k.technique;
    t.expectedGainPct = k.expectedGainPct;
    out.plan.tasks.push_back(std::move(t));
  }
  for (const auto& k : plan_.kernels)
    if (k.library) out.math.push_back(k.library->math(plan_.tensorCores));
  for (const auto& u : plan_.uncovered)
    out.plan.uncovered.push_back(shortOp(u.op) + (u.source ? " (line " + std::to_string(u.source->line) + ")" : "") +
                                 ": " + u.reason);
  out.plan.coverage = planCoverage(capture_->graph, plan_, capture_->lineTimesUs);
  planned_ = out;
}

std::optional<std::string> BuiltinBrain::leaveFailedCall(const loop::Feedback& last) {
  static const std::regex returned(R"(returned (\d+))");
  std::smatch m;
  if (!capture_ || !std::regex_search(last.diagnosis, m, returned)) return std::nullopt;
  const auto step = libraryFailureStep(std::stoll(m[1].str()));
  if (!step || *step >= plan_.kernels.size() || !plan_.kernels[*step].library) return std::nullopt;
  const PlannedKernel& k = plan_.kernels[*step];
  const int status = static_cast<int>(std::stoll(m[1].str()) % kStepStatus);
  const std::string library = status >= 20000 ? "cuDNN" : "cuBLASLt";
  const std::string code = library + " status " + std::to_string(status - (status >= 20000 ? 20000 : 10000));
  inPyTorch_[k.library->nodeIds.front()] =
      "its " + library + " call (step " + k.id + ") had no form that ran on the GPU (" + code + "); it stays in PyTorch";
  const std::string what = "step " + k.id + "'s " + shortOp(k.operators.front()) + " left in PyTorch (" + code + ")";
  options_.inPyTorch = inPyTorch_;
  layOut(planned_);
  return what;
}

std::optional<std::size_t> BuiltinBrain::layoutStep(const std::optional<loop::Feedback>& last,
                                                    std::optional<loop::Feedback>& judged, bool& planChanged) {
  if (!last || !graph_) return std::nullopt;
  if (layout_.trying()) {
    auto decision = layout_.decide(*last);
    options_.layout = decision.mode;
    options_.layoutMeasured = layout_.note();
    layOut(planned_);
    planChanged = true;
    judged = std::move(decision.judged);
    return std::nullopt;
  }
  const auto before = graph_->layout.channelsLast;
  if (!layout_.opens(last, !before.empty(), plan_.usesTf32()) || !lastPick_) return std::nullopt;
  const PlannerOptions previous = options_;
  auto saved = std::make_tuple(graph_, plan_, planned_);
  options_.layout = layout_.begin(*last, !before.empty());
  options_.layoutMeasured = layout_.note();
  layOut(planned_);
  if (graph_->layout.channelsLast == before) {  // no convolution changes format: nothing to measure
    layout_.abandon();
    options_ = previous;
    std::tie(graph_, plan_, planned_) = std::move(saved);
    return std::nullopt;
  }
  planChanged = true;
  return lastPick_;
}

std::optional<std::size_t> BuiltinBrain::eagerOpStep(const std::optional<loop::Feedback>& last,
                                                     std::optional<loop::Feedback>& judged, bool& planChanged,
                                                     std::string& left) {
  if (!last || !graph_ || !capture_) return std::nullopt;
  if (eager_.trying()) {
    if (!eager_.keep(*last, judged)) {
      for (const auto& [node, why] : eager_.left()) inPyTorch_.erase(node);
      options_.inPyTorch = inPyTorch_;
      layOut(planned_);
      planChanged = true;
      left = "our convolution kept (with eager's the candidate measured " +
             std::string(last->passed ? "no faster" : "failing") + ")";
    }
    return std::nullopt;
  }
  if (!eager_.open() || layout_.trying() || !judged || !judged->passed || !judged->medianMs || !lastPick_)
    return std::nullopt;
  eager_.close();  // one look per plan, at the first verified candidate in the layout kept
  const auto slow = slowerThanEager(*graph_, plan_, capture_->lineTimesUs,
                                    stepTimesUs(plan_, judged->launches, judged->tracedForwards));
  if (slow.empty()) return std::nullopt;
  std::map<int, std::string> nodes;
  std::string steps;
  for (const auto& s : slow)
    for (std::size_t i = 0; i < s.steps.size(); ++i) {
      nodes[s.nodes[i]] = s.reason();
      steps += (steps.empty() ? "step " : ", ") + plan_.kernels[s.steps[i]].id;
    }
  auto saved = std::make_tuple(graph_, plan_, planned_);
  for (const auto& [node, why] : nodes) inPyTorch_.emplace(node, why);
  options_.inPyTorch = inPyTorch_;
  layOut(planned_);
  if (plan_.kernels.empty()) {  // nothing of the forward would be compiled: eager itself
    for (const auto& [node, why] : nodes) inPyTorch_.erase(node);
    options_.inPyTorch = inPyTorch_;
    std::tie(graph_, plan_, planned_) = std::move(saved);
    return std::nullopt;
  }
  eager_.begin(*judged, std::move(nodes));
  planChanged = true;
  left = steps + "'s convolution in PyTorch (measured slower than eager's)";
  return lastPick_;
}

// The refine step's one decision from the Verifier's diagnosis (protocol/FEEDBACK.md): which
// untried variant comes next, or none when launch variants cannot help.
std::optional<std::size_t> BuiltinBrain::chooseVariant(const std::optional<loop::Feedback>& last) const {
  const auto all = variants();
  std::vector<std::size_t> untried;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (!tried_.count(i)) untried.push_back(i);
  if (untried.empty()) return std::nullopt;
  if (!last || !last->verifier) return untried.front();
  const std::string& category = last->verifier->category;
  auto best = [&](auto key) {
    return *std::max_element(untried.begin(), untried.end(), [&](std::size_t a, std::size_t b) {
      return key(all[a]) < key(all[b]) || (key(all[a]) == key(all[b]) && a > b);  // ties: the listed order
    });
  };
  auto moreInFlight = [](const Variant& v) { return v.vec * v.items; };
  // At the bandwidth ceiling the fused whole forward already moves each byte once; a launch
  // variant only reshuffles the same traffic, so the search ends with what it has, unless eager
  // moves the same bytes faster (mish at 90% of the floor, eager's kernel at 100%): then more
  // bytes in flight per thread.
  if (category == "memory_bound_at_ceiling" || category == "memory_floor_reached")
    return last->speedupEager && *last->speedupEager < 1.0 ? std::optional(best(moreInFlight)) : std::nullopt;
  // Too few bytes in flight: more vector chunks per thread first.
  if (category == "below_memory_floor" || category == "stall_long_scoreboard" ||
      category.ends_with("_bound_below_ceiling"))
    return best(moreInFlight);
  // Fewer blocks than SMs: the most blocks, i.e. the least work per block.
  if (category == "grid_too_small") return best([](const Variant& v) { return -v.block * v.vec * v.items; });
  // Blocks per SM capped by the block limit: larger blocks.
  if (category == "occupancy_limited") return best([](const Variant& v) { return v.block; });
  return untried.front();
}

std::optional<loop::Draft> BuiltinBrain::next(const std::optional<loop::Feedback>& last,
                                              const std::filesystem::path& dir, std::string& error) {
  const auto all = variants();
  std::optional<std::size_t> pick;
  bool fp32Retry = false;
  // A failure other than a wrong answer (say a misaligned access) is retried with scalar
  // accesses; a wrong answer or a build error is the same in every variant, so stop. A wrong
  // answer from a candidate whose library calls may take their 3xTF32 form is retried once in
  // fp32, same variant: 3xTF32 keeps about 2^-22 of each product where fp32 keeps 2^-24, and over
  // long sums of off-centre inputs that can exceed fp32's tolerance (a 3072^3 matmul on the
  // verifier's randn*3+0.5 trial: 0.029 off on outputs near 10^3, H100). So is one whose library
  // calls run in TF32 as eager does: another TF32 algorithm than eager's rounds otherwise, and
  // exact fp32 is closer to the truth than either; or one whose TF32 the verifier did not excuse
  // (precision_downgrade: it saw the reference run those ops otherwise).
  // A library call none of whose forms ran on the GPU (its step named in the program's status)
  // is left to PyTorch, and the same variant tried as a partial candidate.
  std::string retryWhy, left;
  bool planChanged = false;
  // What this step acts on: the last verdict, or after a layout trial the kept layout's.
  std::optional<loop::Feedback> judged = last;
  if (last && !last->passed && plan_.usesTf32()) {
    const auto& f = last->failedChecks;
    tf32Missed_ = tf32Missed_ || std::find(f.begin(), f.end(), "output_mismatch") != f.end() ||
                  std::find(f.begin(), f.end(), "buffer_mismatch") != f.end();
  }
  if ((pick = layoutStep(last, judged, planChanged))) {
    // the trial's candidate: the other layout, the same variant
  } else if ((pick = eagerOpStep(last, judged, planChanged, left))) {
    // the trial's candidate: eager's convolution where ours measured slower, the same variant
  } else if (judged && !judged->passed && !judged->failedChecks.empty()) {
    const auto& failed = judged->failedChecks;
    auto failedCheck = [&](const char* c) { return std::find(failed.begin(), failed.end(), c) != failed.end(); };
    const bool eagerTf32 = plan_.usesTf32();
    // Running statistics gathered after TF32 convolutions carry their rounding as outputs do: a
    // deep network's (ResNet-101 in training mode on an H100) moved beyond the tolerance of eager's
    // own TF32 statistics where its outputs passed.
    const bool tf32Statistics = eagerTf32 && failedCheck("buffer_mismatch");
    if (lastPick_ &&
        (failedCheck("output_mismatch") || tf32Statistics || (eagerTf32 && failedCheck("precision_downgrade"))) &&
        plan_.toExactFp32()) {
      // Planned in exact fp32 from now on, so that the plan made again (an operator left to
      // PyTorch) keeps it, and the loop's compute floor is the fp32 one.
      options_.tensorCores = options_.convTf32 = options_.matmulTf32 = false;
      options_.precisionWhy = PrecisionWhy::Unstated;
      layOut(planned_);
      planChanged = true;
      pick = lastPick_;
      fp32Retry = true;
      retryWhy = failedCheck("output_mismatch") ? (eagerTf32 ? "eager's TF32 form missed the tolerance"
                                                             : "the 3xTF32 form missed the tolerance")
                 : tf32Statistics                 ? "eager's TF32 form moved the running statistics beyond the tolerance"
                                                  : "the verifier did not excuse its TF32";
    } else if (auto why = leaveFailedCall(*judged)) {
      pick = lastPick_.value_or(0);
      left = *why;
      planChanged = true;
    } else {
      for (const auto& c : failed)
        if (c == "output_mismatch" || c == "build_error" || c == "nan_or_inf" || c == "pytorch_compute") return std::nullopt;
      if (!tried_.count(all.size() - 1)) pick = all.size() - 1;
    }
  } else if (tried_.empty() || std::any_of(plan_.kernels.begin(), plan_.kernels.end(),
                                           [](const PlannedKernel& k) { return !k.library; })) {
    pick = chooseVariant(judged);
  }  // else: library calls only, which no launch variant changes
  if (!graph_ || !pick) return std::nullopt;
  tried_.insert(*pick);
  lastPick_ = pick;
  const Variant v = all[*pick];
  const bool fp32Replan = replanned_ && tf32Missed_ && !plan_.usesTf32();
  const std::string title = stepsText(plan_) + " for " + fileName(graph_->task) +
                            (fp32Replan  ? ", fp32 (eager's TF32 form missed the tolerance)"
                             : replanned_ ? ", unfused"
                                          : "") +
                            (plan_.rows ? ", any batch size" : "") + ", " + v.name() +
                            (fp32Retry ? ", fp32 (" + retryWhy + ")" : "") + (left.empty() ? "" : ", " + left) +
                            (layout_.titlePart().empty() ? "" : ", " + layout_.titlePart());
  auto c = generateCandidate(*graph_, plan_, forward_, v, title);
  if (!c) {
    error = c.error().message;
    return std::nullopt;
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::ofstream(dir / "candidate.cu") << c.value().cuda;
  std::ofstream(dir / "model_new.py") << c.value().python;
  if (ec || !std::filesystem::exists(dir / "model_new.py")) {
    error = "cannot write the candidate into " + dir.string();
    return std::nullopt;
  }
  loop::Draft draft{title, v.name(), dir, std::nullopt};
  if (planChanged) draft.plan = planned_;
  return draft;
}

protocol::Range BuiltinBrain::editRange() const { return {{forward_.bodyFirst - 1, 0}, {forward_.bodyLast, 0}}; }

std::string BuiltinBrain::editText(const program::ProgramNames& program, std::optional<double> speedupEager) const {
  return graph_ ? forwardReplacement(*graph_, plan_, forward_, program, speedupEager) : "";
}

}  // namespace stitch::agents::builtin
