// Slurm job arrays for bench and score --batch; see SlurmArray.h and protocol/SLURM.md.
#include "server/SlurmArray.h"

#include "agents/JobLog.h"
#include "process/ChildProcess.h"
#include "server/CommandLine.h"
#include "server/HostShutdown.h"
#include "server/ResultFiles.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace stitch::server {
namespace fs = std::filesystem;
using protocol::json;

namespace {

// A Slurm tool's run: its stdout lines, or the reason it failed.
struct ToolRun {
  bool ok = false;
  std::vector<std::string> lines;
  std::string error;
};

ToolRun runTool(std::vector<std::string> argv) {
  process::ChildSpec spec;
  spec.argv = std::move(argv);
  spec.pipeStderr = true;
  ToolRun run;
  const auto outcome =
      process::runChild(spec, std::chrono::seconds(60), [&](std::string_view line) { run.lines.emplace_back(line); });
  run.ok = outcome.exitedWith(0);
  if (!run.ok) {
    std::string tail = outcome.stderrTail;
    while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) tail.pop_back();
    run.error = spec.argv[0] + " " + (outcome.startError.empty() ? outcome.describe() : outcome.startError) +
                (tail.empty() ? "" : ": " + tail.substr(tail.rfind('\n') == std::string::npos ? 0 : tail.rfind('\n') + 1));
  }
  return run;
}

std::string envOr(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

// This process's command line as it was given, for the elements to run again.
std::vector<std::string> ownCommandLine() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> argv;
  for (std::string word; std::getline(in, word, '\0');) argv.push_back(word);
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!argv.empty() && !ec) argv[0] = self.string();
  return argv;
}

fs::path elementFile(const fs::path& dir, std::size_t index) {
  return dir / "elements" / (std::to_string(index) + ".json");
}

std::optional<json> readElement(const fs::path& dir, std::size_t index) {
  std::error_code ec;
  if (!fs::exists(elementFile(dir, index), ec)) return std::nullopt;
  json j = json::parse(readText(elementFile(dir, index)), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("result")) return std::nullopt;
  return j;
}

// "0-3,7,9-10": Slurm's --array list.
std::string arrayList(const std::vector<std::size_t>& sorted) {
  std::string out;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(sorted[i]) + (j > i ? "-" + std::to_string(sorted[j]) : "");
    i = j + 1;
  }
  return out;
}

// Whether to ask each element for a GPU: --slurm-gpus, else whether any node has GPUs configured.
bool wantsGres(const SlurmOptions& options, bool needsGpu) {
  if (!needsGpu) {
    std::cerr << "slurm: the coverage run needs no GPU: elements ask for none\n";
    return false;
  }
  if (options.gpus) {
    if (*options.gpus == 0) std::cerr << "slurm: --slurm-gpus 0: elements ask for no GPU (--gres omitted)\n";
    return *options.gpus > 0;
  }
  ToolRun run = runTool({"sinfo", "-h", "-o", "%G"});
  for (const auto& line : run.lines)
    if (line.find("gpu") != std::string::npos) return true;
  std::cerr << "slurm: the cluster has no GPUs configured (sinfo -o %G: "
            << (run.ok ? (run.lines.empty() ? "nothing" : run.lines.front()) : run.error)
            << "): elements ask for no GPU (--gres omitted; --slurm-gpus 1 to ask anyway)\n";
  return false;
}

std::string randomName() {
  std::random_device rd;
  std::ostringstream s;
  s << "stitchcuda-" << std::hex << rd() << rd();
  return s.str().substr(0, 27);
}

}  // namespace

// The elements of `jobName` squeue still lists (pending, running, completing, requeued), by index;
// nullopt when squeue cannot answer (a controller restarting): nothing is taken as lost then.
std::optional<std::map<std::size_t, std::string>> slurmAliveElements(const std::string& jobName, std::string& error) {
  ToolRun run = runTool({"squeue", "-h", "-r", "-n", jobName, "-o", "%i|%T"});
  if (!run.ok) {
    error = run.error;
    return std::nullopt;
  }
  std::map<std::size_t, std::string> alive;
  for (const auto& line : run.lines) {
    const auto underscore = line.find('_'), bar = line.find('|');
    if (underscore == std::string::npos || bar == std::string::npos || bar < underscore) continue;
    try {
      alive[std::stoul(line.substr(underscore + 1, bar - underscore - 1))] = line.substr(bar + 1);
    } catch (const std::exception&) {
    }
  }
  return alive;
}

