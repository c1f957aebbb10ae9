// Python source for a captured ATen call; see TorchCall.h.
#include "agents/builtin/emit/TorchCall.h"

#include <sstream>

namespace stitch::agents::builtin {
namespace {

// A value the harness gave no Python text for (nodes the normalizer made): written from its type.
std::string literal(const ScalarValue& v) {
  struct Visit {
    std::string operator()(std::monostate) const { return "None"; }
    std::string operator()(bool b) const { return b ? "True" : "False"; }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const {
      std::ostringstream o;
      o.precision(17);
      o << d;
      const std::string s = o.str();
      return s.find_first_of(".en") == std::string::npos ? s + ".0" : (s == "inf" || s == "-inf" || s == "nan" ? "float('" + s + "')" : s);
    }
    std::string operator()(const std::string& s) const {
      std::string q = "'";
      for (char c : s) q += (c == '\'' || c == '\\') ? std::string("\\") + c : std::string(1, c);
      return q + "'";
    }
    std::string operator()(const std::vector<int64_t>& l) const {
      std::string s = "[";
      for (std::size_t i = 0; i < l.size(); ++i) s += (i ? ", " : "") + std::to_string(l[i]);
      return s + "]";
    }
    std::string operator()(const std::vector<double>& l) const {
      std::string s = "[";
      for (std::size_t i = 0; i < l.size(); ++i) s += (i ? ", " : "") + (*this)(l[i]);
      return s + "]";
    }
    std::string operator()(const Other& o) const { return o.text; }
  };
  return std::visit(Visit{}, v);
}

}  // namespace

std::string withDevice(std::string py, const std::string& device) {
  for (std::size_t at = py.find("{device}"); at != std::string::npos; at = py.find("{device}", at + device.size()))
    py.replace(at, 8, device);
  return py;
}

std::string torchOpExpr(const std::string& op) {
  const std::string qualified = op.find("::") == std::string::npos ? "aten::" + op : op;
  const auto sep = qualified.find("::");
  const std::string ns = qualified.substr(0, sep);
  std::string rest = qualified.substr(sep + 2);
  const auto dot = rest.find('.');
  const std::string name = rest.substr(0, dot);
  const std::string over = dot == std::string::npos ? "default" : rest.substr(dot + 1);
  return "torch.ops." + ns + "." + name + "." + over;
}

std::string schemaName(const std::string& op) {
  const std::string qualified = op.find("::") == std::string::npos ? "aten::" + op : op;
  return qualified.substr(0, qualified.find('.'));
}

Outcome<std::string> torchCallArgs(const Node& node, const std::function<Outcome<std::string>(const std::string&)>& tensorExpr,
                                   const std::string& device) {
  std::string out;
  for (const Argument& a : node.inputs) {
    std::string value;
    if (a.tensor) {
      auto e = tensorExpr(*a.tensor);
      if (!e) return e.error();
      value = e.value();
    } else if (!a.tensors.empty()) {
      value = "[";
      for (std::size_t i = 0; i < a.tensors.size(); ++i) {
        std::string item = "None";
        if (!a.tensors[i].empty()) {
          auto e = tensorExpr(a.tensors[i]);
          if (!e) return e.error();
          item = e.value();
        }
        value += (i ? ", " : "") + item;
      }
      value += "]";
    } else {
      value = a.py.empty() ? literal(a.value) : withDevice(a.py, device);
    }
    out += (out.empty() ? "" : ", ") + (a.keyword ? a.name + "=" : std::string()) + value;
  }
  return out;
}

}  // namespace stitch::agents::builtin
