// Building the editor's per-line profile (see ProfilePayload.h).
#include "profiling/ProfilePayload.h"

#include "protocol/NumberText.h"

#include <algorithm>
#include <cstdio>

namespace stitch::profiling {
namespace {

using protocol::fixed;

std::string duration(double us) { return us >= 1000.0 ? fixed(us / 1000.0, 2) + " ms" : fixed(us, us < 10 ? 1 : 0) + " µs"; }

// Bound, achieved % and top stall of a line: those of its longest kernel that ncu measured.
void describe(protocol::ProfileLine& line, const std::vector<const SourceKernel*>& kernels,
              const std::optional<Ceilings>& ceilings) {
  const SourceKernel* dominant = nullptr;
  for (const SourceKernel* k : kernels) {
    std::string name = shortKernelName(k->name);
    if (std::find(line.kernels.begin(), line.kernels.end(), name) == line.kernels.end()) line.kernels.push_back(name);
    if (k->metrics && (!dominant || k->gpuUs > dominant->gpuUs)) dominant = k;
  }
  if (!dominant) return;
  if (auto point = classify(*dominant->metrics, ceilings)) {
    line.bound = boundName(point->bound);
    line.achievedPct = 100.0 * point->achievedFraction;
  }
  if (!dominant->metrics->stalls.empty()) {
    const WarpStall& s = dominant->metrics->stalls.front();
    line.topStall = s.reason + " (" + fixed(s.cyclesPerIssue, 1) + " cycles/issue)";
  }
}

void addInlineText(protocol::ProfileParams& p, InlinePolicy policy) {
  std::sort(p.lines.begin(), p.lines.end(), [](const auto& a, const auto& b) { return a.gpuTimeUs > b.gpuTimeUs; });
  for (std::size_t i = 0; i < p.lines.size() && i < policy.lines; ++i) {
    auto& l = p.lines[i];
    if (l.share < policy.minShare) break;
    l.inlineText = duration(l.gpuTimeUs) + (p.timeKind == "cpu" ? " CPU" : "") + " · " + fixed(l.share * 100, 0) + "%";
    if (!l.bound.empty())
      l.inlineText += " · " + l.bound + "-bound" + (l.achievedPct ? " " + fixed(*l.achievedPct, 0) + "%" : "");
  }
}

}  // namespace

protocol::ProfileParams referenceProfileParams(const std::string& jobId, const std::string& uri,
                                               const ReferenceProfile& reference,
                                               const std::vector<SourceKernel>& kernels,
                                               const std::optional<Ceilings>& ceilings, InlinePolicy policy) {
  protocol::ProfileParams p;
  p.jobId = jobId;
  p.uri = uri;
  p.subject = "reference";
  p.timeKind = reference.timeKind;
  p.totalGpuTimeUs = reference.totalUs;
  for (const LineTime& l : reference.lines) {
    protocol::ProfileLine line;
    line.line = l.line - 1;
    line.gpuTimeUs = l.timeUs;
    line.share = l.share;
    std::vector<const SourceKernel*> mine;
    for (const auto& k : kernels)
      if (k.line == l.line) mine.push_back(&k);
    if (mine.empty()) {
      for (const auto& op : l.ops) line.kernels.push_back(op.name);  // no kernel map: name the operators
    } else {
      describe(line, mine, ceilings);
    }
    p.lines.push_back(std::move(line));
  }
  addInlineText(p, policy);
  return p;
}

protocol::ProfileParams candidateProfileParams(const std::string& jobId, const std::string& uri,
                                               const std::string& candidateId,
                                               const std::vector<SourceKernel>& kernels,
                                               const CandidatePlacement& placement,
                                               const std::optional<Ceilings>& ceilings, InlinePolicy policy) {
  protocol::ProfileParams p;
  p.jobId = jobId;
  p.uri = uri;
  p.subject = candidateId;
  std::map<int, std::vector<const SourceKernel*>> byLine;
  for (const auto& k : kernels) {
    auto it = placement.kernelLines.find(kernelKey(k.name));
    byLine[it != placement.kernelLines.end() ? it->second : placement.anchorLine].push_back(&k);
    p.totalGpuTimeUs += k.gpuUs;
  }
  for (const auto& [lineNo, mine] : byLine) {
    protocol::ProfileLine line;
    line.line = lineNo;
    for (const SourceKernel* k : mine) line.gpuTimeUs += k->gpuUs;
    line.share = p.totalGpuTimeUs > 0 ? line.gpuTimeUs / p.totalGpuTimeUs : 0;
    describe(line, mine, ceilings);
    p.lines.push_back(std::move(line));
  }
  addInlineText(p, policy);
  return p;
}

}  // namespace stitch::profiling
