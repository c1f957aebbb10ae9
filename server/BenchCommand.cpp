// `stitchcuda bench`; see BenchCommand.h.
#include "server/BenchCommand.h"

#include "agents/JobLog.h"
#include "process/ChildGroups.h"
#include "protocol/NumberText.h"
#include "server/BenchTable.h"
#include "server/BenchTasks.h"
#include "server/ResultFiles.h"
#include "server/HostShutdown.h"
#include "server/WorkerProcess.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>

namespace stitch::server {
namespace fs = std::filesystem;
using bench::BenchEnvironment;
using bench::BenchTask;
using bench::TaskResult;
using protocol::json;

namespace {

bool resultBefore(const TaskResult& a, const TaskResult& b) {
  return bench::orderBefore(BenchTask{{}, a.task, a.level}, BenchTask{{}, b.task, b.level});
}

// The GPU each worker thread gives its tasks: the N first of CUDA_VISIBLE_DEVICES when it is set,
// else 0..N-1.
std::optional<std::vector<std::string>> gpuSlots(int gpus, std::string& error) {
  std::vector<std::string> slots;
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (visible && *visible) {
    std::stringstream list(visible);
    for (std::string item; std::getline(list, item, ',');)
      if (!item.empty()) slots.push_back(item);
    if (static_cast<int>(slots.size()) < gpus) {
      error = "--gpus " + std::to_string(gpus) + " but CUDA_VISIBLE_DEVICES names " + std::to_string(slots.size()) +
              " device(s): " + visible;
      return std::nullopt;
    }
    slots.resize(static_cast<std::size_t>(gpus));
  } else {
    for (int g = 0; g < gpus; ++g) slots.push_back(visible ? "" : std::to_string(g));
  }
  return slots;
}

// The harness's own account of this machine: the same `hello` the job's BASELINE phase asks for.
protocol::Result<BenchEnvironment, std::string> probeEnvironment(const HostConfig& config) {
  std::optional<int> gpu;
  if (!std::getenv("CUDA_VISIBLE_DEVICES")) gpu = 0;
  WorkerProcess worker(WorkerSettings{config.python, config.harnessDir, {}, gpu}, nullptr);
  agents::CancelSource never;
  auto reply = worker.call("hello", json::object(), std::chrono::seconds(120), never.token());
  if (!reply.ok()) return reply.error->message + " [" + reply.error->code + "]";
  return BenchEnvironment::fromHello(*reply.result);
}

struct Plan {
  fs::path self;
  fs::path out;
  fs::path jobsDir;
  std::string python;
  int ncuRuns = 0;
  std::chrono::milliseconds timeout{900000};
  std::vector<std::string> forward;
};

// The task's row, or nothing when `stopping` (a termination signal) stopped its optimize before it ended:
// such a task is not run, and --resume runs it.
std::optional<TaskResult> runTask(const Plan& plan, const BenchTask& task, const std::string& gpu,
                                  const std::atomic<bool>& stopping) {
  const fs::path reportDir = plan.out / "reports" / task.key;
  const fs::path stderrLog = plan.out / "logs" / (task.key + ".stderr.log");
  std::error_code ec;
  fs::remove(reportDir / "report.json", ec);  // a stale report must not be read as this run's
  fs::create_directories(stderrLog.parent_path(), ec);
  std::ofstream log(stderrLog, std::ios::binary | std::ios::trunc);

  process::ChildSpec spec;
  spec.argv = {plan.self.string(), "optimize", task.file.string(), "--json",
               "--out", reportDir.string(), "--jobs-dir", plan.jobsDir.string(),
               "--python", plan.python, "--log-level", "warning",
               "--ncu-runs", std::to_string(plan.ncuRuns)};
  spec.argv.insert(spec.argv.end(), plan.forward.begin(), plan.forward.end());
  spec.setEnv = {"CUDA_VISIBLE_DEVICES=" + gpu};
  spec.pipeStderr = true;
  // Past the timeout optimize gets SIGTERM first: it cancels its job, writes its report and stops its
  // worker (its own last resort is 10 s later), so the next task is timed on a free GPU.
  spec.stopGrace = std::chrono::seconds(15);

  bench::OptimizeRunReader reader;
  // The task's stderr log is flushed chunk by chunk: whoever tails it sees the run as it goes.
  process::ChildOutcome outcome = process::runChild(
      spec, plan.timeout, [&](std::string_view line) { reader.line(line); },
      [&](std::string_view chunk) { log.write(chunk.data(), static_cast<std::streamsize>(chunk.size())).flush(); },
      [&] { return stopping.load(); });
  if (outcome.cancelled) return std::nullopt;
  std::optional<json> report;
  if (fs::exists(reportDir / "report.json", ec)) {
    try {
      report = json::parse(readText(reportDir / "report.json"));
    } catch (const json::exception&) {
      report.reset();  // the row is made from the JSON lines alone
    }
  }
  TaskResult result = reader.result(task, outcome, report);
  // An optimize that had to be killed may leave what its worker started (nvcc) behind, adopted by this
  // process; it must not run on while the next task is timed on that GPU.
  if (int stopped = process::stopAdoptedGroupLeaders(); stopped > 0)
    result.log.push_back("stopped " + std::to_string(stopped) + " process group(s) left running by a killed optimize");
  return result;
}

// The state of one bench run that every worker thread shares: what is done, what the files say.
class BenchRun {
public:
  BenchRun(fs::path out, BenchEnvironment env, json runs, std::vector<TaskResult> done)
      : out_(std::move(out)), env_(std::move(env)), runs_(std::move(runs)), results_(std::move(done)) {}

