// Library steps measured against eager's own operators; see LibraryVsEager.h.
#include "agents/builtin/LibraryVsEager.h"

#include <cstdio>
#include <regex>
#include <set>

namespace stitch::agents::builtin {
namespace {

std::string micros(double us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f us", us);
  return buf;
}

}  // namespace

std::map<std::size_t, double> stepTimesUs(const Plan& plan, const std::vector<loop::Launch>& launches, int forwards) {
  static const std::regex generated(R"(\bk(\d+)_)");
  std::map<std::size_t, double> total;
  if (forwards <= 0) return total;
  // The library steps from `from` up to the next generated one: the run an activity that names no
  // step belongs to; that step where the run is one step, else none (their times not told apart).
  auto libraryRun = [&](std::size_t from) -> std::optional<std::size_t> {
    std::size_t end = from;
    while (end < plan.kernels.size() && plan.kernels[end].library) ++end;
    return end - from == 1 ? std::optional(from) : std::nullopt;
  };
  std::size_t next = 0;  // the step after the last generated kernel seen in this forward
  int forward = launches.empty() ? 0 : launches.front().forward;
  for (const auto& a : launches) {
    if (a.forward != forward) forward = a.forward, next = 0;
    std::smatch m;
    if (std::regex_search(a.name, m, generated)) {
      const std::size_t step = std::stoul(m[1].str());
      if (step < plan.kernels.size() && !plan.kernels[step].library) {
        total[step] += a.us;
        next = step + 1;
        continue;
      }
    }
    if (auto step = libraryRun(next)) total[*step] += a.us;
  }
  for (auto& [step, us] : total) us /= forwards;
  return total;
}

std::string SlowerThanEager::reason() const {
  return "its cuDNN call (step k" + std::to_string(step) + ") took " + micros(oursUs) +
         " per forward where eager's whole line(s) around the same convolution took " + micros(eagerUs) +
         " (the reference's profile): eager's own convolution runs it";
}

std::vector<SlowerThanEager> slowerThanEager(const Graph& graph, const Plan& plan,
                                             const std::map<int, double>& lineTimesUs,
                                             const std::map<std::size_t, double>& stepUs, double margin) {
  // Library operators per source line: a line with two (a loop, a Sequential) does not bound one.
  std::map<int, int> libraryOps;
  for (const Node& n : graph.nodes)
    if (n.kind == "compute" && isLibraryOp(n.op) && n.source) ++libraryOps[n.source->line];
  std::vector<SlowerThanEager> out;
  for (std::size_t i = 0; i < plan.kernels.size(); ++i) {
    const PlannedKernel& k = plan.kernels[i];
    const auto ours = stepUs.find(i);
    if (!k.library || k.library->kind != LibraryCall::Kind::Conv || ours == stepUs.end()) continue;
    std::set<int> lines;
    bool bounded = true;
    for (int id : k.library->nodeIds) {
      const Node* n = graph.node(id);
      if (!n || !n->source || !lineTimesUs.count(n->source->line)) bounded = false;
      else lines.insert(n->source->line);
    }
    double eager = 0;
    for (int line : lines) {
      bounded = bounded && libraryOps[line] == 1;
      eager += lineTimesUs.at(line);
    }
    if (bounded && eager > 0 && ours->second > eager * (1 + margin))
      out.push_back({i, k.library->nodeIds.front(), ours->second, eager});
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
