// The score subcommand; see ScoreCommand.h.
#include "server/ScoreCommand.h"

#include "server/BatchRows.h"
#include "server/ResultFiles.h"
#include "server/ScoreJudge.h"
#include "server/ScoreMethod.h"
#include "server/ScoreTable.h"
#include "server/Scoring.h"
#include "server/WorkerProcess.h"

#include "agents/JobLog.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

namespace stitch::server {
namespace {

using protocol::json;

std::string number(const json& v) {
  if (!v.is_number()) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v.get<double>());
  return buf;
}

std::string joined(const json& list, const char* sep = "; ") {
  std::string out;
  for (const auto& e : list) out += (out.empty() ? "" : sep) + (e.is_string() ? e.get<std::string>() : e.dump());
  return out;
}

void printScore(const json& r) {
  const json& rubric = r["rubric"];
  std::cout << "REWARD " << number(r["reward"]) << "  " << r.value("candidate", "") << "  (" << r.value("skill", "")
            << ", verdict " << r.value("verdictStatus", "?") << ", " << r.value("verdictSource", "") << ")\n"
            << "  rule " << number(r["rule"]["score"]) << ": " << joined(r["rule"].value("evidence", json::array())) << "\n";
  const json& hack = rubric["anti_hacking"];
  std::cout << "  anti-hacking " << number(hack["score"]) << ":";
  std::map<std::string, std::vector<std::string>> byState;  // "passed" → guards, "failed" → guards, ...
  for (const auto& [check, state] : hack["checks"].items()) byState[state.get<std::string>()].push_back(check);
  std::vector<std::string> groups;
  if (auto passed = byState.extract("passed")) groups.push_back(std::to_string(passed.mapped().size()) + " guards passed");
  for (const auto& [state, checks] : byState) {
    std::string g;
    for (const auto& c : checks) g += c + " ";
    groups.push_back(g + state);
  }
  for (std::size_t i = 0; i < groups.size(); ++i) std::cout << (i ? "; " : " ") << groups[i];
  std::cout << "\n";
  for (const auto& f : hack.value("findings", json::array()))
    std::cout << "    ✗ " << f.value("check", "?") << ": " << f.value("message", "")
              << (f["file"].is_string() ? " (" + f["file"].get<std::string>() +
                                              (f["line"].is_number() ? ":" + std::to_string(f["line"].get<int>()) : "") + ")"
                                        : "")
              << "\n";
  const json& eng = rubric["cuda_engineering"];
  std::cout << "  cuda engineering " << number(eng["score"]) << " (read " << eng["compiled"].value("read", "?")
            << ", metrics " << eng.value("metrics", json::object()).value("read", "none") << "):";
  for (const auto& [name, f] : eng["features"].items())
    if (f.value("present", false)) std::cout << " " << name << " [" << joined(f.value("evidence", json::array())) << "]";
  std::cout << "\n  operator coverage " << number(rubric["operator_coverage"]["score"]) << ": "
            << joined(rubric["operator_coverage"].value("evidence", json::array())) << " (" << r.value("coverageSource", "")
            << ")\n  skill compliance " << number(rubric["skill_compliance"]["score"]) << ": "
            << joined(rubric["skill_compliance"].value("evidence", json::array())) << "\n";
  for (const auto& part : r.value("needsGpu", json::array())) std::cout << "  needs a GPU: " << part.get<std::string>() << "\n";
  if (!r.contains("judge")) return;
  const json& judge = r["judge"];
  if (judge.contains("error")) {
    std::cout << "  judge: not available: " << judge["error"].get<std::string>() << "\n";
    return;
  }
  std::cout << "  judge (" << judge.value("provider", "") << " " << judge.value("model", "")
            << ", beside the scores above, never replacing them):";
  const json scores = judge.value("scores", json::object());
  for (const auto& [name, s] : scores.items())
    std::cout << " " << name << " " << number(s["score"]) << ";";
  std::cout << " " << judge.value("summary", "") << "\n";
}

// Scores one request and, with --judge, adds the LLM's rubric beside it.
ScoreResult scoreWithJudge(agents::Worker& worker, const HostConfig& config, const ScoreArgs& args, ScoreInputs inputs) {
  const ScoreInputs kept = inputs;
  auto r = scoreCandidate(worker, std::move(inputs), config.jobsDir / ".verify-cache",
                          callDeadline(config.workerDeadline, config.loadTimeoutSeconds), agents::CancelToken());
  if (r.ok() && args.judge) r.value()["judge"] = judgeScore(*args.judge, config, kept, r.value());
  return r;
}

int scoreOne(const HostConfig& config, const ScoreArgs& args) {
  ScoreInputs inputs;
  try {
    inputs = scoreInputsFrom(args.request);
  } catch (const std::exception& e) {
    std::cerr << "stitchcuda score: " << e.what() << "\n";
    return 2;
  }
  auto worker = batchWorker(config, std::nullopt);
  auto r = scoreWithJudge(*worker, config, args, std::move(inputs));
  if (!r.ok()) {
    if (args.asJson) std::cout << json{{"error", {{"code", r.error().code}, {"message", r.error().message}}}}.dump(2) << "\n";
    else std::cerr << "stitchcuda score: " << r.error().message << " [" << r.error().code << "]\n";
    return 2;
  }
  if (args.asJson) std::cout << r.value().dump(2) << "\n";
  else printScore(r.value());
  return 0;
}

// One row per candidate with a kept verdict (verdict.json) in each job folder under `dir` (a bench
// run's --jobs-dir), in name order so that a resumed run numbers them the same.
std::vector<std::string> jobRows(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> logs;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (std::filesystem::is_regular_file(e.path() / "log.jsonl")) logs.push_back(e.path() / "log.jsonl");
  std::sort(logs.begin(), logs.end());
  std::vector<std::string> rows;
  for (const auto& log : logs) {
    agents::JobState job;
    try {
      for (const auto& event : agents::readJobLog(log).events) job.apply(event);
    } catch (const std::exception& e) {
      std::cerr << "stitchcuda score: skipped " << log.string() << ": " << e.what() << "\n";
      continue;
    }
    job.logPath = log.string();
    for (const auto& c : job.candidates) {
      json row = candidateScoreRequest(job, c.id);
      if (!row.contains("verdict")) continue;  // not judged (cancelled, or the verifier failed)
      row["id"] = job.jobId + "/" + c.id;
      rows.push_back(row.dump());
    }
  }
  return rows;
}

int scoreBatch(const HostConfig& config, const ScoreArgs& args) {
  std::vector<std::string> rows;
  if (!args.jobs.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(args.jobs, ec)) {
      std::cerr << "stitchcuda score: no jobs folder " << args.jobs << "\n";
      return 2;
    }
    rows = jobRows(args.jobs);
  } else {
    std::ifstream in(args.batch);
    if (!in) {
      std::cerr << "stitchcuda score: cannot read " << args.batch << "\n";
      return 2;
    }
    for (std::string line; std::getline(in, line);) rows.push_back(line);
  }

