// From ncu's metric columns to KernelMetrics (see NcuCsvParser.h). Metric names differ between
// GPU generations and ncu versions; each field lists the names it accepts, first match wins.
#include "profiling/NcuCsvParser.h"

#include "profiling/Csv.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>

namespace stitch::profiling {
namespace {

struct Metric {
  std::string unit;
  std::string text;
};
using MetricMap = std::map<std::string, Metric>;

struct RawKernel {
  int id = 0;
  std::string name, block, grid;
  MetricMap metrics;
};

// "1,234.5" -> 1234.5; "n/a" and "" -> nullopt.
std::optional<double> number(std::string text) {
  text.erase(std::remove(text.begin(), text.end(), ','), text.end());
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(v)) return std::nullopt;
  return v;
}

// Scale to the base unit the fields use: microseconds for time, bytes for sizes.
double scaled(double v, const std::string& unit, bool time) {
  if (time) {
    if (unit == "nsecond" || unit == "ns") return v / 1e3;
    if (unit == "msecond" || unit == "ms") return v * 1e3;
    if (unit == "second" || unit == "s") return v * 1e6;
    return v;  // usecond
  }
  static const std::map<std::string, double> bytes = {
      {"Kbyte", 1e3}, {"Mbyte", 1e6}, {"Gbyte", 1e9}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9},
      {"Kibyte", 1024.0}, {"Mibyte", 1048576.0}, {"KiB", 1024.0}, {"MiB", 1048576.0}};
  auto it = bytes.find(unit);
  return it == bytes.end() ? v : v * it->second;
}

std::optional<double> pick(const MetricMap& m, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (auto it = m.find(n); it != m.end())
      if (auto v = number(it->second.text)) return v;
  return std::nullopt;
}

std::optional<double> pickScaled(const MetricMap& m, std::initializer_list<const char*> names, bool time) {
  for (const char* n : names)
    if (auto it = m.find(n); it != m.end())
      if (auto v = number(it->second.text)) return scaled(*v, it->second.unit, time);
  return std::nullopt;
}

bool startsWith(const std::string& s, std::string_view p) { return s.compare(0, p.size(), p) == 0; }
bool endsWith(const std::string& s, std::string_view p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

// The largest value among metrics named prefix...suffix (e.g. every tensor pipe's utilisation).
std::optional<double> largest(const MetricMap& m, std::string_view prefix, std::string_view suffix) {
  std::optional<double> best;
  for (const auto& [name, metric] : m)
    if (startsWith(name, prefix) && endsWith(name, suffix))
      if (auto v = number(metric.text); v && (!best || *v > *best)) best = v;
  return best;
}

std::vector<WarpStall> stalls(const MetricMap& m) {
  static const std::pair<std::string_view, std::string_view> patterns[] = {
      {"smsp__average_warps_issue_stalled_", "_per_issue_active.ratio"},
      {"smsp__average_warp_latency_issue_stalled_", ".ratio"}};
  std::vector<WarpStall> out;
  for (const auto& [prefix, suffix] : patterns) {
    for (const auto& [name, metric] : m) {
      if (!startsWith(name, prefix) || !endsWith(name, suffix)) continue;
      std::string reason = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
      if (reason == "selected" || endsWith(reason, "_not_issued")) continue;  // issuing is no stall
      if (auto v = number(metric.text); v && *v > 0) out.push_back({reason, *v});
    }
    if (!out.empty()) break;
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.cyclesPerIssue > b.cyclesPerIssue; });
  return out;
}

std::string limiter(const MetricMap& m) {
  static const std::pair<const char*, const char*> limits[] = {
      {"launch__occupancy_limit_registers", "registers"},
      {"launch__occupancy_limit_shared_mem", "shared_memory"},
      {"launch__occupancy_limit_warps", "warps"},
      {"launch__occupancy_limit_blocks", "blocks"}};
  std::string which;
  double least = 0;
  for (const auto& [metric, name] : limits)
    if (auto v = pick(m, {metric}); v && (which.empty() || *v < least)) {
      which = name;
      least = *v;
    }
  return which;
}