  // With --slurm the environment is the nodes': the first element's, unless the table had one. False
  // when `env` differs from it (another GPU or PyTorch).
  bool adoptEnvironment(const BenchEnvironment& env) {
    std::lock_guard lock(mutex_);
    if (!env_.gpu && !env_.torch && !env_.python) env_ = env;
    return env_.comparableWith(env);
  }

  // Records a result, rewrites both files and prints its row: the one place that writes output.
  void add(TaskResult result, const std::string& where, bool severalGpus) {
    std::lock_guard lock(mutex_);
    std::cout << bench::taskRow(result);
    if (severalGpus) std::cout << "  (" << where << ", " << protocol::fixed(result.seconds, 1) << " s)\n";
    std::cout << std::flush;
    results_.push_back(std::move(result));
    saveLocked();
  }
  void notRun(const BenchTask& task) {
    std::lock_guard lock(mutex_);
    notRun_.push_back(task.key);
  }
  // Writes the files a last time and prints the whole table and the summary.
  void finish() {
    std::lock_guard lock(mutex_);
    saveLocked();
    std::sort(results_.begin(), results_.end(), resultBefore);
    std::cout << "\n" << bench::taskTableHeader();
    for (const auto& r : results_) std::cout << bench::taskRow(r);
    std::cout << "\n" << bench::summaryTable(results_);
    if (!notRun_.empty())
      std::cout << "\nnot run (deadline or stopped): " << notRun_.size() << " task(s); run again with --resume to add them\n";
    std::cout << "\nresults: " << (out_ / "results.json").string() << ", " << (out_ / "results.md").string()
              << std::endl;
  }
  bool writeFailed() const {
    std::lock_guard lock(mutex_);
    return writeFailed_;
  }
  bool complete() const {
    std::lock_guard lock(mutex_);
    return notRun_.empty();
  }

private:
  void saveLocked() {
    std::sort(results_.begin(), results_.end(), resultBefore);
    std::sort(notRun_.begin(), notRun_.end());
    json levels = json::object();
    for (const auto& [level, s] : bench::summarizeLevels(results_)) levels[bench::levelName(level)] = bench::toJson(s);
    json doc{{"format", "stitchcuda.bench/1"},
             {"environment", env_},
             {"runs", runs_},
             {"summary", {{"all", bench::toJson(bench::summarize(results_))}, {"levels", levels}}},
             {"notRun", notRun_},
             {"results", results_}};
    auto error = writeAtomically(out_ / "results.json",
                                 doc.dump(1, ' ', false, json::error_handler_t::replace) + "\n");
    if (!error) error = writeAtomically(out_ / "results.md", markdownLocked());
    if (error) {
      std::cerr << "stitchcuda bench: " << *error << "\n";
      writeFailed_ = true;
    }
  }