// Why an element ended without a result, as far as sacct knows (it needs the cluster's accounting).
std::string slurmLostReason(const std::string& jobId) {
  ToolRun run = runTool({"sacct", "-n", "-P", "-X", "-j", jobId, "-o", "State,NodeList,ExitCode"});
  if (run.ok && !run.lines.empty() && !run.lines.front().empty()) {
    std::string line = run.lines.front();
    std::replace(line.begin(), line.end(), '|', ' ');
    return "sacct: " + line;
  }
  return "gone from squeue without a result file";
}

void slurmCancel(const std::vector<std::string>& what) {
  std::vector<std::string> argv = {"scancel"};
  argv.insert(argv.end(), what.begin(), what.end());
  ToolRun run = runTool(argv);
  if (!run.ok) std::cerr << "slurm: " << run.error << "\n";
}

std::optional<std::string> SlurmArraySubmitter::prepare() {
  const fs::path planFile = run_.dir / "plan.json";
  std::error_code ec;
  fs::create_directories(run_.dir / "elements", ec);
  fs::create_directories(run_.dir / "logs", ec);
  if (ec) return "cannot create " + run_.dir.string() + ": " + ec.message();
  json previous = json::parse(readText(planFile), nullptr, false);
  const bool hasPrevious = previous.is_object() && previous.contains("jobName");
  const bool sameKeys = hasPrevious && previous.value("keys", json::array()) == json(run_.keys);
  if (run_.resume && hasPrevious && (sameKeys || !run_.restartOnChange)) {
    if (!sameKeys)
      return "refusing to resume: " + planFile.string() +
             " was made for other tasks or rows (the suite or the batch changed); run without --resume to start over";
    plan_ = previous;
  } else {
    if (hasPrevious) {
      std::string error;
      auto alive = slurmAliveElements(previous["jobName"], error);
      if (!alive) return "cannot ask squeue about the earlier run in " + run_.dir.string() + ": " + error;
      if (!alive->empty())
        return std::to_string(alive->size()) + " element(s) of the earlier run " + previous["jobName"].get<std::string>() +
               " still run into " + run_.dir.string() + ": --resume to carry on, or scancel -n " +
               previous["jobName"].get<std::string>() + " first";
    }
    fs::remove_all(run_.dir / "elements", ec);
    fs::create_directories(run_.dir / "elements", ec);
    plan_ = json{{"format", "stitchcuda.slurm-plan/1"},
                 {"jobName", randomName()},
                 {"keys", run_.keys},
                 {"submissions", json::array()}};
  }
  plan_["command"] = ownCommandLine();
  plan_["cwd"] = fs::current_path(ec).string();
  gres_ = wantsGres(options_, run_.needsGpu);
  std::string script = "#!/bin/sh\n# An element of a stitchcuda job array (protocol/SLURM.md): the submitting command line,\n"
                       "# run again on this node for element $SLURM_ARRAY_TASK_ID alone.\nexec";
  for (const auto& word : plan_["command"]) script += " " + shellWord(word.get<std::string>());
  script += " --slurm-plan " + shellWord(planFile.string()) + " --slurm-element \"$SLURM_ARRAY_TASK_ID\"\n";
  if (auto error = writeAtomically(run_.dir / "element.sh", script)) return *error;
  fs::permissions(run_.dir / "element.sh", fs::perms::owner_all, fs::perm_options::add, ec);
  return savePlan();
}


std::optional<std::string> SlurmArraySubmitter::submit(std::vector<std::size_t> elements) {
  if (elements.empty()) return std::nullopt;
  std::sort(elements.begin(), elements.end());
  std::vector<std::string> argv = {"sbatch", "--parsable", "--array=" + arrayList(elements), "--job-name=" + jobName(),
                                   "--chdir=" + plan_.value("cwd", std::string(".")),
                                   "--output=" + (run_.dir / "logs" / "%A_%a.out").string(), "--ntasks=1",
                                   // The submitter retries a lost element itself, at once and counted; Slurm's own
                                   // requeue would hold it back (BeginTime) for minutes. --sbatch-arg=--requeue undoes it.
                                   "--no-requeue"};
  if (gres_) argv.push_back("--gres=gpu:1");
  if (options_.partition) argv.push_back("--partition=" + *options_.partition);
  if (options_.account) argv.push_back("--account=" + *options_.account);
  if (options_.time) argv.push_back("--time=" + *options_.time);
  argv.insert(argv.end(), options_.sbatchArgs.begin(), options_.sbatchArgs.end());
  argv.push_back((run_.dir / "element.sh").string());
  ToolRun run = runTool(argv);
  if (!run.ok || run.lines.empty()) return "sbatch failed: " + (run.ok ? "it printed no job id" : run.error);
  const std::string jobId = run.lines.front().substr(0, run.lines.front().find(';'));
  for (std::size_t i : elements) {
    ++attempts_[i];
    lastJob_[i] = jobId + "_" + std::to_string(i);
  }
  plan_["submissions"].push_back(json{{"jobId", jobId}, {"elements", elements}, {"date", agents::utcNow()}});
  std::cerr << "slurm: submitted job " << jobId << " (" << jobName() << "), element(s) " << arrayList(elements) << "\n";
  return savePlan();
}

