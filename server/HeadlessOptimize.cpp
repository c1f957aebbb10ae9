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
  std::string brain = "builtin";
  std::optional<std::string> model;
  std::optional<std::string> baseUrl;
  std::vector<std::string> allowPrecision;
  std::string precision = "eager";
  std::string kernelsFolder = "stitchcuda_kernels";
  protocol::Budget budget;  // --iterations, --wall-seconds: the loop's budget (then the best verified is kept)
};

// A positive number from `text`, or nullopt.
std::optional<double> positiveNumber(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(v > 0)) return std::nullopt;
  return v;
}

std::optional<Args> parseArgs(const std::vector<std::string>& args) {
  Args a;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--json") a.json = true;
    else if (arg == "--out" && i + 1 < args.size()) a.out = args[++i];
    else if (arg.rfind("--out=", 0) == 0) a.out = arg.substr(6);
    else if (arg == "--brain" && i + 1 < args.size()) a.brain = args[++i];
    else if (arg.rfind("--brain=", 0) == 0) a.brain = arg.substr(8);
    else if (arg == "--kernels-folder" && i + 1 < args.size()) a.kernelsFolder = args[++i];
    else if (arg.rfind("--kernels-folder=", 0) == 0) a.kernelsFolder = arg.substr(17);
    else if (arg == "--model" && i + 1 < args.size()) a.model = args[++i];
    else if (arg.rfind("--model=", 0) == 0) a.model = arg.substr(8);
    else if (arg == "--base-url" && i + 1 < args.size()) a.baseUrl = args[++i];
    else if (arg.rfind("--base-url=", 0) == 0) a.baseUrl = arg.substr(11);
    else if (arg == "--allow-precision" && i + 1 < args.size()) {
      const std::string& p = args[++i];
      if (!protocol::isPrecision(p)) {
        std::cerr << "stitchcuda optimize: --allow-precision takes tf32, fp16 or bf16, not " << p << "\n";
        return std::nullopt;
      }
      a.allowPrecision.push_back(p);
    } else if (arg == "--precision" || arg.rfind("--precision=", 0) == 0) {
      if (arg == "--precision" && i + 1 == args.size()) {
        std::cerr << "stitchcuda optimize: --precision takes eager or fp32\n";
        return std::nullopt;
      }
      const std::string p = arg == "--precision" ? args[++i] : arg.substr(12);
      if (!protocol::isPrecisionMode(p)) {
        std::cerr << "stitchcuda optimize: --precision takes eager or fp32, not " << p << "\n";
        return std::nullopt;
      }
      a.precision = p;
    } else if (arg == "--iterations" || arg == "--wall-seconds") {
      const auto v = i + 1 < args.size() ? positiveNumber(args[++i]) : std::nullopt;
      if (!v) {
        std::cerr << "stitchcuda optimize: " << arg << " takes a positive number\n";
        return std::nullopt;
      }
      if (arg == "--iterations") a.budget.iterations = static_cast<int>(*v);
      else a.budget.wallSeconds = *v;
    } else if (!arg.empty() && arg[0] != '-' && a.file.empty()) a.file = arg;
    else {
      std::cerr << "stitchcuda optimize: unexpected argument " << arg << "\n";
      return std::nullopt;
    }
  }
  if (a.file.empty()) {
    std::cerr << "stitchcuda optimize: which file? usage: stitchcuda optimize FILE [--out DIR] [--json]\n";
    return std::nullopt;
  }
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
  if (finished->state == "noImprovement") return 3;
  return 1;
}

}  // namespace stitch::server
