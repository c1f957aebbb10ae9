// Prompt text for the job's facts; see GraphText.h.
#include "agents/llm/GraphText.h"

#include <cstdio>
#include <sstream>

namespace stitch::agents::llm {
namespace {

std::string dtypeShort(const std::string& d) {
  static const std::map<std::string, std::string> names = {{"float32", "f32"}, {"float16", "f16"}, {"bfloat16", "bf16"},
                                                           {"float64", "f64"}, {"int64", "i64"},   {"int32", "i32"},
                                                           {"bool", "bool"},   {"uint8", "u8"}};
  auto it = names.find(d);
  return it == names.end() ? d : it->second;
}

std::string tensorText(const builtin::Graph& g, const std::string& id) {
  const builtin::TensorInfo* t = g.tensor(id);
  if (!t) return id;
  std::string s = (t->name ? *t->name : id) + ":" + dtypeShort(t->dtype) + "[";
  for (std::size_t i = 0; i < t->shape.size(); ++i) s += (i ? "," : "") + std::to_string(t->shape[i]);
  s += "]";
  if (!t->contiguous()) s += "(strided)";
  if (t->role == "parameter" || t->role == "buffer") s += "(" + t->role + ")";
  return s;
}

std::string scalarText(const builtin::ScalarValue& v) {
  struct {
    std::string operator()(std::monostate) const { return "None"; }
    std::string operator()(bool b) const { return b ? "True" : "False"; }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%g", d);
      return buf;
    }
    std::string operator()(const std::string& s) const { return "'" + s + "'"; }
    std::string operator()(const std::vector<int64_t>& l) const {
      std::string s = "[";
      for (std::size_t i = 0; i < l.size(); ++i) s += (i ? "," : "") + std::to_string(l[i]);
      return s + "]";
    }
    std::string operator()(const std::vector<double>& l) const {
      std::string s = "[";
      for (std::size_t i = 0; i < l.size(); ++i) s += (i ? "," : "") + (*this)(l[i]);
      return s + "]";
    }
    std::string operator()(const builtin::Other& o) const { return o.text; }
  } visit;
  return std::visit(visit, v);
}

}  // namespace

std::string graphText(const builtin::Graph& g) {
  std::ostringstream s;
  s << "inputs:";
  for (const auto& i : g.inputs) s << " " << tensorText(g, i);
  s << "\n";
  for (const auto& n : g.nodes) {
    s << "n" << n.id << " " << n.op << "(";
    for (std::size_t i = 0; i < n.inputs.size(); ++i) {
      const auto& a = n.inputs[i];
      s << (i ? ", " : "") << a.name << "=";
      if (a.tensor) s << tensorText(g, *a.tensor);
      else if (!a.tensors.empty()) {
        s << "[";
        for (std::size_t k = 0; k < a.tensors.size(); ++k) s << (k ? ", " : "") << tensorText(g, a.tensors[k]);
        s << "]";
      } else s << scalarText(a.value);
    }
    s << ") ->";
    for (const auto& o : n.outputs) s << " " << tensorText(g, o);
    if (n.kind != "compute") s << "  (" << n.kind << ")";
    if (n.source) s << "  @line " << n.source->line;
    s << "\n";
  }
  s << "outputs:";
  for (const auto& o : g.outputs) s << " " << tensorText(g, o);
  s << "\n";
  return s.str();
}

std::set<std::string> computeOperators(const builtin::Graph& g) {
  std::set<std::string> ops;
  for (const auto& n : g.nodes)
    if (n.kind == "compute") ops.insert(n.op);
  return ops;
}

std::string lineTimesText(const std::map<int, double>& lineTimesUs, bool gpu) {
  std::string s;
  for (const auto& [line, us] : lineTimesUs) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "line %d: %.1f us of %s time\n", line, us, gpu ? "GPU" : "CPU");
    s += buf;
  }
  return s;
}

std::string numberedSource(const std::string& source) {
  std::istringstream in(source);
  std::string out;
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%4d| ", ++n);
    out += buf + line + "\n";
  }
  return out;
}

std::string hardwareText(bool gpu) {
  return gpu ? "An NVIDIA GPU is visible to the verifier (Hopper class, sm_90: H100/H200); candidates are built with "
               "nvcc from CUDA 13 and timed there."
             : "No GPU is visible to this job: the candidate is only compiled (nvcc from CUDA 13, sm_90), so write "
               "it for a Hopper-class GPU (H100/H200) and make sure it compiles.";
}

}  // namespace stitch::agents::llm