std::string SlurmArraySubmitter::jobName() const { return plan_["jobName"]; }

int SlurmArraySubmitter::attempts(std::size_t i) const {
  auto it = attempts_.find(i);
  return it == attempts_.end() ? 0 : it->second;
}

std::string SlurmArraySubmitter::lastJob(std::size_t i) const {
  auto it = lastJob_.find(i);
  return it == lastJob_.end() ? jobName() + " element " + std::to_string(i) : it->second;
}

std::optional<std::string> SlurmArraySubmitter::savePlan() {
  return writeAtomically(run_.dir / "plan.json", plan_.dump(1) + "\n");
}

void addSlurmOptions(CLI::App& command, SlurmOptions& o) {
  const std::string group = "Slurm (protocol/SLURM.md)";
  command.add_flag("--slurm", o.enabled, "run as one Slurm job array, an element per task or row, one GPU each")->group(group);
  cli::addText(command, "--partition", o.partition, "sbatch --partition", "NAME")->group(group);
  cli::addText(command, "--account", o.account, "sbatch --account", "NAME")->group(group);
  cli::addText(command, "--time", o.time, "sbatch --time, per element", "LIMIT")->group(group);
  cli::addList(command, "--sbatch-arg", o.sbatchArgs, nullptr, "one more sbatch option, as given (repeatable)", "ARG")
      ->group(group);
  cli::addValue(command, "--slurm-gpus", o.gpus,
                [](const std::string& name, const std::string& text) {
                  return std::optional<int>(cli::nonNegativeWholeNumber(name, text));
                },
                "GPUs per element: 0 asks for none (default 1, or 0 where sinfo shows no GPU)", "N")
      ->group(group);
  cli::addValue(command, "--slurm-retries", o.retries, cli::nonNegativeWholeNumber,
                "resubmissions of an element lost with its node (default 2)", "N")
      ->group(group);
  cli::addValue(command, "--slurm-element", o.element,
                [](const std::string& name, const std::string& text) {
                  return std::optional<std::size_t>(cli::nonNegativeWholeNumber(name, text));
                },
                "", "I")
      ->group("");
  cli::addValue(command, "--slurm-plan", o.plan,
                [](const std::string&, const std::string& text) { return std::optional<fs::path>(text); }, "", "PLAN")
      ->group("");
}

const std::vector<std::string>& slurmOptionNames() {
  static const std::vector<std::string> names = {"--partition", "--account", "--time", "--sbatch-arg", "--slurm-gpus",
                                                 "--slurm-retries"};
  return names;
}

std::string hostName() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

json slurmPlacement() {
  json p{{"node", envOr("SLURMD_NODENAME", "")},
         {"job", envOr("SLURM_ARRAY_JOB_ID", "?") + "_" + envOr("SLURM_ARRAY_TASK_ID", "?")},
         {"gpu", envOr("CUDA_VISIBLE_DEVICES", "")}};
  if (p["node"] == "") p["node"] = hostName();
  if (const char* restarts = std::getenv("SLURM_RESTART_COUNT")) p["restarts"] = std::atoi(restarts);
  // The device's name, where the node has a driver: the first visible GPU (a numeric index of this list).
  ToolRun smi = runTool({"nvidia-smi", "--query-gpu=index,name", "--format=csv,noheader"});
  if (smi.ok) {
    std::string first = p["gpu"].get<std::string>().substr(0, p["gpu"].get<std::string>().find(','));
    for (const auto& line : smi.lines)
      if (auto comma = line.find(','); comma != std::string::npos && (first.empty() || line.substr(0, comma) == first)) {
        p["gpuName"] = line.substr(line.find_first_not_of(' ', comma + 1));
        break;
      }
  }
  return p;
}

