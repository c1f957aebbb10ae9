// Headless optimize; see HeadlessOptimize.h.
#include "server/HeadlessOptimize.h"

#include "protocol/StitchTypes.h"
#include "server/HostShutdown.h"
#include "server/JobManager.h"
#include "server/Logger.h"
#include "server/ProgramExport.h"
#include "server/Uri.h"

#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <unistd.h>

namespace stitch::server {
namespace {

struct Args {
  std::string file;
  std::optional<std::string> out;
  bool json = false;
  bool help = false;
  std::string brain = "builtin";
  std::optional<std::string> model;
  std::optional<std::string> baseUrl;
  std::vector<std::string> allowPrecision;
  std::string precision = "eager";
  std::string kernelsFolder = "stitchcuda_kernels";
  protocol::Budget budget;  // --iterations, --wall-seconds: the loop's budget (then the best verified is kept)
  protocol::Tolerance tolerance;
  std::optional<int> gpu;
};

const char* kOptimizeUsage = R"(usage: stitchcuda optimize FILE [options]   (every option also as --name=value)
  --out DIR                 report.md, report.json, and what Accept writes: the model and its program folder
  --kernels-folder NAME     the program folder's name (a Python package name; default stitchcuda_kernels)
  --json                    the job's events as JSON lines
  --brain builtin|openai|anthropic   --model NAME   --base-url URL
  --atol A  --rtol R        the verifier's tolerances (default 1e-4 each)
  --gpu N                   the CUDA device to run on
  --iterations N  --wall-seconds S   the job's budget
  --allow-precision tf32|fp16|bf16 (repeatable)   --precision eager|fp32
  host options: --jobs-dir DIR --python PYTHON --ncu-runs N --log FILE --log-level L --record-transitions DIR,
  and the LLM options of `stitchcuda --help`
exit: 0 a verified improvement, 3 none, 4 no GPU to verify on (candidates only compiled), 1 error, 2 usage
)";

// A number from `text` of at least `min` (strictly above when `strict`), or nullopt.
std::optional<double> number(const std::string& text, double min, bool strict) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(strict ? v > min : v >= min)) return std::nullopt;
  return v;
}

std::optional<Args> parseArgs(const std::vector<std::string>& args) {
  Args a;
  auto fail = [](const std::string& message) -> std::optional<Args> {
    std::cerr << "stitchcuda optimize: " << message << "\n";
    return std::nullopt;
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      a.help = true;
      return a;
    }
    if (arg == "--json") {
      a.json = true;
      continue;
    }
    if (arg.empty() || arg[0] != '-') {
      if (!a.file.empty()) return fail("one FILE only; unexpected " + arg);
      a.file = arg;
      continue;
    }
    // Every option takes a value, as `--name value` or `--name=value`.
    const auto eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    std::string value;
    if (eq != std::string::npos) value = arg.substr(eq + 1);
    else if (i + 1 < args.size()) value = args[++i];
    else return fail(name + " takes a value");
    if (name == "--out") a.out = value;
    else if (name == "--brain") a.brain = value;
    else if (name == "--kernels-folder") {
      if (!protocol::isPackageName(value)) return fail("--kernels-folder takes a Python package name, not " + value);
      a.kernelsFolder = value;
    } else if (name == "--model") a.model = value;
    else if (name == "--base-url") a.baseUrl = value;
    else if (name == "--allow-precision") {
      if (!protocol::isPrecision(value)) return fail("--allow-precision takes tf32, fp16 or bf16, not " + value);
      a.allowPrecision.push_back(value);
    } else if (name == "--precision") {
      if (!protocol::isPrecisionMode(value)) return fail("--precision takes eager or fp32, not " + value);
      a.precision = value;
    } else if (name == "--iterations" || name == "--wall-seconds") {
      const auto v = number(value, 0, true);
      if (!v) return fail(name + " takes a positive number");
      if (name == "--iterations") a.budget.iterations = static_cast<int>(*v);
      else a.budget.wallSeconds = *v;
    } else if (name == "--atol" || name == "--rtol") {
      const auto v = number(value, 0, false);
      if (!v) return fail(name + " takes a number >= 0");
      (name == "--atol" ? a.tolerance.atol : a.tolerance.rtol) = *v;
    } else if (name == "--gpu") {
      const auto v = number(value, 0, false);
      if (!v || *v != static_cast<int>(*v)) return fail("--gpu takes a device index (0, 1, ...)");
      a.gpu = static_cast<int>(*v);
    } else return fail("unexpected argument " + arg + "\n" + kOptimizeUsage);
  }
  if (a.file.empty()) return fail(std::string("which file?\n") + kOptimizeUsage);
  return a;
}

