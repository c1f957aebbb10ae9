// Parsing of stitchcuda.graph/1; see GraphIR.h. Each error names the path of the field that
// failed ("nodes[3].inputs[1]") so a harness change is found at once.
#include "agents/ir/GraphIR.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <stdexcept>

namespace stitch::agents::ir {
namespace {

using nlohmann::json;

struct FieldError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const json& field(const json& j, const char* key, const std::string& path) {
  if (!j.is_object()) throw FieldError(path + " is not an object");
  auto it = j.find(key);
  if (it == j.end()) throw FieldError(path + "." + key + " is missing");
  return *it;
}

template <typename T>
T get(const json& j, const char* key, const std::string& path) {
  const json& v = field(j, key, path);
  try {
    return v.get<T>();
  } catch (const json::exception&) {
    throw FieldError(path + "." + key + " has the wrong type (" + v.dump().substr(0, 60) + ")");
  }
}

// A name of one of the graph's vocabularies (IrTypes.h); one it does not know is refused by name.
template <typename E>
Named<E> vocabulary(const json& j, const char* key, const std::string& path) {
  const std::string name = get<std::string>(j, key, path);
  if (auto e = Named<E>::parse(name)) return *e;
  throw FieldError(path + "." + key + ": unknown " + key + " '" + name + "' (known: " + Named<E>::known() + ")");
}

template <typename T>
std::optional<T> optional(const json& j, const char* key, const std::string& path) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return get<T>(j, key, path);
}

ScalarValue scalar(const json& v) {
  if (v.is_null()) return std::monostate{};
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    // JSON has no NaN/Infinity: the harness sends them as strings.
    const auto s = v.get<std::string>();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  if (v.is_array()) {
    bool ints = true, numbers = true;
    for (const json& e : v) {
      ints = ints && e.is_number_integer();
      numbers = numbers && e.is_number();
    }
    if (ints) return v.get<std::vector<int64_t>>();
    if (numbers) return v.get<std::vector<double>>();
  }
  return Other{v.dump()};
}

std::optional<SourceRef> source(const json& j, const std::string& path) {
  auto it = j.find("source");
  if (it == j.end() || it->is_null()) return std::nullopt;
  SourceRef s;
  s.file = get<std::string>(*it, "file", path + ".source");
  s.line = get<int>(*it, "line", path + ".source");
  s.function = it->value("function", "");
  return s;
}

TensorInfo tensorFrom(const json& j, const std::string& path) {
  TensorInfo t;
  t.id = get<std::string>(j, "id", path);
  t.shape = get<std::vector<int64_t>>(j, "shape", path);
  t.strides = get<std::vector<int64_t>>(j, "strides", path);
  if (t.strides.size() != t.shape.size()) throw FieldError(path + " (" + t.id + "): strides and shape differ in rank");
  t.storageOffset = optional<int64_t>(j, "storage_offset", path).value_or(0);
  t.dtype = vocabulary<DType>(j, "dtype", path);
  t.role = vocabulary<Role>(j, "role", path);
  t.name = optional<std::string>(j, "name", path);
  t.producer = optional<int>(j, "producer", path);
  t.viewOf = optional<std::string>(j, "view_of", path);
  t.py = optional<std::string>(j, "py", path);
  t.device = j.value("device", "");
  return t;
}

Node nodeFrom(const json& j, const std::string& path) {
  Node n;
  n.id = get<int>(j, "id", path);
  n.op = get<std::string>(j, "op", path);
  if (j.contains("kind")) n.kind = vocabulary<NodeKind>(j, "kind", path);
  n.module = j.value("module", "");
  const json& inputs = field(j, "inputs", path);
  if (!inputs.is_array()) throw FieldError(path + ".inputs is not a list");
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string ip = path + ".inputs[" + std::to_string(i) + "]";
    Argument a;
    a.name = get<std::string>(inputs[i], "name", ip);
    if (inputs[i].contains("tensor")) a.tensor = get<std::string>(inputs[i], "tensor", ip);
    else if (inputs[i].contains("tensors")) {
      for (const json& t : field(inputs[i], "tensors", ip)) a.tensors.push_back(t.is_string() ? t.get<std::string>() : "");
    } else
      a.value = scalar(inputs[i].value("value", json()));
    a.py = inputs[i].value("py", "");
    a.keyword = inputs[i].value("keyword", false);
    n.inputs.push_back(std::move(a));
  }
  n.outputs = get<std::vector<std::string>>(j, "outputs", path);
  n.resultIndex = optional<std::vector<int>>(j, "result_index", path);
  n.source = source(j, path);
  return n;
}

