// Joining kernels to operators, lines and ncu metrics (see KernelSourceMap.h).
#include "profiling/KernelSourceMap.h"

#include <algorithm>
#include <map>

namespace stitch::profiling {
namespace {

void eraseAll(std::string& s, const std::string& what) {
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what)) s.erase(p, what.size());
}

}  // namespace

std::string kernelKey(const std::string& demangled) {
  std::string s = demangled;
  eraseAll(s, "<unnamed>::");
  eraseAll(s, "(anonymous namespace)::");
  if (s.rfind("void ", 0) == 0) s = s.substr(5);
  s = s.substr(0, std::min(s.find('<'), s.find('(')));
  if (auto colon = s.rfind("::"); colon != std::string::npos) s = s.substr(colon + 2);
  return s;
}

std::string shortKernelName(const std::string& demangled) {
  std::string k = kernelKey(demangled);
  return k.size() > 60 ? k.substr(0, 57) + "..." : k;
}

std::vector<SourceKernel> mapKernelsToSource(const TraceSummary& trace, const std::vector<KernelMetrics>& ncu) {
  std::map<int, std::vector<const TraceActivity*>> perIteration;
  for (const auto& a : trace.activities)
    if (a.kind == "kernel") perIteration[a.iteration].push_back(&a);
  std::vector<SourceKernel> out;
  if (perIteration.empty()) return out;
  const auto& first = perIteration.begin()->second;
  for (std::size_t i = 0; i < first.size(); ++i) {
    const TraceActivity& a = *first[i];
    // The same launch in every forward: average its time when every forward launched alike.
    double sum = 0;
    int n = 0;
    for (const auto& [_, kernels] : perIteration)
      if (kernels.size() == first.size() && kernels[i]->name == a.name) {
        sum += kernels[i]->durationUs;
        ++n;
      }
    out.push_back({a.name, a.ops, a.line, n ? sum / n : a.durationUs, std::nullopt});
  }
  std::size_t next = 0;  // ncu and the trace list one forward's launches in the same order
  for (const KernelMetrics& m : ncu) {
    const std::string key = kernelKey(m.name);
    for (std::size_t j = next; j < out.size(); ++j)
      if (!out[j].metrics && kernelKey(out[j].name) == key) {
        out[j].metrics = m;
        next = j + 1;
        break;
      }
  }
  return out;
}

std::vector<KernelMetrics> kernelMetricsOf(const std::vector<SourceKernel>& kernels) {
  std::vector<KernelMetrics> out;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    if (kernels[i].metrics) {
      out.push_back(*kernels[i].metrics);
      continue;
    }
    KernelMetrics m;
    m.id = static_cast<int>(i);
    m.name = kernels[i].name;
    m.durationUs = kernels[i].gpuUs;
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace stitch::profiling
