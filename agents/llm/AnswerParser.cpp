// Parsing and validation of model answers; see AnswerParser.h.
#include "agents/llm/AnswerParser.h"

#include <map>
#include <sstream>

namespace stitch::agents::llm {
namespace {

using protocol::json;

std::string shortOp(const std::string& op) { return op.rfind("aten::", 0) == 0 ? op.substr(6) : op; }

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

// "json" from "json", "cuda" from "cuda candidate.cu".
std::string language(const std::string& info) {
  std::string lang = info.substr(0, info.find(' '));
  for (char& c : lang) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lang;
}

Outcome<json> planJson(const std::string& answer) {
  auto blocks = fencedBlocks(answer);
  if (!blocks) return blocks.error();
  std::vector<FencedBlock> json;
  for (const auto& b : blocks.value())
    if (language(b.info) == "json" || b.info.empty()) json.push_back(b);
  std::string text;
  if (json.size() == 1) text = json[0].text;
  else if (json.empty() && blocks.value().empty()) text = answer;  // a bare JSON answer is fine too
  else
    return Failure{"expected exactly one ```json block, found " + std::to_string(json.size()) +
                   (blocks.value().size() > json.size() ? " (and other blocks)" : "")};
  try {
    return json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return Failure{std::string("the plan is not valid JSON: ") + e.what()};
  }
}

}  // namespace

Outcome<std::vector<FencedBlock>> fencedBlocks(const std::string& answer) {
  std::vector<FencedBlock> out;
  std::istringstream in(answer);
  std::string line;
  int n = 0;
  std::optional<FencedBlock> open;
  while (std::getline(in, line)) {
    ++n;
    const std::string t = trim(line);
    if (t.rfind("```", 0) != 0) {
      if (open) open->text += line + "\n";
      continue;
    }
    if (open) {
      if (t == "```") {
        out.push_back(std::move(*open));
        open.reset();
      } else {
        open->text += line + "\n";
      }
    } else {
      open = FencedBlock{trim(t.substr(3)), "", n};
    }
  }
  if (open) return Failure{"the code block opened at line " + std::to_string(open->line) + " (```" + open->info +
                           ") is never closed; the answer looks cut off"};
  return out;
}

Outcome<protocol::PlanParams> parsePlan(const std::string& answer, const PlanContext& context) {
  auto parsed = planJson(answer);
  if (!parsed) return parsed.error();
  const json& j = parsed.value();
  if (!j.is_object()) return Failure{"the plan must be a JSON object with \"tasks\" and \"uncovered\""};
  if (!j.contains("tasks") || !j["tasks"].is_array() || j["tasks"].empty())
    return Failure{"\"tasks\" must be a non-empty array"};
  if (j.contains("uncovered") && !j["uncovered"].is_array()) return Failure{"\"uncovered\" must be an array of strings"};

  // Ops are matched with or without the aten:: prefix and overload, and recorded as captured.
  std::map<std::string, std::string> known;
  for (const auto& op : context.operators) {
    known[op] = op;
    known.emplace(shortOp(op), op);
    known.emplace(shortOp(op).substr(0, shortOp(op).find('.')), op);
  }
  std::set<std::string> covered;
  std::set<std::string> ids;
  protocol::PlanParams plan;
  for (std::size_t i = 0; i < j["tasks"].size(); ++i) {
    const json& t = j["tasks"][i];
    const std::string where = "tasks[" + std::to_string(i) + "]";
    if (!t.is_object()) return Failure{where + " must be an object"};
    for (const char* key : {"id", "title", "technique"})
      if (!t.contains(key) || !t[key].is_string() || t[key].get<std::string>().empty())
        return Failure{where + "." + key + " must be a non-empty string"};
    protocol::PlanTask task;
    task.id = t["id"];
    if (!ids.insert(task.id).second) return Failure{where + ".id \"" + task.id + "\" is used twice"};
    task.title = t["title"];
    task.technique = t["technique"];
    task.status = "active";
    if (!t.contains("operators") || !t["operators"].is_array() || t["operators"].empty())
      return Failure{where + ".operators must be a non-empty array of ATen op names"};
    for (const json& op : t["operators"]) {
      if (!op.is_string()) return Failure{where + ".operators must hold strings"};
      auto it = known.find(op.get<std::string>());
      if (it == known.end()) {
        std::string list;
        for (const auto& k : context.operators) list += (list.empty() ? "" : ", ") + k;
        return Failure{where + ".operators names \"" + op.get<std::string>() + "\", which is not in the graph (its ops: " +
                       list + ")"};
      }
      task.operators.push_back(it->second);
      covered.insert(it->second);
    }
    if (!t.contains("lines") || !t["lines"].is_array() || t["lines"].size() != 2 || !t["lines"][0].is_number_integer() ||
        !t["lines"][1].is_number_integer())
      return Failure{where + ".lines must be [first, last], two 1-based line numbers"};
    const int first = t["lines"][0].get<int>(), last = t["lines"][1].get<int>();
    if (first < 1 || last < first || last > context.lineCount)
      return Failure{where + ".lines [" + std::to_string(first) + ", " + std::to_string(last) +
                     "] is not a range inside the file's " + std::to_string(context.lineCount) + " lines"};
    task.range = {{first - 1, 0}, {last, 0}};
    if (t.contains("expectedGainPct")) {
      if (!t["expectedGainPct"].is_number() || t["expectedGainPct"].get<double>() < 0 || t["expectedGainPct"].get<double>() > 100)
        return Failure{where + ".expectedGainPct must be a number from 0 to 100"};
      task.expectedGainPct = t["expectedGainPct"].get<double>();
    }
    plan.tasks.push_back(std::move(task));
  }
  for (const json& u : j.value("uncovered", json::array())) {
    if (!u.is_string()) return Failure{"\"uncovered\" must hold strings"};
    const std::string entry = u.get<std::string>();
    std::string name = entry.substr(0, entry.find_first_of(" ("));
    if (!name.empty() && name.back() == ':') name.pop_back();
    if (auto it = known.find(name); it != known.end()) covered.insert(it->second);
    plan.uncovered.push_back(entry);
  }
  for (const auto& op : context.operators)
    if (!covered.count(op))
      return Failure{"the graph's operator " + op + " is in no task and not listed in \"uncovered\""};
  return plan;
}

Outcome<CandidateText> parseCandidate(const std::string& answer) {
  auto blocks = fencedBlocks(answer);
  if (!blocks) return blocks.error();
  CandidateText c;
  int cudaBlocks = 0, pythonBlocks = 0;
  for (const auto& b : blocks.value()) {
    const std::string lang = language(b.info);
    if (lang == "cuda" || lang == "cu" || lang == "cpp" || lang == "c++" || b.info.find("candidate.cu") != std::string::npos) {
      c.cuda = b.text;
      ++cudaBlocks;
    } else if (lang == "python" || lang == "py" || b.info.find("model_new.py") != std::string::npos) {
      c.python = b.text;
      ++pythonBlocks;
    }
  }
  if (cudaBlocks != 1 || pythonBlocks != 1)
    return Failure{"expected one ```cuda candidate.cu block and one ```python model_new.py block, found " +
                   std::to_string(cudaBlocks) + " CUDA and " + std::to_string(pythonBlocks) + " Python block(s)"};
  if (c.cuda.find("stitch_abi.h") == std::string::npos)
    return Failure{"candidate.cu does not #include \"stitch_abi.h\""};
  if (c.cuda.find("stitch_forward") == std::string::npos || c.cuda.find("extern \"C\"") == std::string::npos)
    return Failure{"candidate.cu does not export extern \"C\" int stitch_forward(const StitchTensor*, int32_t, cudaStream_t)"};
  if (c.cuda.find("torch/") != std::string::npos || c.cuda.find("ATen/") != std::string::npos)
    return Failure{"candidate.cu includes PyTorch headers; the fast path builds without them"};
  if (c.python.find("class ModelNew") == std::string::npos) return Failure{"model_new.py defines no class ModelNew"};
  if (c.python.find("__stitch_library__") == std::string::npos || c.python.find("load_library") == std::string::npos)
    return Failure{"model_new.py must load the built library with load_library(__stitch_library__)"};
  if (c.python.find("def forward") == std::string::npos) return Failure{"ModelNew in model_new.py has no forward"};
  if (c.python.find("cpp_extension") != std::string::npos)
    return Failure{"model_new.py uses torch.utils.cpp_extension; the fast path calls the .cu through load_library"};
  std::istringstream in(answer);
  for (std::string line; std::getline(in, line);)
    if (trim(line).rfind("Strategy:", 0) == 0) {
      c.strategy = trim(trim(line).substr(9));
      break;
    }
  return c;
}

}  // namespace stitch::agents::llm