// One line of terminal text per event; the plan and candidates get a line each.
std::string describe(const agents::JobEvent& event) {
  struct {
    std::string operator()(const protocol::PlanParams& p) const {
      std::string s = "plan: " + std::to_string(p.tasks.size()) + " task(s)";
      for (const auto& t : p.tasks) s += "\n  - " + t.title + " [" + t.technique + "]";
      if (p.coverage)
        s += "\n  covered: " + std::to_string(p.coverage->coveredOperators) + " of " + std::to_string(p.coverage->operators) +
             " operator(s), " + std::to_string(static_cast<int>(p.coverage->timeShare * 100 + 0.5)) + "% of the reference's " +
             (p.coverage->timeBasis == "profile" ? "measured time" : "time (estimated from bytes moved)");
      if (!p.uncovered.empty()) {
        s += "\n  left in PyTorch:";
        for (const auto& u : p.uncovered) s += "\n    " + u;
      }
      return s;
    }
    std::string operator()(const protocol::CandidateParams& p) const {
      return "candidate " + p.candidate.id + ": " + p.candidate.title + " (" + p.candidate.status + ")";
    }
    std::string operator()(const protocol::ProfileParams& p) const {
      std::ostringstream s;
      s << "profile of the " << p.subject << ": " << p.totalGpuTimeUs / 1000.0 << " ms of "
        << (p.timeKind == "cpu" ? "CPU" : "GPU") << " time over "
        << p.lines.size() << " source line(s)";
      for (const auto& l : p.lines)
        if (!l.inlineText.empty()) s << "\n  line " << l.line + 1 << ": " << l.inlineText;
      return s.str();
    }
    std::string operator()(const protocol::LogParams& p) const {
      return (p.phase.empty() ? "" : "[" + p.phase + "] ") + (p.level == "info" ? "" : p.level + ": ") + p.message;
    }
    std::string operator()(const protocol::JobFinishedParams& p) const {
      return "finished: " + p.state + (p.message.empty() ? "" : " — " + p.message);
    }
  } visitor;
  return std::visit(visitor, event);
}

// When the job's milestones happened, in seconds from its start: `stitchcuda bench` reads them.
struct Timing {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::optional<std::string> firstVerifiedCandidate;
  std::optional<double> firstVerifiedSeconds;

  double since() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); }
  void observe(const agents::JobEvent& event) {
    const auto* c = std::get_if<protocol::CandidateParams>(&event);
    if (c && c->candidate.status == "verified" && !firstVerifiedCandidate) {
      firstVerifiedCandidate = c->candidate.id;
      firstVerifiedSeconds = since();
    }
  }
  protocol::json toJson() const {
    protocol::json j{{"seconds", since()}, {"firstVerifiedCandidate", nullptr}, {"firstVerifiedSeconds", nullptr}};
    if (firstVerifiedCandidate) j["firstVerifiedCandidate"] = *firstVerifiedCandidate;
    if (firstVerifiedSeconds) j["firstVerifiedSeconds"] = *firstVerifiedSeconds;
    return j;
  }
};

void writeReport(const std::filesystem::path& dir, const agents::JobState& job, const Timing& timing) {
  std::filesystem::create_directories(dir);
  protocol::json report{{"job", job.summary()},
                        {"candidates", job.candidates},
                        {"log", job.recentLog},
                        {"timing", timing.toJson()}};
  if (job.plan) report["plan"] = *job.plan;
  for (const auto& [subject, p] : job.profiles) report["profiles"][subject] = p;
  if (job.finished) report["finished"] = *job.finished;
  std::ofstream(dir / "report.json") << report.dump(2) << "\n";

  std::ofstream md(dir / "report.md");
  md << "# StitchCUDA report\n\n"
     << "- file: `" << job.uri << "`\n- job: `" << job.jobId << "` (log: `" << job.logPath << "`)\n"
     << "- result: **" << job.state() << "**" << (job.finished ? " — " + job.finished->message : "") << "\n\n";
  if (job.plan) {
    md << "## Plan\n\n| task | technique | operators |\n|---|---|---|\n";
    for (const auto& t : job.plan->tasks) {
      std::string ops;
      for (const auto& o : t.operators) ops += (ops.empty() ? "" : ", ") + o;
      md << "| " << t.title << " | " << t.technique << " | " << ops << " |\n";
    }
    md << "\n";
  }
  md << "## Candidates\n\n";
  if (job.candidates.empty()) md << "None.\n";
  for (const auto& c : job.candidates) md << "- " << c.id << " " << c.title << ": " << c.status << "\n";
  md << "\n## Log\n\n";
  for (const auto& l : job.recentLog) md << "- " << (l.phase.empty() ? "" : "[" + l.phase + "] ") << l.message << "\n";
}

}  // namespace

