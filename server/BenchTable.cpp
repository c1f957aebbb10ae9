// Summary metrics and tables of the bench; see BenchTable.h.
#include "server/BenchTable.h"

#include "protocol/NumberText.h"

#include <algorithm>
#include <cmath>

namespace stitch::server::bench {
namespace {

using protocol::fixed;

std::string speedup(const std::optional<double>& v) { return v ? fixed(*v, 2) + "x" : "—"; }
std::string percent(const std::optional<double>& v) { return v ? fixed(*v * 100.0, 0) + "%" : "—"; }
std::string fraction(double v) { return fixed(v, 2); }

// A table cell: one line, no column separators.
std::string cell(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  if (out.size() > 160) out = out.substr(0, 160) + "…";
  return out;
}

std::string verdict(const TaskResult& r) {
  if (r.error) return "error: " + r.errorReason;
  if (r.verified()) return "yes (" + *r.best + ")";
  if (r.needsGpu) return "no GPU: verification needs one";
  if (!r.firstFailedCheck.empty()) return "no: " + r.firstFailedCheck;
  return r.candidatesTried == 0 ? "no: no candidate" : "no";
}

std::string summaryRow(const std::string& name, const Summary& s) {
  return "| " + name + " | " + std::to_string(s.tasks) + " | " + std::to_string(s.verified) + " (" +
         fixed(s.tasks ? 100.0 * s.verified / s.tasks : 0.0, 0) + "%) | " + std::to_string(s.errors) + " | " +
         fraction(s.fast0) + " | " + fraction(s.fast1Eager) + " | " + fraction(s.fast1Compile) + " | " +
         speedup(s.geomeanEager) + " | " + speedup(s.geomeanCompile) + " | " + percent(s.medianRoofline) + " |\n";
}

}  // namespace

std::optional<double> geometricMean(const std::vector<double>& values) {
  double logs = 0;
  int n = 0;
  for (double v : values)
    if (v > 0 && std::isfinite(v)) {
      logs += std::log(v);
      ++n;
    }
  if (n == 0) return std::nullopt;
  return std::exp(logs / n);
}

std::optional<double> median(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2.0;
}

Summary summarize(const std::vector<TaskResult>& results) {
  Summary s;
  std::vector<double> eager, compile, roofline;
  int fasterEager = 0, fasterCompile = 0;
  for (const auto& r : results) {
    ++s.tasks;
    if (r.error) ++s.errors;
    if (r.needsGpu) ++s.needsGpu;
    if (!r.verified()) continue;
    ++s.verified;
    if (r.speedupEager) {
      eager.push_back(*r.speedupEager);
      if (*r.speedupEager > 1.0) ++fasterEager;
    }
    if (r.speedupCompile) {
      compile.push_back(*r.speedupCompile);
      if (*r.speedupCompile > 1.0) ++fasterCompile;
    }
    if (r.rooflineFraction) roofline.push_back(*r.rooflineFraction);
  }
  if (s.tasks > 0) {
    s.fast0 = static_cast<double>(s.verified) / s.tasks;
    s.fast1Eager = static_cast<double>(fasterEager) / s.tasks;
    s.fast1Compile = static_cast<double>(fasterCompile) / s.tasks;
  }
  s.geomeanEager = geometricMean(eager);
  s.geomeanCompile = geometricMean(compile);
  s.medianRoofline = median(roofline);
  return s;
}

std::map<int, Summary> summarizeLevels(const std::vector<TaskResult>& results) {
  std::map<int, std::vector<TaskResult>> byLevel;
  for (const auto& r : results) byLevel[r.level].push_back(r);
  std::map<int, Summary> out;
  for (const auto& [level, rows] : byLevel) out[level] = summarize(rows);
  return out;
}

json toJson(const Summary& s) {
  auto orNull = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  return json{{"tasks", s.tasks},
              {"verified", s.verified},
              {"errors", s.errors},
              {"needsGpu", s.needsGpu},
              {"verifiedFraction", s.fast0},
              {"fast_0", s.fast0},
              {"fast_1_eager", s.fast1Eager},
              {"fast_1_compile", s.fast1Compile},
              {"geomeanSpeedupEager", orNull(s.geomeanEager)},
              {"geomeanSpeedupCompile", orNull(s.geomeanCompile)},
              {"medianRooflineFraction", orNull(s.medianRoofline)}};
}

std::string levelName(int level) { return level > 0 ? "level" + std::to_string(level) : "other"; }

std::string taskTableHeader() {
  return "| task | level | verified | vs eager | vs torch.compile | roofline floor reached | first verified | "
         "candidates |\n|---|---|---|---|---|---|---|---|\n";
}

std::string taskRow(const TaskResult& r) {
  return "| " + cell(r.task) + " | " + levelName(r.level) + " | " + cell(verdict(r)) + " | " + speedup(r.speedupEager) +
         " | " + speedup(r.speedupCompile) + " | " + percent(r.rooflineFraction) + " | " +
         (r.firstVerifiedSeconds ? fixed(*r.firstVerifiedSeconds, 1) + " s" : std::string("—")) + " | " +
         std::to_string(r.candidatesTried) + " |\n";
}

std::string summaryTable(const std::vector<TaskResult>& results) {
  std::string out =
      "| level | tasks | verified | errors | fast_0 | fast_1 vs eager | fast_1 vs torch.compile | geomean vs eager | "
      "geomean vs torch.compile | median roofline floor reached |\n|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& [level, s] : summarizeLevels(results)) out += summaryRow(levelName(level), s);
  const Summary all = summarize(results);
  out += summaryRow("all", all);
  if (all.needsGpu > 0)
    out += "\n" + std::to_string(all.needsGpu) + " of " + std::to_string(all.tasks) +
           " task(s) could not be verified: verification and timing need a GPU, and none was visible.\n";
  return out;
}

}  // namespace stitch::server::bench
