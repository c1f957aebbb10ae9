// The registry's table, built once from the family files; see OpDef.h.
#include "agents/builtin/kernel/NodeArgs.h"
#include "agents/builtin/ops/CudaLiteral.h"
#include "agents/builtin/ops/Families.h"

#include <map>
#include <stdexcept>

namespace stitch::agents::builtin::ops {
namespace {

struct Table {
  Registry r;
  std::map<std::string, std::size_t> byName, fnByName;
  Table() {
    addUnaryOps(r);
    addBinaryOps(r);
    addReductionOps(r);
    addNormalizationOps(r);
    addFillOps(r);
    addLibraryOps(r);
    addViewOps(r);
    addCoordinateOps(r);
    addCompositeOps(r);
    for (std::size_t i = 0; i < r.ops.size(); ++i)
      if (!byName.emplace(r.ops[i].name, i).second) throw std::logic_error("operator registered twice: " + r.ops[i].name);
    for (std::size_t i = 0; i < r.fns.size(); ++i)
      if (!fnByName.emplace(r.fns[i].name, i).second) throw std::logic_error("kernel function registered twice: " + r.fns[i].name);
  }
};

const Table& table() {
  static const Table t;
  return t;
}

const char* familyName(Family f) {
  switch (f) {
    case Family::Unary: return "unary";
    case Family::Binary: return "binary";
    case Family::Reduction: return "reduction";
    case Family::Normalization: return "normalization";
    case Family::Fill: return "fill";
    case Family::Library: return "library";
    case Family::View: return "view";
    case Family::Coordinate: return "coordinate";
    case Family::Composite: return "composite";
  }
  return "";
}

const char* costName(CostKind c) {
  switch (c) {
    case CostKind::Elementwise: return "elementwise";
    case CostKind::Gemm: return "gemm";
    case CostKind::Convolution: return "convolution";
  }
  return "";
}

const char* domainName(Domain d) {
  switch (d) {
    case Domain::Real: return "real";
    case Domain::Positive: return "positive";
    case Domain::Whole: return "whole";
    case Domain::Mask: return "mask";
  }
  return "";
}

}  // namespace

std::string Operands::P(std::size_t i) const { return floatLiteral(params.at(i)); }

OpDef& Registry::simple(const std::string& name, Family family, std::function<std::string(const Operands&)> cuda) {
  fn(name, std::move(cuda));
  OpDef d{name, family};
  d.lower = [name](const Node&, const Graph&) -> Outcome<Lowered> { return Lowered{name}; };
  ops.push_back(std::move(d));
  return ops.back();
}


const std::vector<OpDef>& allOps() { return table().r.ops; }

const OpDef* findOp(const std::string& op) {
  const Table& t = table();
  auto it = t.byName.find(baseName(op));
  return it == t.byName.end() ? nullptr : &t.r.ops[it->second];
}

bool inFamily(const std::string& op, Family family) {
  const OpDef* d = findOp(op);
  return d && d->family == family;
}

const KernelFn* findFn(const std::string& fn) {
  const Table& t = table();
  auto it = t.fnByName.find(fn);
  return it == t.fnByName.end() ? nullptr : &t.r.fns[it->second];
}

Outcome<std::string> cudaCall(const std::string& fn, const Operands& operands) {
  const KernelFn* f = findFn(fn);
  if (!f) return Failure{"no CUDA for the kernel function '" + fn + "': it has no registry entry (agents/builtin/ops)"};
  return f->cuda(operands);
}

nlohmann::json opsJson() {
  nlohmann::json ops = nlohmann::json::array();
  for (const OpDef& d : allOps()) {
    nlohmann::json tests = nlohmann::json::array();
    for (const OpTest& t : d.tests) {
      nlohmann::json inputs = nlohmann::json::array();
      for (Domain x : t.inputs) inputs.push_back(domainName(x));
      tests.push_back({{"call", t.call}, {"inputs", inputs}});
    }
    ops.push_back({{"name", d.name}, {"family", familyName(d.family)}, {"cost", costName(d.cost)},
                   {"epilogue", d.epilogueRole != EpilogueRole::None}, {"tests", tests}});
  }
  return {{"schema", "stitchcuda.ops/1"}, {"ops", ops}};
}

}  // namespace stitch::agents::builtin::ops