  std::string markdownLocked() const {
    std::ostringstream md;
    md << "# StitchCUDA bench\n\n"
       << "- GPU: " << env_.gpu.value_or("none visible") << ", driver " << env_.driver.value_or("—") << ", CUDA "
       << env_.cuda.value_or("—") << " (PyTorch's build), PyTorch " << env_.torch.value_or("?") << ", Python "
       << env_.python.value_or("?") << "\n";
    for (const json& run : runs_)
      md << "- " << run.value("date", "") << ": `" << run.value("command", "") << "`\n";
    md << "\n## Tasks\n\n" << bench::taskTableHeader();
    for (const auto& r : results_) md << bench::taskRow(r);
    md << "\n## Summary\n\n" << bench::summaryTable(results_);
    if (!notRun_.empty()) {
      md << "\nNot run (deadline):";
      for (const auto& t : notRun_) md << " " << t;
      md << "\n";
    }
    bool errors = false;
    for (const auto& r : results_) errors = errors || r.error;
    if (errors) {
      md << "\n## Errors\n\n";
      for (const auto& r : results_)
        if (r.error) md << "- " << r.task << ": " << r.errorReason << "\n";
    }
    return md.str();
  }

  const fs::path out_;
  BenchEnvironment env_;
  const json runs_;
  mutable std::mutex mutex_;
  std::vector<TaskResult> results_;
  std::vector<std::string> notRun_;
  bool writeFailed_ = false;
};

// One task of a Slurm array, on its node: its row, with the environment the harness found there.
int runBenchElement(const HostConfig& config, const SlurmOptions& slurm, const Plan& plan,
                    const std::vector<BenchTask>& tasks) {
  std::vector<std::string> keys;
  for (const auto& t : tasks) keys.push_back(t.key);
  std::atomic<bool> stopping{false};  // scancel and the time limit send SIGTERM first
  StopOnSignal stopOnSignal([&stopping](int) { stopping = true; });
  return runSlurmElement(slurm, keys, [&](std::size_t i) -> std::optional<json> {
    std::string error;
    const auto slots = gpuSlots(1, error);
    auto env = probeEnvironment(config);
    auto result = runTask(plan, tasks[i], slots ? slots->front() : "0", stopping);
    if (!result) return std::nullopt;
    json j = *result;
    if (env) j["environment"] = env.value();
    else j["environmentError"] = env.error();
    return j;
  });
}

// The pending tasks as one job array; each result merged into `run` as it arrives (SlurmArray.h).
int submitToSlurm(const SlurmOptions& slurm, const Plan& plan, const std::vector<BenchTask>& tasks,
                  const std::vector<BenchTask>& pending, bool resume, BenchRun& run, const std::atomic<bool>& stopping) {
  SlurmArrayRun array{plan.out / "slurm", {}, {}, true, resume};
  for (const auto& t : tasks) {
    array.keys.push_back(t.key);
    array.wanted.push_back(std::any_of(pending.begin(), pending.end(), [&](const BenchTask& p) { return p.key == t.key; }));
  }
  return runSlurmArray(
      slurm, array,
      [&](const json& element) {
        TaskResult result = element["result"].get<TaskResult>();
        result.slurm = element["slurm"];
        if (element["result"].contains("environment")) {
          const auto env = element["result"]["environment"].get<BenchEnvironment>();
          if (!run.adoptEnvironment(env))
            result.log.push_back("measured on " + env.describe() + ", unlike the table's other tasks");
        }
        const std::string where = result.slurm.value("node", "?") + " GPU " + result.slurm.value("gpu", "?");
        run.add(std::move(result), where, true);
      },
      [&](std::size_t i, const std::string& why) {
        TaskResult result;
        result.task = tasks[i].key;
        result.level = tasks[i].level;
        result.error = true;
        result.errorReason = why;
        run.add(std::move(result), "", false);
      },
      &stopping);
}

}  // namespace

CLI::App* addBenchCommand(CLI::App& app, BenchArgs& a) {
  CLI::App* cmd = app.add_subcommand(
      "bench", "every task of a suite through optimize, one at a time per GPU; --no-gpu: coverage on the CPU");
  const std::string gpuRun = "GPU run";
  const std::string coverageRun = "Coverage run (--no-gpu)";
  cmd->add_option("DIR")->description("the suite: a folder of tasks, or one task file")->type_name("")->each(
      [&a](const std::string& text) { a.dir = text; });
  cli::addValue(
      *cmd, "--out", a.out, [](const std::string&, const std::string& text) { return std::optional<fs::path>(text); },
      "results.json, results.md, and per task its report and log (default bench-results; coverage-results with "
      "--no-gpu)",
      "RESULTS");
  cli::addValue(
      *cmd, "--timeout", a.timeoutSeconds,
      [](const std::string& name, const std::string& text) { return std::optional<double>(cli::positiveNumber(name, text)); },
      "per task, then its optimize is stopped (default 900); with --no-gpu per harness call (default 600)", "SECONDS");
  cmd->add_flag("--no-gpu", a.noGpu, "the coverage run on the CPU instead (capture, plan, generate, compile for sm_90)");
  cli::addValue(*cmd, "--gpus", a.gpus, cli::positiveWholeNumber,
                "run N tasks at a time, one per GPU (the first N of CUDA_VISIBLE_DEVICES)", "N")
      ->group(gpuRun);
  cmd->add_flag("--resume", a.resume, "run only the tasks RESULTS/results.json does not have yet")->group(gpuRun);
  cli::addValue(
      *cmd, "--deadline", a.deadline,
      [](const std::string& name, const std::string& text) { return std::optional<double>(cli::positiveNumber(name, text)); },
      "start no task after this many seconds (those left are not run; --resume runs them)", "SECONDS")
      ->group(gpuRun);
  cli::addJobOptions(*cmd, a.job);  // checked here, passed on to each optimize as given
  cli::addValue(*cmd, "--every", a.coverage.every, cli::positiveWholeNumber,
                "every Kth task only, from the first, in level/name order", "K")
      ->group(coverageRun);
  cli::addValue(
      *cmd, "--slice", a.coverage.sliceIndex,
      [&a](const std::string& name, const std::string& text) {
        const auto slash = text.find('/');
        try {
          if (slash == std::string::npos) throw cli::UsageError("");
          const int n = cli::positiveWholeNumber(name, text.substr(0, slash));
          const int m = cli::positiveWholeNumber(name, text.substr(slash + 1));
          if (n > m) throw cli::UsageError("");
          a.coverage.sliceCount = m;
          return n - 1;
        } catch (const cli::UsageError&) {
          throw cli::UsageError(name + " takes N/M with 1 <= N <= M, not " + text);
        }
      },
      "the Nth of M equal parts of the suite", "N/M")
      ->group(coverageRun);
  cli::addValue(*cmd, "--jobs", a.coverage.jobs, cli::positiveWholeNumber, "tasks at a time (default one per core)", "N")
      ->group(coverageRun);
  cli::addValue(
      *cmd, "--expect", a.coverage.expect,
      [](const std::string&, const std::string& text) { return std::optional<fs::path>(text); },
      "fail (exit 1) when a task that compiled, or had every operator covered, there no longer does", "FILE")
      ->group(coverageRun);
  cli::addValue(
      *cmd, "--write-expect", a.coverage.writeExpect,
      [](const std::string&, const std::string& text) { return std::optional<fs::path>(text); },
      "record this run's outcome as that file", "FILE")
      ->group(coverageRun);
  addSlurmOptions(*cmd, a.slurm);
  cmd->footer("A suite is a KernelBench-style folder (levelN folders). A row per task as results arrive, KernelBench's "
              "summary per level,\nand RESULTS/results.json and .md, written after every task. --no-gpu: how much of "
              "the suite the built-in optimizer\ncovers (captured, planned, generated and compiled for sm_90 on the "
              "CPU; GPU time estimated by a roofline).\n"
              "Host and LLM options reach each optimize run (--python, --ncu-runs, default 0 here, the LLM's).\n"
              "--slurm: the tasks as one Slurm job array, an element (one GPU) per task, merged into the same files "
              "(protocol/SLURM.md).\n"
              "exit: 0 every task ran, whatever the verdicts; 1 error, tasks left unrun by --deadline, or (--no-gpu) "
              "a regression against --expect; 2 usage; 128 + N when signal N stopped it");
  cmd->callback([cmd, &a] {
    auto given = [cmd](const std::string& name) {
      const CLI::Option* o = cmd->get_option_no_throw(name);
      return o != nullptr && o->count() > 0;
    };
    std::vector<std::string> gpuOnly = {"--gpus", "--resume", "--deadline", "--jobs-dir", "--ncu-runs"};
    for (const auto* names : {&cli::jobOptionNames(), &cli::llmOptionNames()})
      gpuOnly.insert(gpuOnly.end(), names->begin(), names->end());
    const std::vector<std::string> coverageOnly = {"--every", "--slice", "--jobs", "--expect", "--write-expect"};
    for (const auto& name : slurmOptionNames())
      if (given(name) && !a.slurm.enabled) throw cli::UsageError(name + " is for a Slurm run: it needs --slurm");
    if (a.slurm.enabled)
      for (const std::string name : {"--gpus", "--deadline"})
        if (given(name)) throw cli::UsageError(name + " is for one machine, not with --slurm (each element gets one GPU)");
    for (const auto& name : a.noGpu ? gpuOnly : coverageOnly)
      if (given(name) && !(name == "--resume" && a.slurm.enabled))
        throw cli::UsageError(a.noGpu ? name + " is for the GPU run, not with --no-gpu"
                                      : name + " is for the coverage run: it needs --no-gpu");
    if (a.dir.empty()) throw cli::UsageError("which suite? name a folder of tasks (or one task file)");
    if (a.noGpu) {
      if (a.coverage.every > 1 && a.coverage.sliceCount > 1)
        throw cli::UsageError("--every and --slice pick a subset each: give one of them");
      a.coverage.dir = a.dir;
      if (a.out) a.coverage.out = *a.out;
      if (a.timeoutSeconds) a.coverage.timeoutSeconds = *a.timeoutSeconds;
      a.coverage.slurm = a.slurm;
      a.coverage.resume = a.resume;
    }
    a.jobsDirGiven = given("--jobs-dir");
    a.forward = cli::givenValues(*cmd, cli::jobOptionNames());
    for (const auto& v : cli::givenValues(*cmd, cli::llmOptionNames())) a.forward.push_back(v);
    for (const auto& v : cli::givenValues(*cmd, {"--load-timeout"})) a.forward.push_back(v);
  });
  return cmd;
}

namespace {

// The plan of a GPU run from its command line; nullopt (said on stderr) when its out folder cannot be made.
std::optional<Plan> benchPlan(const HostConfig& config, const BenchArgs& args) {
  Plan plan;
  std::error_code ec;
  plan.self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) plan.self = fs::absolute(args.argv[0]);
  plan.out = fs::absolute(args.out.value_or("bench-results"));
  plan.jobsDir = args.jobsDirGiven ? fs::absolute(config.jobsDir) : plan.out / "jobs";
  plan.python = config.python;
  plan.ncuRuns = config.ncuRuns;
  plan.timeout = std::chrono::milliseconds(static_cast<long long>(args.timeoutSeconds.value_or(900) * 1000));
  plan.forward = args.forward;
  fs::create_directories(plan.out, ec);
  if (ec) {
    std::cerr << "stitchcuda bench: cannot create " << plan.out.string() << ": " << ec.message() << "\n";
    return std::nullopt;
  }
  return plan;
}

// With --resume: the results and runs `resultsFile` holds, kept only where they were measured where
// this run measures (`env`; with --slurm the nodes report theirs, so the file's is taken). 0, or the
// exit code when they cannot be kept.
int resumeFrom(const fs::path& resultsFile, bool slurm, BenchEnvironment& env, std::vector<TaskResult>& done,
               json& runs) {
  BenchEnvironment previous;
  try {
    json doc = json::parse(readText(resultsFile));
    previous = doc.at("environment").get<BenchEnvironment>();
    done = doc.at("results").get<std::vector<TaskResult>>();
    runs = doc.value("runs", json::array());
  } catch (const std::exception& e) {
    std::cerr << "stitchcuda bench: cannot resume from " << resultsFile.string() << ": " << e.what()
              << "; run without --resume to start over\n";
    return 1;
  }
  if (slurm) env = previous;
  if (!previous.comparableWith(env)) {
    std::cerr << "stitchcuda bench: refusing to resume: " << resultsFile.string() << " holds results measured on "
              << previous.describe() << ", and this machine has " << env.describe()
              << "; results from a different GPU or PyTorch cannot share a table. Use another --out, or run "
                 "without --resume to start over.\n";
    return 2;
  }
  return 0;
}

// Runs `pending` on one worker thread per GPU of `slots`, one optimize at a time each; a task that would
// start after a stop signal or past --deadline (counted from `start`) is recorded as not run.
void runOnGpus(const Plan& plan, const BenchArgs& args, const std::vector<std::string>& slots,
               const std::vector<BenchTask>& pending, std::chrono::steady_clock::time_point start, BenchRun& run,
               std::atomic<bool>& stopping) {
  std::mutex queueMutex;
  std::size_t next = 0;
  std::vector<std::thread> workers;
  for (const std::string& gpu : slots)
    workers.emplace_back([&, gpu] {
      while (true) {
        BenchTask task;
        {
          std::lock_guard lock(queueMutex);
          if (next >= pending.size()) return;
          task = pending[next++];
        }
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (stopping || (args.deadline && elapsed > *args.deadline)) {
          run.notRun(task);
          continue;
        }
        if (auto result = runTask(plan, task, gpu, stopping)) run.add(std::move(*result), "GPU " + gpu, slots.size() > 1);
        else run.notRun(task);
      }
    });
  for (auto& w : workers) w.join();
}

}  // namespace