json valueJson(const ScalarValue& v) {
  return std::visit(
      [](const auto& value) -> json {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return nullptr;
        } else if constexpr (std::is_same_v<T, Other>) {
          return json::parse(value.text, nullptr, false);
        } else if constexpr (std::is_same_v<T, double>) {  // as the harness sends what JSON cannot hold
          if (std::isnan(value)) return "nan";
          if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
          return value;
        } else {
          return value;
        }
      },
      v);
}

json sourceJson(const std::optional<SourceRef>& s) {
  if (!s) return nullptr;
  return {{"file", s->file}, {"line", s->line}, {"function", s->function}};
}

template <typename T>
json orNull(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json tensorJson(const TensorInfo& t) {
  json j = {{"id", t.id},       {"shape", t.shape},       {"dtype", t.dtype},
            {"strides", t.strides}, {"storage_offset", t.storageOffset}, {"role", t.role},
            {"name", orNull(t.name)}, {"producer", orNull(t.producer)}, {"view_of", orNull(t.viewOf)},
            {"py", orNull(t.py)}};
  if (!t.device.empty()) j["device"] = t.device;
  return j;
}

json nodeJson(const Node& n) {
  json inputs = json::array();
  for (const Argument& a : n.inputs) {
    json arg = {{"name", a.name}};
    if (a.tensor) {
      arg["tensor"] = *a.tensor;
    } else if (!a.tensors.empty()) {
      arg["tensors"] = json::array();
      for (const std::string& t : a.tensors) arg["tensors"].push_back(t.empty() ? json(nullptr) : json(t));
    } else {
      arg["value"] = valueJson(a.value);
    }
    if (!a.py.empty()) arg["py"] = a.py;
    if (a.keyword) arg["keyword"] = true;
    inputs.push_back(std::move(arg));
  }
  json result = n.resultIndex ? json(*n.resultIndex) : json(nullptr);
  return {{"id", n.id},          {"op", n.op},         {"inputs", std::move(inputs)}, {"outputs", n.outputs},
          {"kind", n.kind},      {"module", n.module}, {"source", sourceJson(n.source)},
          {"result_index", std::move(result)}};
}

}  // namespace

