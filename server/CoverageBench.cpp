// `stitchcuda bench DIR --no-gpu`; see CoverageBench.h.
#include "server/CoverageBench.h"

#include "agents/BaselineJob.h"
#include "agents/JobLog.h"
#include "agents/builtin/BuiltinBrain.h"
#include "agents/builtin/kernel/NodeArgs.h"
#include "agents/builtin/normalize/GraphNormalize.h"
#include "agents/builtin/ops/OpDef.h"
#include "process/ChildGroups.h"
#include "process/ChildProcess.h"
#include "protocol/NumberText.h"
#include "server/BenchTasks.h"
#include "server/ResultFiles.h"
#include "server/WorkerProcess.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

namespace stitch::server {
namespace fs = std::filesystem;
using protocol::fixed;
using protocol::json;
// An operator's name without namespace and overload ("aten::add.Tensor" -> "add"), as the planner reads it.
using agents::builtin::baseName;

namespace coverage {
namespace {

double elementBytes(const std::string& dtype) {
  static const std::map<std::string, double> sizes{
      {"float32", 4}, {"float", 4},    {"float16", 2}, {"half", 2},      {"bfloat16", 2}, {"float64", 8},
      {"double", 8},  {"int64", 8},    {"long", 8},    {"int32", 4},     {"int", 4},      {"int16", 2},
      {"int8", 1},    {"uint8", 1},    {"bool", 1},    {"complex64", 8}, {"complex128", 16}};
  auto it = sizes.find(dtype);
  return it == sizes.end() ? 4 : it->second;
}

struct TensorShape {
  std::vector<double> shape;
  double elementBytes = 4;
  double numel() const {
    double n = 1;
    for (double s : shape) n *= s;
    return n;
  }
  double bytes() const { return numel() * elementBytes; }
};

std::string shortOp(const std::string& op) { return op.rfind("aten::", 0) == 0 ? op.substr(6) : op; }

}  // namespace

std::vector<OperatorCost> estimateCosts(const json& graph, const Ceilings& c) {
  std::map<std::string, TensorShape> tensors;
  for (const json& t : graph.value("tensors", json::array())) {
    TensorShape s;
    for (const json& d : t.value("shape", json::array())) s.shape.push_back(d.is_number() ? d.get<double>() : 0.0);
    s.elementBytes = elementBytes(t.value("dtype", "float32"));
    tensors[t.value("id", "")] = s;
  }
  auto shapeOf = [&](const std::string& id) -> const TensorShape* {
    auto it = tensors.find(id);
    return it == tensors.end() ? nullptr : &it->second;
  };
  std::vector<OperatorCost> out;
  for (const json& n : graph.value("nodes", json::array())) {
    OperatorCost cost;
    cost.node = n.value("id", 0);
    cost.op = shortOp(n.value("op", "?"));
    if (n.contains("source") && n["source"].is_object()) cost.line = n["source"].value("line", 0);
    cost.view = n.value("kind", "compute") == "view";
    // The argument tensors in order (tensor lists flattened), each once for the bytes.
    std::vector<const TensorShape*> args;
    std::set<std::string> seen;
    std::map<std::string, json> scalars;
    // A GEMM's left matrix: its first argument, or mat1/batch1 where the add forms take their
    // accumulator first (the schema's names, as the graph records them).
    std::size_t left = 0;
    for (const json& a : n.value("inputs", json::array())) {
      std::vector<std::string> ids;
      const std::string argName = a.value("name", "");
      if (argName == "mat1" || argName == "batch1") left = args.size();
      if (a.contains("tensor") && a["tensor"].is_string()) ids.push_back(a["tensor"].get<std::string>());
      if (a.contains("tensors") && a["tensors"].is_array())
        for (const json& t : a["tensors"])
          if (t.is_string()) ids.push_back(t.get<std::string>());
      if (ids.empty() && a.contains("value")) scalars[argName] = a["value"];
      for (const auto& id : ids) {
        const TensorShape* s = shapeOf(id);
        args.push_back(s);
        if (s && seen.insert(id).second) cost.bytes += s->bytes();
      }
    }
    std::vector<const TensorShape*> outs;
    for (const json& o : n.value("outputs", json::array()))
      if (o.is_string())
        if (const TensorShape* s = shapeOf(o.get<std::string>())) {
          outs.push_back(s);
          cost.bytes += s->bytes();
        }
    if (cost.view) {
      cost.bytes = 0;
      out.push_back(cost);
      continue;
    }
    double written = 0;
    for (const auto* s : outs) written += s->numel();
    const std::string name = baseName(cost.op);
    // The registry's cost kind (agents/builtin/ops); an operator it does not know costs as elementwise.
    const agents::builtin::ops::OpDef* def = agents::builtin::ops::findOp(name);
    const auto kind = def ? def->cost : agents::builtin::ops::CostKind::Elementwise;
    bool tensorCores = false;
    if (kind == agents::builtin::ops::CostKind::Gemm && !outs.empty()) {
      const TensorShape* a = args.size() >= 2 && left < args.size() ? args[left] : nullptr;
      cost.flops = a && !a->shape.empty() ? 2.0 * outs[0]->numel() * a->shape.back() : written;
    } else if (kind == agents::builtin::ops::CostKind::Convolution && args.size() >= 2 && args[0] && args[1] &&
               !outs.empty()) {
      // slow_conv_transpose2d/3d carry no `transposed` argument: their name says it.
      bool transposed = name.rfind("slow_conv_transpose", 0) == 0;
      if (auto it = scalars.find("transposed"); it != scalars.end() && it->second.is_boolean())
        transposed = it->second.get<bool>();
      double perOutput = 1;  // in-channels per group (out-channels per group when transposed) x window
      for (std::size_t d = 1; d < args[1]->shape.size(); ++d) perOutput *= args[1]->shape[d];
      cost.flops = 2.0 * (transposed ? args[0]->numel() : outs[0]->numel()) * perOutput;
      tensorCores = true;  // torch.backends.cudnn.allow_tf32 is on by default
    } else {
      cost.flops = written;
    }
    const double rate = tensorCores ? c.tf32FlopsPerUs : c.fp32FlopsPerUs;
    cost.us = std::max({cost.bytes / c.bytesPerUs, cost.flops / rate, c.floorUs});
    out.push_back(cost);
  }
  return out;
}

UncoveredEntry parseUncovered(const std::string& text) {
  UncoveredEntry e;
  static const std::regex withLine(R"(^(\S+) \(line (\d+)\): ?([\s\S]*)$)");
  std::smatch m;
  if (std::regex_match(text, m, withLine)) {
    e.op = m[1];
    e.line = std::atoi(m[2].str().c_str());
    e.reason = m[3];
    return e;
  }
  const auto colon = text.find(": ");
  e.op = text.substr(0, colon);
  e.reason = colon == std::string::npos ? "" : text.substr(colon + 2);
  return e;
}

Coverage measureCoverage(const std::vector<OperatorCost>& costs, const std::vector<std::string>& uncovered) {
  std::vector<bool> left(costs.size(), false);
  auto claim = [&](const UncoveredEntry& e, bool anyLine) {
    for (std::size_t i = 0; i < costs.size(); ++i) {
      if (left[i] || (costs[i].op != e.op && baseName(costs[i].op) != e.op)) continue;
      if (!anyLine && costs[i].line != e.line) continue;
      left[i] = true;
      return true;
    }
    return false;
  };
  for (const auto& text : uncovered) {
    const UncoveredEntry e = parseUncovered(text);
    if (!claim(e, e.line == 0) && e.line != 0) claim(e, true);
  }
  Coverage c;
  for (std::size_t i = 0; i < costs.size(); ++i) {
    if (costs[i].view && !left[i]) continue;
    ++c.operators;
    c.totalUs += costs[i].us;
    if (!left[i]) {
      ++c.covered;
      c.coveredUs += costs[i].us;
    }
  }
  return c;
}

}  // namespace coverage

namespace {

using bench::BenchTask;

// One line, at most `limit` characters: for table cells.
std::string oneLine(std::string text, std::size_t limit) {
  for (char& c : text)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  for (std::size_t p; (p = text.find("  ")) != std::string::npos;) text.erase(p, 1);
  for (std::size_t p = 0; (p = text.find('|', p)) != std::string::npos; p += 2) text.replace(p, 1, "\\|");
  if (text.size() > limit) text = text.substr(0, limit - 1) + "…";
  return text;
}

std::string percent(double part, double whole) {
  return whole > 0 ? fixed(100.0 * part / whole, 1) + "%" : "—";
}

// ---- one task ----------------------------------------------------------------------------------

struct Row {
  std::string task;
  int level = 0;
  std::string file;
  std::string stage = "load";  // where it stopped: load | capture | plan | generate | build | compiled
  bool compiled = false;
  bool fullyCovered = false;  // compiled, and the plan leaves nothing in PyTorch
  std::string reason;         // why there is no compiled candidate
  std::optional<coverage::Coverage> cover;
  std::vector<std::string> uncovered;
  json sizes = json::object();  // {"changed": {name: [from, to]}, "overBudget": [...], "inputs": [[shape]...]}
  std::string title;
  int planSteps = 0;
  double seconds = 0;
  double buildSeconds = 0;
  std::string candidateDir;
  std::optional<double> planTimeShare;  // the plan's own estimate (bytes moved, without a profile)
  std::string planTimeBasis;
  json batch;  // the capture's batch probe (HARNESS.md): whether another batch size can run in chunks
  json slurm;  // with --slurm: the node and job that ran it (SlurmArray.h)
};

json toJson(const Row& r) {
  json j{{"task", r.task},
         {"level", r.level},
         {"file", r.file},
         {"stage", r.stage},
         {"compiled", r.compiled},
         {"fullyCovered", r.fullyCovered},
         {"reason", r.reason},
         {"uncovered", r.uncovered},
         {"sizes", r.sizes},
         {"title", r.title},
         {"planSteps", r.planSteps},
         {"seconds", std::round(r.seconds * 100) / 100},
         {"buildSeconds", std::round(r.buildSeconds * 100) / 100},
         {"candidateDir", r.candidateDir}};
  if (r.cover) {
    j["operators"] = {{"total", r.cover->operators}, {"covered", r.cover->covered}};
    j["gpuTimeEstimateUs"] = {{"total", std::round(r.cover->totalUs * 100) / 100},
                              {"covered", std::round(r.cover->coveredUs * 100) / 100},
                              {"coveredShare", r.cover->totalUs > 0 ? r.cover->coveredUs / r.cover->totalUs : 0.0}};
  }
  if (r.planTimeShare) j["planCoverage"] = {{"timeShare", *r.planTimeShare}, {"timeBasis", r.planTimeBasis}};
  if (!r.batch.is_null()) j["batch"] = r.batch;
  if (!r.slurm.is_null()) j["slurm"] = r.slurm;
  return j;
}

// A row back from its JSON: a Slurm element's result, merged by the submitter.
Row rowFromJson(const json& j) {
  Row r;
  r.task = j.value("task", "");
  r.level = j.value("level", 0);
  r.file = j.value("file", "");
  r.stage = j.value("stage", "");
  r.compiled = j.value("compiled", false);
  r.fullyCovered = j.value("fullyCovered", false);
  r.reason = j.value("reason", "");
  r.uncovered = j.value("uncovered", std::vector<std::string>{});
  r.sizes = j.value("sizes", json::object());
  r.title = j.value("title", "");
  r.planSteps = j.value("planSteps", 0);
  r.seconds = j.value("seconds", 0.0);
  r.buildSeconds = j.value("buildSeconds", 0.0);
  r.candidateDir = j.value("candidateDir", "");
  if (j.contains("operators")) {
    coverage::Coverage c;
    c.operators = j["operators"].value("total", 0);
    c.covered = j["operators"].value("covered", 0);
    c.totalUs = j["gpuTimeEstimateUs"].value("total", 0.0);
    c.coveredUs = j["gpuTimeEstimateUs"].value("covered", 0.0);
    r.cover = c;
  }
  if (j.contains("planCoverage")) {
    r.planTimeShare = j["planCoverage"].value("timeShare", 0.0);
    r.planTimeBasis = j["planCoverage"].value("timeBasis", "");
  }
  r.batch = j.value("batch", json());
  r.slurm = j.value("slurm", json());
  return r;
}

std::string describeError(const agents::WorkerError& e) {
  std::string where;
  if (e.file) where = fs::path(*e.file).filename().string() + (e.line ? ":" + std::to_string(*e.line) : "") + ": ";
  return where + e.message + " [" + e.code + "]";
}

struct RunPlan {
  fs::path out;
  fs::path cacheDir;
  std::chrono::milliseconds deadline{600000};
};

Row runTask(agents::Worker& worker, const RunPlan& plan, const BenchTask& task) {
  const auto start = std::chrono::steady_clock::now();
  Row row;
  row.task = task.key;
  row.level = task.level;
  row.file = task.file.string();
  agents::CancelSource never;
  auto finish = [&]() -> Row {
    row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return row;
  };
  const json taskParams{{"path", task.file.string()}, {"device", "cpu"}, {"shrink", true}};

  row.stage = "load";
  auto loaded = worker.call("loadTask", taskParams, plan.deadline, never.token());
  if (!loaded.ok()) {
    row.reason = "load: " + describeError(*loaded.error);
    return finish();
  }
  const json& summary = *loaded.result;
  const json shrink = summary.value("shrink", json::object());
  row.sizes["changed"] = shrink.value("changed", json::object());
  row.sizes["overBudget"] = shrink.value("overBudget", json::array());
  json shapes = json::array();
  for (const json& v : summary.value("inputs", json::array()))
    shapes.push_back(v.value("kind", "") == "tensor" ? v.value("shape", json::array()) : json(v.value("value", json())));
  row.sizes["inputs"] = shapes;

  row.stage = "capture";
  auto graph = worker.call("captureGraph", taskParams, plan.deadline, never.token());
  if (!graph.ok()) {
    row.reason = "capture: " + describeError(*graph.error);
    return finish();
  }

  row.batch = graph.result->value("batch", json());
  row.stage = "plan";
  agents::BaselineFacts facts;
  facts.cuda = false;
  facts.graph = *graph.result;
  facts.modelClass = summary.value("modelClass", facts.modelClass);
  facts.precision = agents::parseEagerPrecision(summary);  // as the BASELINE phase of `optimize` reads it
  agents::JobRequest request;
  request.jobId = "coverage-" + task.key;
  request.uri = "file://" + task.file.string();
  request.taskFile = task.file;
  request.jobDir = plan.out / "candidates" / task.key;
  agents::builtin::BuiltinBrain brain;
  agents::loop::BrainPlan brainPlan;
  try {
    brainPlan = brain.plan(facts, request, false);
  } catch (const std::exception& e) {
    row.reason = std::string("plan: the planner threw: ") + e.what();
    return finish();
  }
  row.uncovered = brainPlan.plan.uncovered;
  row.planSteps = static_cast<int>(brainPlan.plan.tasks.size());
  try {
    row.cover = coverage::measureCoverage(coverage::estimateCosts(agents::builtin::normalizeGraph(facts.graph)),
                                          row.uncovered);
  } catch (const std::exception&) {  // the normalization refused the graph: the capture as it is
    row.cover = coverage::measureCoverage(coverage::estimateCosts(facts.graph), row.uncovered);
  }
  if (const auto& c = brainPlan.plan.coverage) {  // the plan's own count, exact per node
    row.cover->operators = c->operators;
    row.cover->covered = c->coveredOperators;
    row.planTimeShare = c->timeShare;
    row.planTimeBasis = c->timeBasis;
  }
  if (!brainPlan.generatable) {
    row.reason = "plan: " + (brainPlan.reason.empty() ? std::string("not generatable") : brainPlan.reason);
    return finish();
  }

  row.stage = "generate";
  std::error_code ec;
  fs::remove_all(request.jobDir, ec);
  std::string error;
  std::optional<agents::loop::Draft> draft;
  try {
    draft = brain.next(std::nullopt, request.jobDir, error);
  } catch (const std::exception& e) {
    error = std::string("the coder threw: ") + e.what();
  }
  if (!draft) {
    row.reason = "generate: " + (error.empty() ? std::string("no candidate") : error);
    return finish();
  }
  row.title = draft->title;
  row.candidateDir = fs::relative(draft->dir, plan.out, ec).string();

  row.stage = "build";
  const json buildParams{
      {"path", (draft->dir / "candidate.cu").string()}, {"cacheDir", plan.cacheDir.string()}, {"arch", "sm_90"}};
  auto built = worker.call("buildCandidate", buildParams, plan.deadline, never.token());
  if (!built.ok()) {
    row.reason = "build: " + describeError(*built.error);
    return finish();
  }
  const json builds = built.result->value("builds", json::array());
  const json b = builds.empty() ? json::object() : builds[0];
  row.buildSeconds = b.value("seconds", 0.0);
  if (!b.value("ok", false)) {
    std::string first;
    for (const json& d : b.value("diagnostics", json::array()))
      if (d.value("severity", "") == "error") {
        first = (d.contains("line") && d["line"].is_number() ? "candidate.cu:" + std::to_string(d["line"].get<int>()) + ": "
                                                              : std::string()) +
                d.value("message", "");
        break;
      }
    row.reason = "build: " + (first.empty() ? std::string("nvcc failed") : first);
    return finish();
  }
  row.stage = "compiled";
  row.compiled = true;
  row.fullyCovered = row.uncovered.empty();
  return finish();
}

// ---- tables ------------------------------------------------------------------------------------

std::string sizesText(const json& sizes) {
  std::string s;
  const json changed = sizes.value("changed", json::object());
  for (const auto& [name, change] : changed.items())
    if (change.is_array() && change.size() == 2)
      s += (s.empty() ? "" : ", ") + name + " " + change[0].dump() + "→" + change[1].dump();
  if (s.empty()) s = "as given";
  if (!sizes.value("overBudget", json::array()).empty()) s += " (still over: " + [&] {
    std::string o;
    for (const json& k : sizes["overBudget"]) o += (o.empty() ? "" : ", ") + k.get<std::string>();
    return o;
  }() + ")";
  return s;
}

// "relu_ ×2, cat": the operators left in PyTorch, by name.
std::string leftText(const std::vector<std::string>& uncovered) {
  std::vector<std::pair<std::string, int>> counts;
  for (const auto& u : uncovered) {
    const std::string op = coverage::parseUncovered(u).op;
    auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& p) { return p.first == op; });
    if (it == counts.end()) counts.emplace_back(op, 1);
    else ++it->second;
  }
  std::string s;
  for (const auto& [op, n] : counts) s += (s.empty() ? "" : ", ") + op + (n > 1 ? " ×" + std::to_string(n) : "");
  return s;
}