KernelMetrics toMetrics(const RawKernel& k) {
  const MetricMap& m = k.metrics;
  KernelMetrics r;
  r.id = k.id;
  r.name = k.name;
  r.blockSize = k.block;
  r.gridSize = k.grid;
  r.durationUs = pickScaled(m, {"gpu__time_duration.sum"}, true);
  r.dramThroughputPct = pick(m, {"gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
                                 "dram__throughput.avg.pct_of_peak_sustained_elapsed"});
  r.smThroughputPct = pick(m, {"sm__throughput.avg.pct_of_peak_sustained_elapsed"});
  r.memoryThroughputPct = pick(m, {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"});
  r.achievedOccupancyPct = pick(m, {"sm__warps_active.avg.pct_of_peak_sustained_active"});
  r.theoreticalOccupancyPct = pick(m, {"sm__maximum_warps_per_active_cycle_pct"});
  // A limiter only means something when it keeps the SM below its full warp count.
  r.occupancyLimiter = r.theoreticalOccupancyPct && *r.theoreticalOccupancyPct >= 100 ? "none" : limiter(m);
  r.registersPerThread = pick(m, {"launch__registers_per_thread"});
  auto smemStatic = pickScaled(m, {"launch__shared_mem_per_block_static"}, false);
  auto smemDynamic = pickScaled(m, {"launch__shared_mem_per_block_dynamic"}, false);
  if (smemStatic || smemDynamic) r.sharedMemPerBlockBytes = smemStatic.value_or(0) + smemDynamic.value_or(0);
  r.l1HitPct = pick(m, {"l1tex__t_sector_hit_rate.pct"});
  r.l2HitPct = pick(m, {"lts__t_sector_hit_rate.pct"});
  r.fp32PipePct = pick(m, {"sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
                           "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active"});
  auto tensorCycles = largest(m, "sm__pipe_tensor", "cycles_active.avg.pct_of_peak_sustained_active");
  auto tensorInst = largest(m, "sm__inst_executed_pipe_tensor", ".avg.pct_of_peak_sustained_active");
  r.tensorPipePct = tensorCycles ? tensorCycles : tensorInst;
  r.instructionsExecuted = pick(m, {"smsp__inst_executed.sum", "sm__inst_executed.sum"});
  if (auto bytes = pickScaled(m, {"dram__bytes.sum"}, false)) {
    r.dramBytes = bytes;
  } else {
    auto rd = pickScaled(m, {"dram__bytes_read.sum"}, false);
    auto wr = pickScaled(m, {"dram__bytes_write.sum"}, false);
    if (rd || wr) r.dramBytes = rd.value_or(0) + wr.value_or(0);
  }
  auto ffma = pick(m, {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"});
  auto fadd = pick(m, {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum"});
  auto fmul = pick(m, {"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum"});
  if (ffma || fadd || fmul) r.fp32Flops = 2 * ffma.value_or(0) + fadd.value_or(0) + fmul.value_or(0);
  r.stalls = stalls(m);
  return r;
}

int column(const CsvRow& header, std::string_view name) {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

std::string cell(const CsvRow& row, int i) { return i >= 0 && i < static_cast<int>(row.size()) ? row[i] : ""; }

}  // namespace

ProfileResult<std::vector<KernelMetrics>> parseNcuCsv(std::string_view text) {
  std::vector<CsvRow> rows = parseCsv(text);
  auto headerAt = std::find_if(rows.begin(), rows.end(), [](const CsvRow& r) {
    return column(r, "ID") >= 0 && column(r, "Kernel Name") >= 0;
  });
  if (headerAt == rows.end())
    return ProfileError{"parse_error", "no Nsight Compute table in the output (no header with \"ID\" and \"Kernel Name\"); "
                                       "was ncu run with --csv, and did it profile anything?"};
  const CsvRow& header = *headerAt;
  const int idCol = column(header, "ID"), nameCol = column(header, "Kernel Name");
  const int blockCol = column(header, "Block Size"), gridCol = column(header, "Grid Size");
  const int metricNameCol = column(header, "Metric Name");
  const bool longForm = metricNameCol >= 0;
  const int unitCol = column(header, "Metric Unit"), valueCol = column(header, "Metric Value");

  std::vector<RawKernel> kernels;
  std::map<int, std::size_t> byId;
  const CsvRow* units = nullptr;
  for (auto it = headerAt + 1; it != rows.end(); ++it) {
    const CsvRow& row = *it;
    if (row.size() < header.size()) continue;  // a truncated line or trailing text
    auto id = number(cell(row, idCol));
    if (!id) {
      if (!longForm && !units) units = &row;  // the raw page's units row (its ID cell is empty)
      continue;
    }
    auto [slot, added] = byId.try_emplace(static_cast<int>(*id), kernels.size());
    if (added) kernels.push_back({static_cast<int>(*id), cell(row, nameCol), cell(row, blockCol), cell(row, gridCol), {}});
    RawKernel& k = kernels[slot->second];
    if (longForm) {
      k.metrics[cell(row, metricNameCol)] = {cell(row, unitCol), cell(row, valueCol)};
    } else {
      for (std::size_t c = 0; c < header.size(); ++c)
        k.metrics[header[c]] = {units ? cell(*units, static_cast<int>(c)) : "", row[c]};
    }
  }
  if (kernels.empty())
    return ProfileError{"no_kernels", "Nsight Compute profiled no kernel: the NVTX range matched nothing or the program "
                                      "launched no kernel inside it"};
  std::vector<KernelMetrics> out;
  for (const RawKernel& k : kernels) out.push_back(toMetrics(k));
  return out;
}

}  // namespace stitch::profiling
