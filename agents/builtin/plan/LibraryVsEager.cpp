// Library steps measured against eager's own operators; see LibraryVsEager.h.
#include "agents/builtin/plan/LibraryVsEager.h"

#include "protocol/NumberText.h"

#include <algorithm>
#include <regex>
#include <set>

namespace stitch::agents::builtin {

std::map<std::size_t, double> stepTimesUs(const Plan& plan, const std::vector<loop::Launch>& launches, int forwards) {
  static const std::regex generated(R"(\bk(\d+)_(\w*))");
  std::map<std::size_t, double> total;
  if (forwards <= 0) return total;
  auto nextGenerated = [&](std::size_t from) {
    while (from < plan.kernels.size() && plan.kernels[from].library) ++from;
    return from;
  };
  // The library steps from `from` up to the next generated one: the run an activity that names no
  // step belongs to; that step where the run is one step, else none (their times not told apart).
  auto libraryRun = [&](std::size_t from) -> std::optional<std::size_t> {
    return nextGenerated(from) - from == 1 ? std::optional(from) : std::nullopt;
  };
  // A kernel names the step whose code it runs: its own, or an earlier step's where the coder
  // shares one kernel among repeats (emit/SharedKernels.h). Steps run in plan order, each
  // launching its kernels together, so a name of a step already passed is the next generated
  // step's launch, unless it is the current step's next stage (a kernel of it not yet seen).
  std::size_t next = 0;  // the step after the last generated kernel seen in this forward
  std::string code;      // the step number the current step's kernels are named after
  std::set<std::string> seen;  // the current step's kernels so far
  int forward = launches.empty() ? 0 : launches.front().forward;
  for (const auto& a : launches) {
    if (a.forward != forward) forward = a.forward, next = 0, code.clear(), seen.clear();
    std::smatch m;
    if (std::regex_search(a.name, m, generated)) {
      const std::size_t named = std::stoul(m[1].str());
      if (named < plan.kernels.size() && !plan.kernels[named].library) {
        const bool stage = next > 0 && m[1].str() == code && !seen.count(m[2].str());
        const std::size_t step = named >= next ? named : stage ? next - 1 : nextGenerated(next);
        if (step < plan.kernels.size()) {
          if (!stage) code = m[1].str(), seen.clear();
          seen.insert(m[2].str());
          total[step] += a.us;
          next = step + 1;
          continue;
        }
      }
    }
    if (auto step = libraryRun(next)) total[*step] += a.us;
  }
  for (auto& [step, us] : total) us /= forwards;
  return total;
}

std::string SlowerThanEager::reason() const {
  std::string which, where;
  for (std::size_t s : steps) which += (which.empty() ? "" : ", ") + ("k" + std::to_string(s));
  for (int l : lines) where += (where.empty() ? "" : ", ") + std::to_string(l);
  return std::string(steps.size() == 1 ? "its cuDNN call (step " : "the cuDNN calls of its line(s) (steps ") + which +
         ") took " + protocol::fixed(oursUs, 1) + " us" + " per forward where eager's whole line(s) " + where +
         " took " + protocol::fixed(eagerUs, 1) + " us" + " (the reference's profile): eager's own convolution runs it";
}

std::vector<SlowerThanEager> slowerThanEager(const Graph& graph, const Plan& plan,
                                             const std::map<int, double>& lineTimesUs,
                                             const std::map<std::size_t, double>& stepUs, double margin) {
  // The lines of each library step's operators (none known: the step is not judged).
  std::map<std::size_t, std::set<int>> linesOf;
  for (std::size_t i = 0; i < plan.kernels.size(); ++i) {
    if (!plan.kernels[i].library) continue;
    std::set<int>& lines = linesOf[i];
    for (int id : plan.kernels[i].library->nodeIds)
      if (const Node* n = graph.node(id); n && n->source) lines.insert(n->source->line);
  }
  // Groups of convolution steps joined by shared lines; a group that shares a line with another
  // library step (a GEMM, a step the trace could not time) is left alone.
  std::vector<SlowerThanEager> out;
  std::set<std::size_t> seen;
  for (const auto& [first, firstLines] : linesOf) {
    if (seen.count(first)) continue;
    SlowerThanEager g;
    g.lines = firstLines;
    for (bool grew = true; grew;) {
      grew = false;
      for (const auto& [i, lines] : linesOf)
        if (!seen.count(i) && std::any_of(lines.begin(), lines.end(), [&](int l) { return g.lines.count(l); })) {
          seen.insert(i), g.steps.push_back(i), g.lines.insert(lines.begin(), lines.end()), grew = true;
        }
    }
    std::sort(g.steps.begin(), g.steps.end());
    bool judged = !g.lines.empty();
    for (std::size_t i : g.steps) {
      const auto& call = *plan.kernels[i].library;
      const auto us = stepUs.find(i);
      judged = judged && call.kind == LibraryCall::Kind::Conv && us != stepUs.end();
      if (!judged) break;
      g.oursUs += us->second;
      g.nodes.push_back(call.nodeIds.front());
    }
    for (int line : g.lines) {
      const auto t = lineTimesUs.find(line);
      judged = judged && t != lineTimesUs.end();
      if (judged) g.eagerUs += t->second;
    }
    if (judged && g.eagerUs > 0 && g.oursUs > g.eagerUs * (1 + margin)) out.push_back(std::move(g));
  }
  return out;
}

void EagerOpTrial::begin(const loop::Feedback& first, std::map<int, std::string> nodes) {
  state_ = State::Trying;
  first_ = first;
  left_ = std::move(nodes);
}

bool EagerOpTrial::keep(const loop::Feedback& other, std::optional<loop::Feedback>& judged) {
  state_ = State::Decided;
  if (other.passed && other.medianMs && *other.medianMs < *first_->medianMs) return true;
  judged = first_;
  return false;
}

}  // namespace stitch::agents::builtin