int runBench(const HostConfig& config, const BenchArgs& args) {
  if (args.noGpu) {  // CoverageBench.h
    CoverageArgs coverage = args.coverage;
    coverage.argv = args.argv;
    return runCoverageBench(config, coverage);
  }
  std::error_code ec;
  if (!fs::exists(args.dir, ec)) {
    std::cerr << "stitchcuda bench: no such folder or file: " << args.dir.string() << "\n";
    return 2;
  }
  auto tasks = bench::findTasks(args.dir);
  if (!tasks) {
    std::cerr << "stitchcuda bench: " << tasks.error() << "\n";
    return 1;
  }
  if (tasks.value().empty()) {
    std::cerr << "stitchcuda bench: no task (*.py) under " << args.dir.string() << "\n";
    return 1;
  }
  std::string slotError;
  auto slots = gpuSlots(args.gpus, slotError);
  if (!slots) {
    std::cerr << "stitchcuda bench: " << slotError << "\n";
    return 2;
  }
  const std::optional<Plan> plan = benchPlan(config, args);
  if (!plan) return 1;
  if (args.slurm.element) return runBenchElement(config, args.slurm, *plan, tasks.value());

  process::adoptOrphans();
  // With --slurm the harness runs on the nodes: their environment comes with each element's result.
  auto probed = args.slurm.enabled ? protocol::Result<BenchEnvironment, std::string>(BenchEnvironment{})
                                   : probeEnvironment(config);
  if (!probed) {
    std::cerr << "stitchcuda bench: the harness did not answer (" << config.python << ", " << config.harnessDir.string()
              << "): " << probed.error() << "\n";
    return 1;
  }
  BenchEnvironment env = probed.value();

  const fs::path resultsFile = plan->out / "results.json";
  std::vector<TaskResult> done;
  json runs = json::array();
  if (args.resume && fs::exists(resultsFile, ec))
    if (int refused = resumeFrom(resultsFile, args.slurm.enabled, env, done, runs)) return refused;
  runs.push_back(json{{"date", agents::utcNow()}, {"command", commandLineOf(args.argv)}});

  std::vector<BenchTask> pending;
  for (const auto& t : tasks.value())
    if (std::none_of(done.begin(), done.end(), [&](const TaskResult& r) { return r.task == t.key; }))
      pending.push_back(t);
  std::cout << "bench: " << tasks.value().size() << " task(s) under " << args.dir.string() << " on "
            << (args.slurm.enabled ? "a Slurm job array" : env.describe()) << "\n";
  if (args.resume)
    std::cout << "resuming: " << tasks.value().size() - pending.size() << " task(s) already in "
              << resultsFile.string() << ", " << pending.size() << " to run\n";
  std::cout << "\n" << bench::taskTableHeader() << std::flush;

  BenchRun run(plan->out, env, runs, std::move(done));
  // SIGTERM, SIGINT, SIGHUP: the running optimize runs are stopped (each writes its report), the rest are
  // not started, and the files say so (not run; --resume runs them).
  std::atomic<bool> stopping{false};
  StopOnSignal stopOnSignal([&stopping](int) { stopping = true; });
  const auto start = std::chrono::steady_clock::now();
  if (args.slurm.enabled) {
    if (submitToSlurm(args.slurm, *plan, tasks.value(), pending, args.resume, run, stopping) != 0) return 1;
  } else {
    runOnGpus(*plan, args, *slots, pending, start, run, stopping);
  }
  run.finish();
  if (int signal = terminationSignal()) return 128 + signal;
  if (run.writeFailed()) return 1;
  return run.complete() ? 0 : 1;
}

}  // namespace stitch::server