std::string tableHeader() {
  return "| task | candidate | operators covered | est. GPU time covered | sizes used | left in PyTorch / why no candidate |\n"
         "|---|---|---|---|---|---|\n";
}

std::string tableRow(const Row& r) {
  std::ostringstream s;
  s << "| " << r.task << " | " << (r.compiled ? "compiled" : "no (" + r.stage + ")") << " | "
    << (r.cover ? std::to_string(r.cover->covered) + "/" + std::to_string(r.cover->operators) : "—") << " | "
    << (r.cover ? percent(r.cover->coveredUs, r.cover->totalUs) : "—") << " | " << oneLine(sizesText(r.sizes), 90)
    << " | ";
  std::string left = leftText(r.uncovered);
  if (!r.compiled) s << oneLine(r.reason, 160) << (left.empty() ? "" : "; left: " + oneLine(left, 80));
  else s << (left.empty() ? "—" : oneLine(left, 160));
  s << " |\n";
  return s.str();
}

struct Totals {
  int tasks = 0, captured = 0, compiled = 0, fullyCovered = 0;
  int independentRows = 0;   // compiled, and the batch probe found every row computed from itself alone
  double operatorShare = 0;  // sum over tasks of the share of operators in compiled code (0 without)
  double timeShare = 0;      // the same for the estimated GPU time
  void add(const Row& r) {
    ++tasks;
    if (r.cover) ++captured;
    if (r.compiled) ++compiled;
    if (r.fullyCovered) ++fullyCovered;
    if (r.compiled && r.batch.is_object() && r.batch.value("rows_independent", false)) ++independentRows;
    if (r.compiled && r.cover && r.cover->operators > 0) {
      operatorShare += static_cast<double>(r.cover->covered) / r.cover->operators;
      timeShare += r.cover->totalUs > 0 ? r.cover->coveredUs / r.cover->totalUs : 0.0;
    }
  }
  json toJson() const {
    auto share = [&](double n) { return tasks ? n / tasks : 0.0; };
    return {{"tasks", tasks},
            {"captured", captured},
            {"compiled", compiled},
            {"fullyCovered", fullyCovered},
            {"independentRows", independentRows},
            {"compiledShare", share(compiled)},
            {"fullyCoveredShare", share(fullyCovered)},
            {"meanOperatorShare", share(operatorShare)},
            {"meanGpuTimeShareEstimate", share(timeShare)}};
  }
};