int64_t TensorInfo::numel() const {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

int64_t TensorInfo::elementBytes() const {
  switch (dtype.value()) {
    case DType::Float32: case DType::Int32: return 4;
    case DType::Float16: case DType::BFloat16: return 2;
    case DType::Float64: case DType::Int64: return 8;
    case DType::UInt8: case DType::Bool: return 1;
    default: return 0;  // the brain moves no tensor of another dtype
  }
}

bool TensorInfo::contiguous() const {
  int64_t expected = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1 && strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

bool TensorInfo::dense() const {
  std::vector<std::size_t> dims;
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1) dims.push_back(d);
  std::stable_sort(dims.begin(), dims.end(), [&](std::size_t a, std::size_t b) { return strides[a] < strides[b]; });
  int64_t expected = 1;
  for (std::size_t d : dims) {
    if (strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

std::vector<int64_t> TensorInfo::allocationStrides() const {
  if (dense()) return strides;
  std::vector<int64_t> out(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) out[d - 1] = out[d] * shape[d];
  return out;
}

const Argument* Node::arg(const std::string& name) const {
  for (const Argument& a : inputs)
    if (a.name == name) return &a;
  return nullptr;
}

std::string Node::where() const {
  std::string s = op + " (node " + std::to_string(id);
  if (source) {
    auto slash = source->file.find_last_of('/');
    s += ", " + (slash == std::string::npos ? source->file : source->file.substr(slash + 1)) + ":" +
         std::to_string(source->line);
  }
  return s + ")";
}

const TensorInfo* Graph::tensor(const std::string& id) const {
  auto it = tensorIndex_.find(id);
  return it == tensorIndex_.end() ? nullptr : &tensors[it->second];
}

const Node* Graph::node(int id) const {
  auto it = nodeIndex_.find(id);
  return it == nodeIndex_.end() ? nullptr : &nodes[it->second];
}

const TensorInfo* Graph::viewRoot(const TensorInfo& t) const {
  const TensorInfo* root = &t;
  while (root->viewOf) {
    const TensorInfo* base = tensor(*root->viewOf);
    if (!base) break;
    root = base;
  }
  return root;
}

bool Graph::reaches(const std::string& id, const std::string& target) const {
  for (const TensorInfo* t = tensor(id); t; t = t->viewOf ? tensor(*t->viewOf) : nullptr)
    if (t->id == target) return true;
  return false;
}

void Graph::addTensor(TensorInfo t) {
  tensorIndex_.emplace(t.id, tensors.size());
  tensors.push_back(std::move(t));
}

void Graph::insertNode(std::size_t position, Node n) {
  nodes.insert(nodes.begin() + static_cast<std::ptrdiff_t>(std::min(position, nodes.size())), std::move(n));
  indexNodes();
}

TensorInfo* Graph::tensor(const std::string& id) {
  auto it = tensorIndex_.find(id);
  return it == tensorIndex_.end() ? nullptr : &tensors[it->second];
}

void Graph::replaceNodes(std::vector<Node> replacement) {
  nodes = std::move(replacement);
  indexNodes();
}

void Graph::removeTensors(const std::set<std::string>& ids) {
  std::erase_if(tensors, [&](const TensorInfo& t) { return ids.count(t.id) > 0; });
  tensorIndex_.clear();
  for (std::size_t i = 0; i < tensors.size(); ++i) tensorIndex_.emplace(tensors[i].id, i);
}

void Graph::indexNodes() {
  nodeIndex_.clear();
  for (std::size_t i = 0; i < nodes.size(); ++i) nodeIndex_.emplace(nodes[i].id, i);
}

Outcome<const TensorInfo*> Graph::abiRoot(const TensorInfo& t) const {
  const TensorInfo* root = viewRoot(t);
  if (root->role == Role::Constant)
    return Failure{"tensor " + t.id + " was made outside ATen (role constant); ModelNew cannot pass it"};
  if (root->role == Role::Intermediate && !root->dense())
    return Failure{"intermediate " + root->id + " has gaps or overlaps in its strides; the generated buffers are dense"};
  return root;
}

Outcome<Graph> parseGraph(const json& j) {
  try {
    Graph g;
    const auto schema = get<std::string>(j, "schema", "graph");
    if (schema != "stitchcuda.graph/1")
      return Failure{"graph schema is " + schema + "; this host reads stitchcuda.graph/1 (update the harness or host)"};
    g.task = j.value("task", "");
    g.device = j.value("device", "");
    g.torch = j.value("torch", "");
    const json& tensors = field(j, "tensors", "graph");
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      g.tensors.push_back(tensorFrom(tensors[i], "tensors[" + std::to_string(i) + "]"));
      if (!g.tensorIndex_.emplace(g.tensors.back().id, i).second)
        return Failure{"tensors[" + std::to_string(i) + "]: duplicate tensor id " + g.tensors.back().id};
    }
    const json& nodes = field(j, "nodes", "graph");
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const std::string path = "nodes[" + std::to_string(i) + "]";
      g.nodes.push_back(nodeFrom(nodes[i], path));
      const Node& n = g.nodes.back();
      for (const Argument& a : n.inputs) {
        for (const auto& id : a.tensorIds())
          if (!id.empty() && !g.tensorIndex_.count(id))
            return Failure{path + " " + n.where() + ": argument " + a.name + " names unknown tensor " + id};
      }
      for (const auto& id : n.outputs)
        if (!g.tensorIndex_.count(id)) return Failure{path + " " + n.where() + ": unknown output tensor " + id};
      g.nodeIndex_.emplace(n.id, i);
    }
    g.inputs = get<std::vector<std::string>>(j, "inputs", "graph");
    g.outputs = get<std::vector<std::string>>(j, "outputs", "graph");
    for (const auto& id : g.outputs)
      if (!g.tensorIndex_.count(id)) return Failure{"graph.outputs names unknown tensor " + id};
    if (auto it = j.find("state"); it != j.end() && it->is_array())
      for (std::size_t i = 0; i < it->size(); ++i) {
        const std::string path = "state[" + std::to_string(i) + "]";
        const auto id = get<std::string>((*it)[i], "tensor", path);
        if (!g.tensorIndex_.count(id)) return Failure{path + " names unknown tensor " + id};
        g.state.emplace_back(get<std::string>((*it)[i], "name", path), id);
        if (std::find(g.outputs.begin(), g.outputs.end(), id) == g.outputs.end()) {
          g.outputs.push_back(id);
          ++g.stateOutputs;
        }
      }
    if (auto it = j.find("uncovered"); it != j.end() && it->is_array())
      for (std::size_t i = 0; i < it->size(); ++i) {
        const std::string path = "uncovered[" + std::to_string(i) + "]";
        g.uncovered.push_back({get<std::string>((*it)[i], "op", path), (*it)[i].value("reason", ""),
                               source((*it)[i], path), std::nullopt, 0});
      }
    if (auto it = j.find("input_values"); it != j.end() && it->is_object())
      for (const auto& [k, v] : it->items())
        if (v.is_string()) g.inputValues[std::atoi(k.c_str())] = v.get<std::string>();
    if (auto it = j.find("construction"); it != j.end() && it->is_object())
      g.construction = Construction{it->value("prelude", ""), it->value("body", "")};
    if (auto it = j.find("batch"); it != j.end() && it->is_object() && it->value("rows_independent", false) &&
        it->contains("size") && (*it)["size"].is_number_integer())
      g.independentRows = (*it)["size"].get<int64_t>();
    return g;
  } catch (const FieldError& e) {
    return Failure{std::string("captured graph: ") + e.what()};
  }
}

json writeGraph(const Graph& g) {
  json j = {{"schema", "stitchcuda.graph/1"}, {"task", g.task}, {"device", g.device}, {"torch", g.torch}};
  j["tensors"] = json::array();
  for (const TensorInfo& t : g.tensors) j["tensors"].push_back(tensorJson(t));
  j["nodes"] = json::array();
  for (const Node& n : g.nodes) j["nodes"].push_back(nodeJson(n));
  j["inputs"] = g.inputs;
  // parseGraph appends the state tensors the forward does not return; the capture lists them once, in state.
  j["outputs"] = std::vector<std::string>(g.outputs.begin(), g.outputs.end() - static_cast<std::ptrdiff_t>(g.stateOutputs));
  j["state"] = json::array();
  for (const auto& [name, tensor] : g.state) j["state"].push_back({{"name", name}, {"tensor", tensor}});
  j["uncovered"] = json::array();
  for (const UncoveredOp& u : g.uncovered)
    j["uncovered"].push_back({{"op", u.op}, {"reason", u.reason}, {"source", sourceJson(u.source)}});
  j["input_values"] = json::object();
  for (const auto& [position, py] : g.inputValues) j["input_values"][std::to_string(position)] = py;
  j["construction"] = g.construction ? json{{"prelude", g.construction->prelude}, {"body", g.construction->body}}
                                     : json(nullptr);
  j["batch"] = g.independentRows ? json{{"size", *g.independentRows}, {"rows_independent", true}} : json(nullptr);
  return j;
}

std::vector<std::string> Argument::tensorIds() const {
  std::vector<std::string> ids = tensors;
  if (tensor) ids.push_back(*tensor);
  return ids;
}

std::optional<double> asNumber(const ScalarValue& v) {
  if (auto d = std::get_if<double>(&v)) return *d;
  if (auto i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  if (auto b = std::get_if<bool>(&v)) return *b ? 1.0 : 0.0;
  return std::nullopt;
}

std::optional<std::vector<int64_t>> asIntList(const ScalarValue& v) {
  if (auto l = std::get_if<std::vector<int64_t>>(&v)) return *l;
  if (auto i = std::get_if<int64_t>(&v)) return std::vector<int64_t>{*i};
  return std::nullopt;
}

}  // namespace stitch::agents::ir
