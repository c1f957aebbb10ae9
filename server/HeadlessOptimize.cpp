// Headless optimize; see HeadlessOptimize.h.
#include "server/HeadlessOptimize.h"

#include "protocol/StitchTypes.h"
#include "server/HostShutdown.h"
#include "server/JobManager.h"
#include "server/Logger.h"
#include "server/OutFolderLock.h"
#include "server/ProgramExport.h"
#include "server/Uri.h"

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <unistd.h>

namespace stitch::server {
namespace {

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

// Why `dir` cannot take the report and the program, or nothing: it is created if missing and a probe
// file written and removed there.
std::optional<std::string> writableFolder(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return "cannot create it: " + ec.message();
  if (!std::filesystem::is_directory(dir, ec)) return std::string("not a folder");
  const auto probe = dir / (".stitchcuda-write-probe-" + std::to_string(::getpid()));
  {
    std::ofstream out(probe, std::ios::binary);
    if (!out) return std::string("cannot write there: ") + std::strerror(errno);
  }
  std::filesystem::remove(probe, ec);
  return std::nullopt;
}

}  // namespace

CLI::App* addOptimizeCommand(CLI::App& app, OptimizeArgs& a) {
  CLI::App* cmd = app.add_subcommand(
      "optimize", "the editor's job in a terminal: plan, generate, verify and time CUDA for the model in FILE");
  cmd->add_option("FILE", a.file, "the PyTorch model (KernelBench's format: Model, get_inputs, get_init_inputs)")
      ->type_name("");
  cli::addText(*cmd, "--out", a.out, "report.md, report.json, and what Accept writes: the model and its program folder",
               "DIR");
  cli::addValue(
      *cmd, "--kernels-folder", a.kernelsFolder,
      [](const std::string& name, const std::string& text) {
        if (!protocol::isPackageName(text)) throw cli::UsageError(name + " takes a Python package name, not " + text);
        return text;
      },
      "the program folder's name (a Python package name; default stitchcuda_kernels)", "NAME");
  cmd->add_flag("--json", a.json, "the job's events as JSON lines");
  cli::addToleranceOptions(*cmd, a.atol, a.rtol);
  cli::addValue(
      *cmd, "--gpu", a.gpu,
      [](const std::string& name, const std::string& text) {
        try {
          return std::optional<int>(cli::nonNegativeWholeNumber(name, text));
        } catch (const cli::UsageError&) {
          throw cli::UsageError(name + " takes a device index (0, 1, ...), not " + text);
        }
      },
      "the CUDA device to run on", "N");
  cli::addJobOptions(*cmd, a.job);
  cmd->footer("The job streams to the terminal (--json: as JSON lines) and leaves report.md and report.json in --out "
              "(else in its job folder).\n"
              "exit: 0 a verified improvement, 3 none, 4 no GPU to verify on (candidates only compiled), 1 error, "
              "2 usage, 128 + N when signal N stopped the job (its report is still written)");
  cmd->callback([&a] {
    if (a.file.empty()) throw cli::UsageError("which file? stitchcuda optimize FILE [options]");
    // The command line's mistakes, found before anything slow (finding a Python, the job): a file that is
    // not there or not a file, an --out that cannot take the report.
    std::error_code ec;
    if (!std::filesystem::is_regular_file(a.file, ec))
      throw cli::UsageError("cannot read " + a.file + ": " +
                            (std::filesystem::exists(a.file, ec) ? "not a regular file" : "no such file"));
    if (::access(a.file.c_str(), R_OK) != 0) throw cli::UsageError("cannot read " + a.file + ": " + std::strerror(errno));
    if (a.out)
      if (auto problem = writableFolder(*a.out)) throw cli::UsageError("--out " + *a.out + ": " + *problem);
  });
  return cmd;
}

int runHeadlessOptimize(const HostConfig& config, const Server::RunnerFactory& factory, const OptimizeArgs& args) {
  std::error_code ec;
  auto path = std::filesystem::absolute(args.file, ec);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << "stitchcuda optimize: cannot read " << args.file << ": " << std::strerror(errno) << "\n";
    return 2;
  }
  std::ostringstream text;
  text << in.rdbuf();
  // Held until this run has written its report and program: a second run on the same --out is refused.
  std::string busy;
  const auto outLock = args.out ? OutFolderLock::take(*args.out, busy) : std::optional<OutFolderLock>();
  if (args.out && !outLock) {
    std::cerr << "stitchcuda optimize: --out " << *args.out << ": " << busy << "\n";
    return 1;
  }

  boost::asio::thread_pool pool(2);
  std::mutex m;
  std::condition_variable cv;
  std::optional<protocol::JobFinishedParams> finished;
  bool tty = !args.json && ::isatty(1);
  Timing timing;
  JobManager jobs(
      pool, config.jobsDir, [&](const protocol::OptimizeParams& p) { return factory(p, config); },
      [&](const agents::JobEvent& event) {
        std::lock_guard lock(m);
        timing.observe(event);
        if (args.json)
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
  request.options.brain = args.job.brain;
  request.options.model = args.job.model;
  request.options.baseUrl = args.job.baseUrl;
  request.options.allowPrecision = args.job.allowPrecision;
  request.options.precision = args.job.precision;
  request.options.layout = args.job.layout;
  request.options.budget = args.job.budget;
  request.options.kernelsFolder = args.kernelsFolder;
  if (args.atol) request.options.tolerance.atol = *args.atol;
  if (args.rtol) request.options.tolerance.rtol = *args.rtol;
  request.options.gpu = args.gpu;
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
  std::filesystem::path outDir = args.out ? std::filesystem::path(*args.out) : config.jobsDir / id;
  try {
    writeReport(outDir, *state, timing);
    if (!args.json) std::cout << "report: " << (outDir / "report.md").string() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "stitchcuda optimize: cannot write the report to " << outDir << ": " << e.what() << "\n";
    return 1;
  }
  // --out also gets what Accept would write: the model with its edit and the program folder.
  if (const auto* kept = args.out ? keptCandidate(*state) : nullptr) {
    std::string error;
    const auto model = exportProgram(outDir, *kept, path.filename().string(), text.str(), error);
    if (!model) {
      std::cerr << "stitchcuda optimize: cannot write the program to " << outDir << ": " << error << "\n";
      return 1;
    }
    if (!args.json)
      std::cout << "program: " << model->string() << " and " << (outDir / args.kernelsFolder).string() << "/ (candidate "
                << kept->id << ", " << kept->status << ")\n";
  }
  if (int signal = terminationSignal()) return 128 + signal;  // as a shell reports a process a signal ended
  if (finished->state == "improved") return 0;
  if (finished->state == "noImprovement") return finished->needsGpu ? 4 : 3;
  return 1;
}

}  // namespace stitch::server