std::string levelName(int level) { return level > 0 ? "level" + std::to_string(level) : "other"; }

std::string summaryTable(const std::vector<Row>& rows) {
  std::map<int, Totals> levels;
  Totals all;
  for (const auto& r : rows) {
    levels[r.level > 0 ? r.level : 1 << 30].add(r);
    all.add(r);
  }
  std::ostringstream s;
  s << "| level | tasks | graph captured | compiled candidate | every operator covered | operators in compiled code "
       "(mean) | est. GPU time in compiled code (mean) | rows independent (another batch size in chunks) |\n"
       "|---|---|---|---|---|---|---|---|\n";
  auto line = [&](const std::string& name, const Totals& t) {
    s << "| " << name << " | " << t.tasks << " | " << t.captured << " | " << t.compiled << " ("
      << percent(t.compiled, t.tasks) << ") | " << t.fullyCovered << " (" << percent(t.fullyCovered, t.tasks) << ") | "
      << percent(t.operatorShare, t.tasks) << " | " << percent(t.timeShare, t.tasks) << " | " << t.independentRows << " ("
      << percent(t.independentRows, t.tasks) << ") |\n";
  };
  for (const auto& [level, t] : levels) line(levelName(level == 1 << 30 ? 0 : level), t);
  line("all", all);
  return s.str();
}

