// The rubric reward of one candidate; see Scoring.h.
#include "server/Scoring.h"

#include "server/ScoreCoverage.h"
#include "agents/builtin/normalize/GraphNormalize.h"

#include <algorithm>
#include <fstream>
#include <stdexcept>

namespace stitch::server {
namespace {

using protocol::json;

json readJsonFile(const std::string& path, const std::string& field) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(field + ": cannot read " + path);
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw std::invalid_argument(field + ": " + path + " is not JSON: " + e.what());
  }
}

// An object given inline, or the path of a file holding it.
json objectOrFile(const json& v, const std::string& field) {
  if (v.is_object()) return v;
  if (v.is_string()) return readJsonFile(v.get<std::string>(), field);
  throw std::invalid_argument(field + " must be an object or the path of a JSON file");
}

std::string absolute(const std::string& path) {
  std::error_code ec;
  auto p = std::filesystem::absolute(path, ec);
  return ec ? path : p.string();
}

// The operators the candidate left in PyTorch, per forward: those it declares (the verdict's
// pytorch_ops) and those the verifier saw it run beyond them (its pytorch_compute findings).
std::map<std::string, int> pytorchOps(const json& verdict) {
  std::map<std::string, int> out;
  const json declared = verdict.value("pytorch_ops", json::object());
  for (const auto& [op, n] : declared.items())
    if (n.is_number_integer()) out[op] = n.get<int>();
  for (const json& f : verdict.value("findings", json::array())) {
    if (!f.is_object() || f.value("check", "") != "pytorch_compute" || !f.contains("data") || !f["data"].is_object()) continue;
    const json& d = f["data"];
    if (d.contains("op") && d["op"].is_string() && d.contains("count") && d["count"].is_number_integer())
      out[d["op"].get<std::string>()] = std::max(out[d["op"].get<std::string>()], d["count"].get<int>());
  }
  return out;
}

}  // namespace

std::optional<protocol::PlanCoverage> coverageFrom(const json& plan) {
  if (!plan.is_object()) return std::nullopt;
  if (plan.contains("params")) return coverageFrom(plan["params"]);  // a stitchcuda/plan notification
  if (plan.contains("coverage")) return coverageFrom(plan["coverage"]);
  if (!plan.contains("operators") || !plan.contains("coveredOperators")) return std::nullopt;
  return plan.get<protocol::PlanCoverage>();
}

ScoreInputs scoreInputsFrom(const json& j) {
  if (!j.is_object()) throw std::invalid_argument("a score request is a JSON object");
  ScoreInputs in;
  auto text = [&](const char* field, bool required) -> std::optional<std::string> {
    if (!j.contains(field) || j[field].is_null()) {
      if (required) throw std::invalid_argument(std::string("missing field '") + field + "'");
      return std::nullopt;
    }
    if (!j[field].is_string()) throw std::invalid_argument(std::string("'") + field + "' must be a string");
    return j[field].get<std::string>();
  };
  in.reference = *text("reference", true);
  in.candidate = *text("candidate", true);
  in.previous = text("previous", false);
  in.profile = text("profile", false);
  if (in.profile && !std::filesystem::is_regular_file(*in.profile))
    throw std::invalid_argument("profile: cannot read " + *in.profile);
  for (auto [field, target] : {std::pair{"verdict", &in.verdict}, {"previousVerdict", &in.previousVerdict},
                               {"feedback", &in.feedback}})
    if (j.contains(field) && !j[field].is_null()) *target = objectOrFile(j[field], field);
  for (const char* field : {"coverage", "plan"})
    if (j.contains(field) && !j[field].is_null()) {
      in.coverage = coverageFrom(objectOrFile(j[field], field));
      if (!in.coverage) throw std::invalid_argument(std::string("'") + field + "' holds no plan coverage");
    }
  if (j.contains("weights")) {
    if (!j["weights"].is_object()) throw std::invalid_argument("'weights' must be an object of numbers");
    in.weights = j["weights"];
  }
  for (const char* field : {"allowPrecision", "precision"})
    if (j.contains(field)) in.verifyParams[field] = j[field];
  return in;
}

ScoreResult scoreCandidate(agents::Worker& worker, ScoreInputs in, const std::filesystem::path& cacheDir,
                           std::chrono::milliseconds deadline, const agents::CancelToken& cancel) {
  const std::string reference = absolute(in.reference), candidate = absolute(in.candidate);
  json params = in.verifyParams;
  params["reference"] = reference;
  params["candidate"] = candidate;
  params["cacheDir"] = cacheDir.string();
  if (in.verdict) {
    params["verdict"] = *in.verdict;
    params["verdictSource"] = "recorded";
  } else if (auto hello = worker.call("hello", json::object(), deadline, cancel); !hello.ok()) {
    return *hello.error;
  } else if (!hello.result->value("cudaAvailable", false)) {
    // On the CPU the verifier would run reference and candidate at the task's own sizes (minutes for a
    // large task) for a verdict that still needs a GPU: the score reads the candidate's code alone.
    params["noGpu"] = true;
    params["verdictSource"] = "none: no GPU is visible";
  } else {
    auto verdict = worker.call("verify", params, deadline, cancel);
    if (!verdict.ok()) return *verdict.error;
    params["verdict"] = *verdict.result;
    params["verdictSource"] = "verified";
  }
  std::string coverageSource = "plan";
  if (in.coverage) {
    params["coverage"] = *in.coverage;
  } else {
    // Counted as the planner counts a plan: over the normalized graph the built-in brain reads.
    coverageSource = "graph";
    auto graph = worker.call("captureGraph", {{"path", reference}}, deadline, cancel);
    if (graph.ok()) {
      try {
        auto g = agents::builtin::parseGraph(agents::builtin::normalizeGraph(*graph.result));
        if (g.ok()) params["coverage"] = declaredCoverage(g.value(), pytorchOps(params.value("verdict", json::object())));
        else coverageSource = "none: the captured graph did not parse: " + g.error().message;
      } catch (const std::exception& e) {
        coverageSource = std::string("none: the captured graph did not normalize: ") + e.what();
      }
    } else {
      coverageSource = "none: capturing the reference's graph failed: " + graph.error->message;
    }
  }
  if (in.profile) params["profile"] = absolute(*in.profile);
  if (in.previous) params["previous"] = absolute(*in.previous);
  if (in.previousVerdict) params["previousVerdict"] = *in.previousVerdict;
  if (in.feedback) params["feedback"] = *in.feedback;
  params["weights"] = in.weights;
  auto scored = worker.call("score", params, deadline, cancel);
  if (!scored.ok()) return *scored.error;
  json result = *scored.result;
  result["coverageSource"] = coverageSource;
  return result;
}

}  // namespace stitch::server
