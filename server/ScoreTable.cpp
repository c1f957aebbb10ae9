// The scored batch's table; see ScoreTable.h.
#include "server/ScoreTable.h"

#include <cmath>
#include <cstdio>

namespace stitch::server {

using protocol::json;

namespace {

constexpr const char* kDimensions[] = {"anti_hacking", "cuda_engineering", "operator_coverage", "skill_compliance"};
constexpr double kEqualSpeed = 0.05;   // speedups within 5%: the timer's spread between runs is a few percent
constexpr double kSeparated = 0.02;    // a reward difference worth naming

std::string num(const json& v, const char* format = "%.2f") {
  if (!v.is_number()) return "—";
  char buf[32];
  std::snprintf(buf, sizeof buf, format, v.get<double>());
  return buf;
}

json dim(const json& line, const char* name) {
  return line.value("rubric", json::object()).value(name, json::object()).value("score", json());
}

bool correct(const json& line) { return line.value("rule", json::object()).value("correct", false); }

json speedup(const json& line) { return line.value("rule", json::object()).value("speedupVsEager", json()); }

}  // namespace

Separation separation(const std::vector<json>& lines) {
  Separation s;
  std::vector<const json*> fast;
  for (const auto& l : lines)
    if (!l.contains("error") && correct(l) && speedup(l).is_number() && l["reward"].is_number()) fast.push_back(&l);
  for (std::size_t i = 0; i < fast.size(); ++i)
    for (std::size_t j = i + 1; j < fast.size(); ++j) {
      const json &a = *fast[i], &b = *fast[j];
      const double sa = speedup(a).get<double>(), sb = speedup(b).get<double>();
      if (std::abs(sa - sb) > kEqualSpeed * std::max(sa, sb)) continue;
      ++s.equalSpeedPairs;
      if (std::abs(a["reward"].get<double>() - b["reward"].get<double>()) < kSeparated) continue;
      ++s.separated;
      std::string best;
      double widest = -1;
      const json weights = a.value("weights", json::object());
      for (const char* d : kDimensions) {
        const json da = dim(a, d), db = dim(b, d);
        if (!da.is_number() || !db.is_number()) continue;
        const double w = std::abs(da.get<double>() - db.get<double>()) * weights.value(d, 1.0);
        if (w > widest) widest = w, best = d;
      }
      ++s.byDimension[best.empty() ? "none" : best];
    }
  return s;
}

std::string scoreTable(const std::vector<json>& lines) {
  std::string t = "| candidate | verdict | speedup vs eager | rule | anti-hacking | CUDA engineering | coverage | compliance | reward |\n"
                  "|---|---|---|---|---|---|---|---|---|\n";
  int errors = 0;
  for (const auto& l : lines) {
    if (l.contains("error")) {
      ++errors;
      continue;
    }
    const std::string id = l.contains("id") ? (l["id"].is_string() ? l["id"].get<std::string>() : l["id"].dump())
                                            : l.value("candidate", "?");
    t += "| " + id + " | " + l.value("verdictStatus", "?") + " | " + num(speedup(l), "%.2f×") + " | " +
         num(l.value("rule", json::object()).value("score", json())) + " | " + num(dim(l, "anti_hacking")) + " | " +
         num(dim(l, "cuda_engineering")) + " | " + num(dim(l, "operator_coverage")) + " | " +
         num(dim(l, "skill_compliance")) + " | " + num(l.value("reward", json())) + " |\n";
  }
  const Separation s = separation(lines);
  t += "\n" + std::to_string(lines.size() - errors) + " scored, " + std::to_string(errors) + " not scored. " +
       std::to_string(s.equalSpeedPairs) + " pairs of correct candidates of equal speed (within 5%); " +
       std::to_string(s.separated) + " of them rewarded differently (by 0.02 or more)";
  std::string by;
  for (const auto& [d, n] : s.byDimension) by += (by.empty() ? "" : ", ") + d + " " + std::to_string(n);
  t += by.empty() ? ".\n" : ", separated by: " + by + ".\n";
  return t;
}

}  // namespace stitch::server