int runSlurmElement(const SlurmOptions& options, const std::vector<std::string>& keys,
                    const std::function<std::optional<json>(std::size_t index)>& work) {
  if (!options.plan || !options.element) {
    std::cerr << "stitchcuda: --slurm-element and --slurm-plan go together\n";
    return 2;
  }
  const std::size_t index = *options.element;
  json plan = json::parse(readText(*options.plan), nullptr, false);
  if (!plan.is_object() || !plan.contains("keys")) {
    std::cerr << "stitchcuda: cannot read the Slurm plan " << options.plan->string() << "\n";
    return 1;
  }
  if (plan["keys"] != json(keys) || index >= keys.size()) {
    std::cerr << "stitchcuda: element " << index << " of " << options.plan->string()
              << ": the tasks or rows here are not those the plan was made for (changed since it was submitted)\n";
    return 1;
  }
  const auto start = std::chrono::steady_clock::now();
  std::optional<json> result = work(index);
  // scancel, a preemption or the time limit signal every process of the element, the harness worker
  // perhaps a moment before this one: a result cut short so is no result, whatever it says. Wait for
  // this process's own signal a moment before believing it.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  if (int signal = terminationSignal()) {
    std::cerr << "stitchcuda: element " << index << " (" << keys[index] << ") stopped by signal " << signal << "\n";
    return 128 + signal;
  }
  if (!result) {
    std::cerr << "stitchcuda: element " << index << " (" << keys[index] << ") was stopped before its end\n";
    return 1;
  }
  json element{{"index", index}, {"key", keys[index]}, {"result", std::move(*result)}};
  element["slurm"] = slurmPlacement();
  element["slurm"]["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Through a file of this process's own and a rename: a requeued twin never mixes its bytes in.
  const fs::path file = elementFile(options.plan->parent_path(), index);
  const fs::path tmp = file.string() + "." + std::to_string(::getpid()) + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << element.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
    if (!out.flush()) {
      std::cerr << "stitchcuda: cannot write " << tmp.string() << "\n";
      return 1;
    }
  }
  std::error_code ec;
  fs::rename(tmp, file, ec);
  if (ec) {
    std::cerr << "stitchcuda: cannot write " << file.string() << ": " << ec.message() << "\n";
    return 1;
  }
  return 0;
}

int runSlurmArray(const SlurmOptions& options, const SlurmArrayRun& run, const std::function<void(const json&)>& done,
                  const std::function<void(std::size_t, const std::string&)>& gaveUp, const std::atomic<bool>* stopping) {
  SlurmArraySubmitter state(options, run);
  if (auto error = state.prepare()) {
    std::cerr << "stitchcuda: " << *error << "\n";
    return 1;
  }
  std::set<std::size_t> pending;
  for (std::size_t i = 0; i < run.keys.size(); ++i)
    if (run.wanted.empty() || run.wanted[i]) pending.insert(i);
  // A result already there (an earlier submitter's) counts as it is; done's caller keeps each once.
  auto collect = [&] {
    for (auto it = pending.begin(); it != pending.end();)
      if (auto element = readElement(run.dir, *it)) {
        done(*element);
        it = pending.erase(it);
      } else {
        ++it;
      }
  };
  collect();
  std::map<std::size_t, int> missing;  // polls in a row an element was neither listed nor finished
  std::set<std::size_t> seen;          // listed by squeue at least once
  std::string squeueError;
  bool squeueFailing = false;  // said once per outage, not at every poll
  while (!pending.empty()) {
    if (stopping && stopping->load()) {
      std::cerr << "slurm: stopped; " << pending.size() << " element(s) left to the cluster: --resume collects them\n";
      return 0;
    }
    auto alive = slurmAliveElements(state.jobName(), squeueError);
    collect();  // after squeue: an element that left the queue has written its file by now
    if (!alive) {
      if (!squeueFailing) std::cerr << "slurm: squeue did not answer (" << squeueError << "); trying again every 2 s\n";
      squeueFailing = true;
    } else {
      squeueFailing = false;
      std::vector<std::size_t> submit;
      for (std::size_t i : std::set<std::size_t>(pending)) {
        if (alive->count(i)) {
          missing[i] = 0;
          seen.insert(i);
          continue;
        }
        // Neither submitted by this run nor queued (a new run, or --resume finding it neither done nor
        // queued): submit it now.
        if (state.attempts(i) == 0 && !seen.count(i)) {
          submit.push_back(i);
          continue;
        }
        if (++missing[i] < 2) continue;  // once more, for a file that is still on its way
        missing[i] = 0;
        const std::string why = slurmLostReason(state.lastJob(i));
        if (state.attempts(i) <= options.retries) {
          std::cerr << "slurm: element " << i << " (" << run.keys[i] << ", " << state.lastJob(i) << ") lost: " << why
                    << "; submitted again (attempt " << state.attempts(i) + 1 << " of " << options.retries + 1 << ")\n";
          submit.push_back(i);
        } else {
          pending.erase(i);
          gaveUp(i, "lost on Slurm " + std::to_string(state.attempts(i)) + " time(s), last " + state.lastJob(i) + ": " + why);
        }
      }
      if (auto error = state.submit(submit)) {
        std::cerr << "stitchcuda: " << *error << "\n";
        return 1;
      }
    }
    if (!pending.empty()) std::this_thread::sleep_for(std::chrono::seconds(2));
  }
  return 0;
}

}  // namespace stitch::server