int runHeadlessOptimize(const HostConfig& config, const Server::RunnerFactory& factory,
                        const std::vector<std::string>& rawArgs) {
  auto args = parseArgs(rawArgs);
  if (!args) return 2;
  if (args->help) {
    std::cout << kOptimizeUsage;
    return 0;
  }
  std::error_code ec;
  auto path = std::filesystem::absolute(args->file, ec);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << "stitchcuda optimize: cannot read " << args->file << "\n";
    return 1;
  }
  std::ostringstream text;
  text << in.rdbuf();

  boost::asio::thread_pool pool(2);
  std::mutex m;
  std::condition_variable cv;
  std::optional<protocol::JobFinishedParams> finished;
  bool tty = !args->json && ::isatty(1);
  Timing timing;
  JobManager jobs(
      pool, config.jobsDir, [&](const protocol::OptimizeParams& p) { return factory(p, config); },
      [&](const agents::JobEvent& event) {
        std::lock_guard lock(m);
        timing.observe(event);
        if (args->json)
          std::cout << protocol::serialize(protocol::json{{"method", agents::methodOf(event)},
                                                          {"params", agents::paramsOf(event)}})
                    << std::endl;
        else
          std::cout << (tty ? "\r\033[K" : "") << describe(event) << std::endl;
      });

  // SIGTERM, SIGINT, SIGHUP: the job is cancelled; the loop keeps its best verified candidate, the log
  // closes as cancelled, and the report below is written before the process exits.
  StopOnSignal stopOnSignal([&jobs](int) { jobs.cancelAll(); });

  JobManager::StartRequest request;
  request.uri = pathToUri(path.string());
  request.fileName = path.filename().string();
  request.text = text.str();
  request.options.textDocument.uri = request.uri;
  request.options.brain = args->brain;
  request.options.model = args->model;
  request.options.baseUrl = args->baseUrl;
  request.options.allowPrecision = args->allowPrecision;
  request.options.precision = args->precision;
  request.options.budget = args->budget;
  request.options.kernelsFolder = args->kernelsFolder;
  request.options.tolerance = args->tolerance;
  request.options.gpu = args->gpu;
  if (tty)
    request.progress = [&](const std::string& message, std::optional<int>) {
      std::lock_guard lock(m);
      std::cout << "\r\033[K… " << message << std::flush;
    };
  request.onFinished = [&](const protocol::JobFinishedParams& f) {
    std::lock_guard lock(m);
    finished = f;
    cv.notify_all();
  };
  std::string id;
  try {
    id = jobs.start(std::move(request));
  } catch (const std::exception& e) {
    std::cerr << "stitchcuda optimize: " << e.what() << "\n";
    return 1;
  }
  {
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return finished.has_value(); });
  }
  pool.join();
  auto state = jobs.state(id);
  std::filesystem::path outDir = args->out ? std::filesystem::path(*args->out) : config.jobsDir / id;
  try {
    writeReport(outDir, *state, timing);
    if (!args->json) std::cout << "report: " << (outDir / "report.md").string() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "stitchcuda optimize: cannot write the report to " << outDir << ": " << e.what() << "\n";
    return 1;
  }
  // --out also gets what Accept would write: the model with its edit and the program folder.
  if (const auto* kept = args->out ? keptCandidate(*state) : nullptr) {
    std::string error;
    const auto model = exportProgram(outDir, *kept, path.filename().string(), text.str(), error);
    if (!model) {
      std::cerr << "stitchcuda optimize: cannot write the program to " << outDir << ": " << error << "\n";
      return 1;
    }
    if (!args->json)
      std::cout << "program: " << model->string() << " and " << (outDir / args->kernelsFolder).string() << "/ (candidate "
                << kept->id << ", " << kept->status << ")\n";
  }
  if (int signal = terminationSignal()) return 128 + signal;  // as a shell reports a process a signal ended
  if (finished->state == "improved") return 0;
  if (finished->state == "noImprovement") return finished->needsGpu ? 4 : 3;
  return 1;
}

}  // namespace stitch::server