  // A row's output line: its score, or the error that kept it from one.
  auto scoreRow = [&](agents::Worker& worker, std::size_t i, json row) {
    json line = rowLineHead(i, row);
    try {
      if (row.is_discarded()) throw std::invalid_argument("line is not JSON");
      if (args.request.contains("weights") && !row.contains("weights")) row["weights"] = args.request["weights"];
      auto r = scoreWithJudge(worker, config, args, scoreInputsFrom(row));
      if (r.ok()) line.update(r.value());
      else line["error"] = {{"code", r.error().code}, {"message", r.error().message}};
    } catch (const std::exception& e) {
      line["error"] = {{"code", "invalid_row"}, {"message", e.what()}};
    }
    return line;
  };
  const auto outcome = runRowBatch(config, RowBatch{"score", "scored", std::move(rows), args.out, args.gpus, args.slurm}, scoreRow);
  if (args.slurm.element || outcome.status != 0) return outcome.status;
  if (!args.table.empty()) {
    std::vector<json> lines;
    std::istringstream all(readText(args.out));
    for (std::string line; std::getline(all, line);)
      if (json j = json::parse(line, nullptr, false); j.is_object()) lines.push_back(std::move(j));
    if (auto error = writeAtomically(args.table, scoreTable(lines))) {
      std::cerr << "stitchcuda score: " << *error << "\n";
      return 2;
    }
  }
  return outcome.failed ? 1 : 0;
}

}  // namespace

