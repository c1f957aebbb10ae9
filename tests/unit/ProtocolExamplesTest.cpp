// Every example under protocol/examples/ is a valid message whose params (or result) parse
// into the type the host uses for it, so the catalogue and the code cannot drift apart. The
// TypeScript side tests against the same files.
#include "agents/JobEvent.h"
#include "protocol/JsonRpc.h"
#include "protocol/StitchTypes.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

using namespace stitch;
using protocol::json;

namespace {

using Check = std::function<void(const json&)>;

template <typename T>
Check as() {
  return [](const json& j) { (void)j.get<T>(); };
}

// Parsers for params of client messages and for results the host sends, by file stem.
const std::map<std::string, Check>& typed() {
  static const std::map<std::string, Check> table{
      {"initialize.request", as<protocol::InitializeParams>()},
      {"cancelRequest.notification", as<protocol::CancelParams>()},
      {"textDocument.didOpen.notification", as<protocol::DidOpenParams>()},
      {"textDocument.didChange.notification", as<protocol::DidChangeParams>()},
      {"textDocument.didClose.notification", as<protocol::DidCloseParams>()},
      {"textDocument.hover.request", as<protocol::TextDocumentPositionParams>()},
      {"textDocument.codeLens.request", as<protocol::CodeLensParams>()},
      {"textDocument.codeAction.request", as<protocol::CodeActionParams>()},
      {"workspace.executeCommand.request",
       [](const json& j) { (void)j.get<protocol::ExecuteCommandParams>().arguments.at(0).get<protocol::CandidateRef>(); }},
      {"stitchcuda.optimize.request", as<protocol::OptimizeParams>()},
      {"stitchcuda.cancelJob.request", as<protocol::JobRef>()},
      {"stitchcuda.waitJob.request", as<protocol::JobRef>()},
      {"stitchcuda.openJobLog.request", as<protocol::OpenJobLogParams>()},
      {"stitchcuda.waitJob.result", as<protocol::JobFinishedParams>()},
      {"stitchcuda.listJobs.result", [](const json& j) { (void)j.at("jobs").get<std::vector<protocol::JobSummary>>(); }},
      {"stitchcuda.score.result",
       [](const json& j) {  // SCORE.md: the schema, a reward, the rule and the four dimensions with scores
         if (j.at("schema") != "stitchcuda.score/1") throw std::runtime_error("not stitchcuda.score/1");
         (void)j.at("reward").get<double>();
         for (const char* d : {"anti_hacking", "cuda_engineering", "operator_coverage", "skill_compliance"})
           (void)j.at("rubric").at(d).at("score");
         (void)j.at("rule").at("score");
       }},
      {"textDocument.codeLens.result",
       [](const json& j) {
         for (const auto& lens : j) {
           (void)lens.at("range").get<protocol::Range>();
           (void)lens.at("command").at("arguments").at(0).get<protocol::CandidateRef>();
         }
       }},
  };
  return table;
}

std::vector<std::filesystem::path> examples() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(STITCH_SOURCE_DIR) / "protocol/examples"))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST(ProtocolExamples, EveryExampleIsAValidMessageOfItsKind) {
  auto files = examples();
  ASSERT_GE(files.size(), 40u);
  for (const auto& path : files) {
    SCOPED_TRACE(path.filename().string());
    std::ifstream in(path);
    json message = json::parse(in);
    auto incoming = protocol::classify(message);
    ASSERT_NE(incoming.kind, protocol::Incoming::Kind::Invalid) << incoming.error->message;
    std::string stem = path.stem().string();
    std::string kind = stem.substr(stem.rfind('.') + 1);
    auto expectedKind = kind == "request"        ? protocol::Incoming::Kind::Request
                        : kind == "notification" ? protocol::Incoming::Kind::Notification
                                                 : protocol::Incoming::Kind::Response;
    EXPECT_EQ(incoming.kind, expectedKind);
    EXPECT_EQ(kind == "error", incoming.error.has_value());

    if (incoming.kind == protocol::Incoming::Kind::Notification && incoming.method.rfind("stitchcuda/", 0) == 0) {
      EXPECT_NO_THROW(agents::parseEvent(incoming.method, incoming.params));
    }
    if (auto it = typed().find(stem); it != typed().end()) {
      EXPECT_NO_THROW(it->second(kind == "result" ? *incoming.result : incoming.params));
    }
  }
}