// A reason with its specifics (paths, line numbers, sizes, tensor ids) blurred, so that tasks
// failing the same way count together.
std::string reasonKey(const std::string& reason) {
  static const std::regex path(R"(\S*/)");
  static const std::regex number(R"(\d+)");
  static const std::regex where(R"( \(node \d+, [^)]*\))");
  std::string key = std::regex_replace(std::regex_replace(reason, where, ""), path, "");
  key = std::regex_replace(key, number, "N");
  return oneLine(key, 150);
}

std::string reasonsSection(const std::vector<Row>& rows) {
  std::ostringstream s;
  // Why there is no compiled candidate.
  std::map<std::string, std::vector<std::string>> why;
  for (const auto& r : rows)
    if (!r.compiled) why[reasonKey(r.reason)].push_back(r.task);
  std::vector<std::pair<std::string, std::vector<std::string>>> whyList(why.begin(), why.end());
  std::stable_sort(whyList.begin(), whyList.end(), [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  s << "## Why no candidate\n\n";
  if (whyList.empty()) s << "Every task got a compiled candidate.\n";
  else {
    s << "| tasks | reason (numbers shown as N) | e.g. |\n|---|---|---|\n";
    for (const auto& [reason, tasks] : whyList) {
      std::string eg;
      for (std::size_t i = 0; i < tasks.size() && i < 3; ++i) eg += (i ? ", " : "") + tasks[i];
      s << "| " << tasks.size() << " | " << reason << " | " << eg << " |\n";
    }
  }
  // What stays in PyTorch, by operator: tasks, operators, the most common reason.
  struct OpCount {
    std::set<std::string> tasks;
    int operators = 0;
    std::map<std::string, int> reasons;
  };
  std::map<std::string, OpCount> ops;
  for (const auto& r : rows)
    for (const auto& u : r.uncovered) {
      const auto e = coverage::parseUncovered(u);
      auto& c = ops[e.op];
      c.tasks.insert(r.task);
      ++c.operators;
      ++c.reasons[reasonKey(e.reason)];
    }
  std::vector<std::pair<std::string, OpCount>> opList(ops.begin(), ops.end());
  std::stable_sort(opList.begin(), opList.end(),
                   [](const auto& a, const auto& b) { return a.second.tasks.size() > b.second.tasks.size(); });
  s << "\n## Left in PyTorch, by operator\n\n";
  if (opList.empty()) s << "Nothing: every planned task covers every operator.\n";
  else {
    s << "| operator | tasks | operators | most common reason |\n|---|---|---|---|\n";
    for (const auto& [op, c] : opList) {
      auto top = std::max_element(c.reasons.begin(), c.reasons.end(),
                                  [](const auto& a, const auto& b) { return a.second < b.second; });
      s << "| " << op << " | " << c.tasks.size() << " | " << c.operators << " | "
        << (top == c.reasons.end() ? "" : top->first) << " |\n";
    }
  }
  return s.str();
}

const char* kMethod =
    "Sizes: the harness loads each task with `shrink` (harness/stitchcuda_harness/task_shrink.py), one rule for "
    "every task: the module-level integers `get_inputs()`/`get_init_inputs()` read (and the int elements of "
    "module-level tuples and lists) are halved, batch sizes first (down to 1), then the largest other size above "
    "16 (down to 16, an odd size staying odd; ints of 16 or less are never touched), one at a time, while one "
    "forward — run on the meta device, without computing — is over a budget: inputs 64 MiB, parameters and "
    "buffers 1 GiB, every tensor the forward writes 512 MiB, 2000 ATen operators, 2 s of this CPU (estimated "
    "from the forward's FLOPs and bytes at a matmul's, a convolution's and a write's rate measured once per "
    "worker: Debian's PyTorch multiplies matrices at 1-3 GFLOP/s). A halving that makes the model raise, or that "
    "reduces no measure over budget, is undone, retried once together with the sizes of the same value, and "
    "that size left alone. Tasks stay over a budget only where no size is left to halve (\"still over\"). The "
    "sizes used are in the table and in results.json (`sizes`).\n\n"
    "GPU time covered is an estimate, not a measurement: each captured ATen operator (after the built-in brain's "
    "graph normalization; views cost nothing) costs max(bytes read and written / 3.35 TB/s, FLOPs / 66.9 TFLOP/s "
    "FP32 — 494.7 TFLOP/s TF32 for convolutions, as cuDNN runs them under PyTorch's defaults —, 2 µs), H100 SXM "
    "ceilings, at the reduced sizes; the share is that of the operators the plan does not leave in PyTorch. The "
    "per-level means count a task without a compiled candidate as 0.\n\n"
    "Operators covered: the plan's own count (the forward's computing ATen operators, views and allocations "
    "excluded; `coverage` of the plan), where the plan gives one.\n\n"
    "A candidate counts as compiled when the built-in brain planned and generated it and nvcc built "
    "candidate.cu for sm_90 (`buildCandidate`, as `stitchcuda optimize` does); nothing is run or verified on "
    "this machine.\n\n"
    "Rows independent: compiled candidates whose capture's batch probe (the forward again on half the batch, "
    "protocol/HARNESS.md `batch`) found every row of the inputs' and outputs' common dim 0 computed from itself "
    "alone, at the reduced sizes: their saved program runs another batch size in chunks of its rows, unless it "
    "writes module state (results.json `batch` says why not).\n";

// ---- the run -----------------------------------------------------------------------------------

class CoverageRun {
public:
  CoverageRun(fs::path out, json header) : out_(std::move(out)), header_(std::move(header)) {}

  void add(Row row) {
    std::lock_guard lock(mutex_);
    std::cout << tableRow(row) << std::flush;
    rows_.push_back(std::move(row));
    saveLocked();
  }
  std::vector<Row> rows() const {
    std::lock_guard lock(mutex_);
    return rows_;
  }
  bool finish() {
    std::lock_guard lock(mutex_);
    saveLocked();
    std::cout << "\n" << tableHeader();
    for (const auto& r : rows_) std::cout << tableRow(r);
    std::cout << "\n" << summaryTable(rows_) << "\nresults: " << (out_ / "results.json").string() << ", "
              << (out_ / "results.md").string() << std::endl;
    return !writeFailed_;
  }

private:
  void saveLocked() {
    std::sort(rows_.begin(), rows_.end(), [](const Row& a, const Row& b) {
      auto rank = [](int level) { return level > 0 ? level : 1 << 30; };
      return rank(a.level) != rank(b.level) ? rank(a.level) < rank(b.level) : a.task < b.task;
    });
    std::map<int, Totals> levels;
    Totals all;
    for (const auto& r : rows_) {
      levels[r.level].add(r);
      all.add(r);
    }
    json levelJson = json::object();
    for (const auto& [level, t] : levels) levelJson[levelName(level)] = t.toJson();
    json results = json::array();
    for (const auto& r : rows_) results.push_back(toJson(r));
    json doc = header_;
    doc["summary"] = {{"all", all.toJson()}, {"levels", levelJson}};
    doc["results"] = results;
    auto error = writeAtomically(out_ / "results.json", doc.dump(1, ' ', false, json::error_handler_t::replace) + "\n");
    if (!error) error = writeAtomically(out_ / "results.md", markdownLocked());
    if (error) {
      std::cerr << "stitchcuda bench: " << *error << "\n";
      writeFailed_ = true;
    }
  }

  std::string markdownLocked() const {
    std::ostringstream md;
    const json env = header_.value("environment", json::object());
    md << "# StitchCUDA coverage on the CPU (no GPU)\n\n";
    md << "- " << header_.value("date", "") << ": `" << header_.value("command", "") << "`\n";
    md << "- source: " << header_.value("source", "unknown") << " (git describe; \"-dirty\": with uncommitted changes)\n";
    md << "- PyTorch " << env.value("torch", "?") << ", Python " << env.value("python", "?") << ", "
       << env.value("nvcc", "nvcc ?") << ", candidates built for sm_90\n";
    md << "- " << header_.value("selection", "") << "\n\n" << kMethod << "\n## Summary\n\n" << summaryTable(rows_)
       << "\n" << reasonsSection(rows_) << "\n## Tasks\n\n" << tableHeader();
    for (const auto& r : rows_) md << tableRow(r);
    return md.str();
  }

  const fs::path out_;
  const json header_;
  mutable std::mutex mutex_;
  std::vector<Row> rows_;
  bool writeFailed_ = false;
};

// A short tool's stdout (a version), or empty when it cannot run or fails.
std::string outputOf(std::vector<std::string> argv) {
  process::ChildSpec spec;
  spec.argv = std::move(argv);
  spec.pipeStderr = true;  // kept from the terminal: a missing git or nvcc is said by the result
  std::string text;
  const auto run = process::runChild(spec, std::chrono::seconds(30), [&](std::string_view l) { (text += l) += '\n'; });
  return run.exitedWith(0) ? text : "";
}

// The source tree the harness comes from, as `git describe --always --dirty` names it.
std::string sourceVersion(const fs::path& harnessDir) {
  std::string text = outputOf({"git", "-C", harnessDir.string(), "describe", "--always", "--dirty"});
  text = text.substr(0, text.find('\n'));
  return text.empty() ? "unknown" : text;
}

std::string nvccVersion() {
  for (const char* nvcc : {"nvcc", "/usr/local/cuda/bin/nvcc"}) {
    std::stringstream lines(outputOf({nvcc, "--version"}));
    std::string last;
    for (std::string l; std::getline(lines, l);)
      if (l.find("release") != std::string::npos) last = l;
    if (!last.empty()) return "nvcc " + oneLine(last.substr(last.find("release")), 60);
  }
  return "nvcc not found";
}

// Compares this run with an expectation file; returns the regressions and prints what changed.
int checkExpectation(const fs::path& file, const std::vector<Row>& rows) {
  json doc;
  try {
    doc = json::parse(readText(file));
  } catch (const std::exception& e) {
    std::cerr << "stitchcuda bench: cannot read the expectation " << file.string() << ": " << e.what() << "\n";
    return -1;
  }
  const json tasks = doc.value("tasks", json::object());
  int regressions = 0, checked = 0;
  std::vector<std::string> improved, unknown;
  for (const auto& r : rows) {
    if (!tasks.contains(r.task)) {
      unknown.push_back(r.task);
      continue;
    }
    ++checked;
    const json& e = tasks[r.task];
    const bool wasCompiled = e.value("compiled", false), wasFull = e.value("fullyCovered", false);
    if (wasCompiled && !r.compiled) {
      ++regressions;
      std::cout << "REGRESSION " << r.task << ": compiled in " << file.filename().string() << ", now: " << r.reason << "\n";
    } else if (wasFull && !r.fullyCovered) {
      ++regressions;
      std::cout << "REGRESSION " << r.task << ": every operator was covered, now left in PyTorch: "
                << oneLine(leftText(r.uncovered), 200) << "\n";
    } else if ((!wasCompiled && r.compiled) || (!wasFull && r.fullyCovered)) {
      improved.push_back(r.task);
    }
  }
  std::cout << "expectation " << file.string() << ": " << checked << " task(s) checked, " << regressions
            << " regression(s)";
  if (!improved.empty()) {
    std::cout << "; better than expected:";
    for (const auto& t : improved) std::cout << " " << t;
  }
  if (!unknown.empty()) std::cout << "; not in the file: " << unknown.size();
  std::cout << "\n";
  if (!improved.empty() || !unknown.empty())
    std::cout << "(record the new outcome with " << doc.value("update", std::string("--write-expect FILE")) << ")\n";
  return regressions;
}

std::optional<std::string> writeExpectation(const fs::path& file, const std::vector<Row>& rows, const std::string& command) {
  json tasks = json::object();
  for (const auto& r : rows) {
    json t{{"compiled", r.compiled}, {"fullyCovered", r.fullyCovered}};
    if (!r.compiled) t["reason"] = oneLine(r.reason, 200);
    tasks[r.task] = t;
  }
  json doc{{"format", "stitchcuda.coverage-expect/1"},
           {"date", agents::utcNow()},
           {"update", command},
           {"tasks", tasks}};
  return writeAtomically(file, doc.dump(1) + "\n");
}

}  // namespace

namespace {

// The tasks of `found` this run takes: every `every`-th, then those of slice `sliceIndex` of `sliceCount`.
std::vector<BenchTask> selectTasks(const CoverageArgs& args, const std::vector<BenchTask>& found) {
  std::vector<BenchTask> tasks;
  for (std::size_t i = 0; i < found.size(); ++i)
    if (i % static_cast<std::size_t>(args.every) == 0 &&
        i % static_cast<std::size_t>(args.sliceCount) == static_cast<std::size_t>(args.sliceIndex))
      tasks.push_back(found[i]);
  return tasks;
}

// The harness's `hello` (its Python and PyTorch), or nullopt with the reason said on stderr.
std::optional<json> harnessHello(const HostConfig& config, const WorkerSettings& settings) {
  agents::CancelSource never;
  WorkerProcess probe(settings, nullptr);
  auto reply = probe.call("hello", json::object(), std::chrono::seconds(120), never.token());
  if (!reply.ok()) {
    std::cerr << "stitchcuda bench: the harness did not answer (" << config.python << ", "
              << config.harnessDir.string() << "): " << reply.error->message << " [" << reply.error->code << "]\n";
    return std::nullopt;
  }
  return *reply.result;
}

// What the results file says about the run before its rows: the command, the selection, where it ran
// and the cost model's ceilings.
json coverageHeader(const HostConfig& config, const CoverageArgs& args, const json& hello, const std::string& selection,
                    const std::string& command, int jobs) {
  const coverage::Ceilings ceilings{};
  return json{{"format", "stitchcuda.coverage/1"},
              {"date", agents::utcNow()},
              {"command", command},
              {"selection", selection},
              {"source", sourceVersion(config.harnessDir)},
              {"environment",
               {{"python", hello.value("python", "?")},
                {"torch", hello.value("torch", "?")},
                {"cudaAvailable", hello.value("cudaAvailable", false)},
                {"nvcc", nvccVersion()},
                {"arch", "sm_90"},
                {"jobs", args.slurm.enabled ? json("slurm") : json(jobs)}}},
              {"method", kMethod},
              {"ceilings",
               {{"bytesPerSecond", ceilings.bytesPerUs * 1e6},
                {"fp32FlopsPerSecond", ceilings.fp32FlopsPerUs * 1e6},
                {"tf32FlopsPerSecond", ceilings.tf32FlopsPerUs * 1e6},
                {"floorSecondsPerOperator", ceilings.floorUs * 1e-6}}}};
}

// The tasks as one Slurm job array, each element's row added to `run` as it arrives (a lost element's
// as a "slurm" failure). The array's exit status.
int runOnSlurm(const CoverageArgs& args, const fs::path& out, const std::vector<std::string>& keys,
               const std::vector<BenchTask>& tasks, CoverageRun& run) {
  SlurmArrayRun array{out / "slurm", keys, {}, false, args.resume};
  return runSlurmArray(
      args.slurm, array,
      [&](const json& element) {
        Row row = rowFromJson(element["result"]);
        row.slurm = element["slurm"];
        run.add(std::move(row));
      },
      [&](std::size_t i, const std::string& why) {
        Row row;
        row.task = tasks[i].key;
        row.level = tasks[i].level;
        row.file = tasks[i].file.string();
        row.stage = "slurm";
        row.reason = why;
        run.add(std::move(row));
      });
}

// The tasks on this machine, `jobs` harness workers taking them in order.
void runLocally(const WorkerSettings& settings, const RunPlan& plan, const std::vector<BenchTask>& tasks, int jobs,
                CoverageRun& run) {
  std::mutex queueMutex;
  std::size_t next = 0;
  std::vector<std::thread> threads;
  for (int j = 0; j < jobs; ++j)
    threads.emplace_back([&] {
      WorkerProcess worker(settings, nullptr);
      while (true) {
        BenchTask task;
        {
          std::lock_guard lock(queueMutex);
          if (next >= tasks.size()) return;
          task = tasks[next++];
        }
        run.add(runTask(worker, plan, task));
      }
    });
  for (auto& t : threads) t.join();
}

// --write-expect and --expect over the finished rows: false when the expectation cannot be written or a
// task regressed against it.
bool handleExpectations(const CoverageArgs& args, const std::vector<Row>& rows, const std::string& command) {
  bool ok = true;
  if (args.writeExpect) {
    if (auto error = writeExpectation(*args.writeExpect, rows, command)) {
      std::cerr << "stitchcuda bench: " << *error << "\n";
      ok = false;
    } else {
      std::cout << "expectation written: " << args.writeExpect->string() << "\n";
    }
  }
  if (args.expect && checkExpectation(*args.expect, rows) != 0) ok = false;
  return ok;
}

}  // namespace

int runCoverageBench(const HostConfig& config, const CoverageArgs& args) {
  std::error_code ec;
  if (!fs::exists(args.dir, ec)) {
    std::cerr << "stitchcuda bench: no such folder or file: " << args.dir.string() << "\n";
    return 2;
  }
  auto found = bench::findTasks(args.dir);
  if (!found) {
    std::cerr << "stitchcuda bench: " << found.error() << "\n";
    return 1;
  }
  const std::vector<BenchTask> tasks = selectTasks(args, found.value());
  if (tasks.empty()) {
    std::cerr << "stitchcuda bench: no task (*.py) under " << args.dir.string() << " in this selection\n";
    return 1;
  }
  const fs::path out = fs::absolute(args.out);
  fs::create_directories(out, ec);
  if (ec) {
    std::cerr << "stitchcuda bench: cannot create " << out.string() << ": " << ec.message() << "\n";
    return 1;
  }
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const int jobs = std::max(1, std::min<int>(args.jobs > 0 ? args.jobs : static_cast<int>(cores),
                                             static_cast<int>(tasks.size())));
  // Each worker's PyTorch gets its share of the cores, not all of them each.
  if (!std::getenv("OMP_NUM_THREADS"))
    ::setenv("OMP_NUM_THREADS", std::to_string(std::max(1u, cores / static_cast<unsigned>(jobs))).c_str(), 1);

  WorkerSettings settings{config.python, config.harnessDir, {}, std::nullopt, config.loadTimeoutSeconds};
  RunPlan plan;
  plan.out = out;
  plan.cacheDir = out / ".cache";
  plan.deadline = std::chrono::milliseconds(static_cast<long long>(args.timeoutSeconds * 1000));
  std::vector<std::string> keys;
  for (const auto& t : tasks) keys.push_back(t.key);
  if (args.slurm.element)  // one task of a Slurm array, on its node
    return runSlurmElement(args.slurm, keys, [&](std::size_t i) -> std::optional<json> {
      WorkerProcess worker(settings, nullptr);
      const Row row = runTask(worker, plan, tasks[i]);
      json j = toJson(row);
      if (row.cover)  // unrounded, so that the merged table is the local run's to the digit
        j["gpuTimeEstimateUs"] = {{"total", row.cover->totalUs}, {"covered", row.cover->coveredUs}};
      return j;
    });
  const std::optional<json> hello = harnessHello(config, settings);
  if (!hello) return 1;
  std::string selection = std::to_string(tasks.size()) + " of the " + std::to_string(found.value().size()) +
                          " task(s) under " + args.dir.string();
  if (args.every > 1) selection += " (every " + std::to_string(args.every) + "th, from the first, in level/name order)";
  if (args.sliceCount > 1)
    selection += " (slice " + std::to_string(args.sliceIndex + 1) + "/" + std::to_string(args.sliceCount) + ")";
  const std::string command = commandLineOf(args.argv);
  std::cout << "bench --no-gpu: " << selection << "; PyTorch " << hello->value("torch", "?") << " on the CPU, "
            << (args.slurm.enabled ? "as a Slurm job array" : std::to_string(jobs) + " at a time") << "\n\n"
            << tableHeader() << std::flush;

  CoverageRun run(out, coverageHeader(config, args, *hello, selection, command, jobs));
  if (args.slurm.enabled) {
    if (const int status = runOnSlurm(args, out, keys, tasks, run); status != 0) return status;
  }
  process::adoptOrphans();
  if (!args.slurm.enabled) runLocally(settings, plan, tasks, jobs, run);
  process::stopAdoptedGroupLeaders();
  bool ok = run.finish();
  return handleExpectations(args, run.rows(), command) && ok ? 0 : 1;
}

}  // namespace stitch::server