CLI::App* addScoreCommand(CLI::App& app, ScoreArgs& a) {
  CLI::App* cmd = app.add_subcommand(
      "score", "the rubric reward of a candidate, or of many (protocol/SCORE.md)");
  static const std::vector<std::array<std::string, 4>> kFields = {
      {"--reference", "reference", "TASK.py", "the task's reference model"},
      {"--candidate", "candidate", "CAND", "the candidate: a ModelNew file or a candidate folder"},
      {"--verdict", "verdict", "VERDICT.json", "the candidate's recorded verdict (else the verifier runs now)"},
      {"--previous", "previous", "CAND", "the candidate this one refines (with --feedback)"},
      {"--feedback", "feedback", "FEEDBACK.json", "the feedback the refinement was given"},
      {"--previous-verdict", "previousVerdict", "VERDICT.json", "the previous candidate's verdict"},
      {"--plan", "plan", "PLAN.json", "the plan the candidate follows (operator coverage from it)"},
      {"--profile", "profile", "NCU.csv",
       "Nsight Compute's CSV of the candidate's kernels, as the optimize loop runs ncu (else its folder's ncu.csv)"}};
  for (const auto& [name, key, value, help] : kFields)
    cmd->add_option(name)->description(help)->type_name(value)->group("One candidate")->each(
        [&a, key = key](const std::string& text) { a.request[key] = text; });
  cli::addList(*cmd, "--allow-precision", a.allowPrecision,
               [](const std::string& name, const std::string& text) {
                 return cli::oneOf(name, text, {"tf32", "fp16", "bf16"});
               },
               "a lower precision the candidate was allowed (repeatable)", "tf32|fp16|bf16")
      ->group("One candidate");
  cli::addPrecision(*cmd, a.precision)->group("One candidate");
  cmd->add_flag("--json", a.asJson, "the score as JSON")->group("One candidate");
  cli::addText(*cmd, "--batch", a.batch, "score every row of this file (one JSON object a line)", "ROWS.jsonl")
      ->group("Many candidates");
  cli::addText(*cmd, "--jobs", a.jobs, "score every candidate with a kept verdict in these job folders (a bench run's)",
               "JOBS_DIR")
      ->group("Many candidates");
  cli::addText(*cmd, "--out", a.out, "one JSON line per row; rows already scored there are kept and skipped",
               "SCORES.jsonl")
      ->group("Many candidates");
  cli::addText(*cmd, "--table", a.table, "at the end, the table of speedup, rubric and reward per candidate", "FILE.md")
      ->group("Many candidates");
  cli::addValue(*cmd, "--gpus", a.gpus, cli::positiveWholeNumber, "one worker per GPU (default 1)", "N")
      ->group("Many candidates");
  addSlurmOptions(*cmd, a.slurm);
  cli::addList(*cmd, "--weight", a.weights,
               [](const std::string& name, const std::string& text) {
                 const auto eq = text.find('=');
                 if (eq == std::string::npos || eq == 0) throw cli::UsageError(name + " takes NAME=NUMBER, not " + text);
                 try {
                   cli::anyNumber(name, text.substr(eq + 1));
                 } catch (const cli::UsageError&) {
                   throw cli::UsageError(name + " takes NAME=NUMBER, not " + text);
                 }
                 return text;
               },
               "a rubric dimension's weight in the combined reward (repeatable)", "NAME=W");
  cli::addValue(
      *cmd, "--judge", a.judgeProvider,
      [](const std::string& name, const std::string& text) { return cli::oneOf(name, text, {"openai", "anthropic"}); },
      "an LLM's rubric beside the deterministic one, never replacing it", "openai|anthropic");
  cli::addText(*cmd, "--judge-model", a.judgeModel, "the judge's model", "M");
  cli::addText(*cmd, "--judge-base-url", a.judgeBaseUrl, "the judge's endpoint", "URL");
  cmd->footer(
      "The rule reward (compiled, correct, speedup), anti-hacking, CUDA engineering, operator coverage and skill\n"
      "compliance, each with its evidence, and the combined reward; from a recorded verdict or the verifier run now.\n"
      "one candidate: stitchcuda score --reference TASK.py --candidate CAND [--verdict VERDICT.json]\n"
      "               [--profile NCU.csv] [--json] ...\n"
      "many:          stitchcuda score --batch ROWS.jsonl --out SCORES.jsonl [--gpus N] [--table FILE.md]\n"
      "               stitchcuda score --jobs JOBS_DIR --out SCORES.jsonl ...\n"
      "past one machine: ... --slurm [--partition P] [--time T]: one Slurm job array, a GPU per row (protocol/SLURM.md)\n"
      "exit: 0 scored (every row, in a batch), 1 some batch row failed, 2 usage or harness error");
  cmd->callback([cmd, &a] {
    for (const auto& p : a.allowPrecision) a.request["allowPrecision"].push_back(p);
    if (a.precision) a.request["precision"] = *a.precision;
    for (const auto& w : a.weights) {
      const auto eq = w.find('=');
      a.request["weights"][w.substr(0, eq)] = std::stod(w.substr(eq + 1));
    }
    if (a.judgeProvider || a.judgeModel || a.judgeBaseUrl) {
      if (!a.judgeProvider) throw cli::UsageError("--judge-model and --judge-base-url need --judge openai|anthropic");
      JudgeOptions judge;
      judge.provider = *a.judgeProvider;
      if (a.judgeModel) judge.model = *a.judgeModel;
      if (a.judgeBaseUrl) judge.baseUrl = *a.judgeBaseUrl;
      a.judge = judge;
    }
    const bool single = a.request.contains("reference") || a.request.contains("candidate");
    for (const auto& name : slurmOptionNames())
      if (cmd->get_option(name)->count() > 0 && !a.slurm.enabled)
        throw cli::UsageError(name + " is for a Slurm run: it needs --slurm");
    if (a.slurm.enabled && (a.batch.empty() && a.jobs.empty()))
      throw cli::UsageError("--slurm scores many candidates: it needs --batch ROWS.jsonl or --jobs JOBS_DIR");
    if (a.slurm.enabled && cmd->get_option("--gpus")->count() > 0)
      throw cli::UsageError("--gpus is for one machine, not with --slurm (each element gets one GPU)");
    const bool many = !a.batch.empty() || !a.jobs.empty();
    if (!many) {
      if (!a.request.contains("reference") || !a.request.contains("candidate"))
        throw cli::UsageError(std::string(a.request.contains("reference") ? "--candidate CAND" : "--reference TASK.py") +
                              " is required (or --batch ROWS.jsonl / --jobs JOBS_DIR with --out SCORES.jsonl)");
    } else if (!a.batch.empty() && !a.jobs.empty()) {
      throw cli::UsageError("--batch and --jobs each name the rows to score: give one of them");
    } else if (single) {
      throw cli::UsageError(std::string(!a.batch.empty() ? "--batch" : "--jobs") +
                            " scores many candidates: --reference and --candidate are for one");
    } else if (a.out.empty()) {
      throw cli::UsageError(std::string(!a.batch.empty() ? "--batch" : "--jobs") + " needs --out SCORES.jsonl");
    }
  });
  return cmd;
}

int runScore(const HostConfig& config, const ScoreArgs& args) {
  return args.batch.empty() && args.jobs.empty() ? scoreOne(config, args) : scoreBatch(config, args);
}

}  // namespace stitch::server