TEST(ProtocolExamples, EveryCatalogueMethodHasAnExample) {
  std::set<std::string> methods;
  for (const auto& path : examples()) {
    std::ifstream in(path);
    json message = json::parse(in);
    if (message.contains("method")) methods.insert(message["method"].get<std::string>());
  }
  for (const char* m : {"initialize", "initialized", "shutdown", "exit", "$/cancelRequest", "$/progress",
                        "window/workDoneProgress/create", "workspace/applyEdit", "workspace/codeLens/refresh",
                        "textDocument/didOpen", "textDocument/didChange", "textDocument/didClose",
                        "textDocument/hover", "textDocument/codeLens", "textDocument/codeAction",
                        "workspace/executeCommand", "stitchcuda/optimize", "stitchcuda/plan",
                        "stitchcuda/candidate", "stitchcuda/profile", "stitchcuda/log", "stitchcuda/jobFinished",
                        "stitchcuda/cancelJob", "stitchcuda/listJobs", "stitchcuda/waitJob", "stitchcuda/openJobLog",
                        "stitchcuda/score"})
    EXPECT_TRUE(methods.count(m)) << m;
}

TEST(ProtocolExamples, OptimizeAllowsOnlyTheNamedPrecisions) {
  json params = json::parse(R"({"textDocument": {"uri": "file:///m.py"}, "allowPrecision": ["tf32"]})");
  EXPECT_EQ(params.get<protocol::OptimizeParams>().allowPrecision, std::vector<std::string>{"tf32"});
  EXPECT_TRUE(json::parse(R"({"textDocument": {"uri": "file:///m.py"}})").get<protocol::OptimizeParams>().allowPrecision.empty());
  params["allowPrecision"] = {"fp8"};
  EXPECT_THROW((void)params.get<protocol::OptimizeParams>(), protocol::ParamsError);
}

TEST(ProtocolExamples, OptimizeLoadTimeoutIsAPositiveNumberOfSecondsOrTheHosts) {
  json params = json::parse(R"({"textDocument": {"uri": "file:///m.py"}})");
  EXPECT_FALSE(params.get<protocol::OptimizeParams>().loadTimeout);
  params["loadTimeout"] = 30.5;
  EXPECT_EQ(params.get<protocol::OptimizeParams>().loadTimeout, 30.5);
  for (json bad : {json(0), json(-1), json("30")}) {
    params["loadTimeout"] = bad;
    EXPECT_THROW((void)params.get<protocol::OptimizeParams>(), protocol::ParamsError) << bad;
  }
}

TEST(ProtocolExamples, OptimizeLayoutIsAutoByDefaultOrAForcedOne) {
  json params = json::parse(R"({"textDocument": {"uri": "file:///m.py"}})");
  EXPECT_EQ(params.get<protocol::OptimizeParams>().layout, "auto");
  for (const char* mode : {"nchw", "channels_last"}) {
    params["layout"] = mode;
    EXPECT_EQ(params.get<protocol::OptimizeParams>().layout, mode);
  }
  params["layout"] = "nhwc";
  EXPECT_THROW((void)params.get<protocol::OptimizeParams>(), protocol::ParamsError);
}

TEST(ProtocolExamples, OptimizePrecisionIsEagerByDefaultOrFp32) {
  json params = json::parse(R"({"textDocument": {"uri": "file:///m.py"}})");
  EXPECT_EQ(params.get<protocol::OptimizeParams>().precision, "eager");
  params["precision"] = "fp32";
  EXPECT_EQ(params.get<protocol::OptimizeParams>().precision, "fp32");
  params["precision"] = "eager";
  EXPECT_EQ(params.get<protocol::OptimizeParams>().precision, "eager");
  params["precision"] = "tf32";
  EXPECT_THROW((void)params.get<protocol::OptimizeParams>(), protocol::ParamsError);
}
