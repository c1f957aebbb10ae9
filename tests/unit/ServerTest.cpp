// The server end to end in process: lifecycle, documents, jobs, progress, hovers, lenses,
// accept/reject through workspace/applyEdit, waitJob cancellation and reopening a log.
// The job runner here is scripted (what a job computes is tested elsewhere); everything
// else is the real server.
#include "server/Server.h"

#include "SampleJob.h"
#include "TestOutput.h"

#include "agents/program/ProgramFiles.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <condition_variable>

using namespace stitch;
using protocol::json;

namespace {

// Emits the sample events (except the finish), then waits until released or cancelled.
class ScriptedRunner final : public agents::JobRunner {
public:
  struct Gate {
    std::mutex m;
    std::condition_variable cv;
    bool released = false;
    void release() {
      std::lock_guard lock(m);
      released = true;
      cv.notify_all();
    }
  };
  // `files`: the program c1 carries (none by default), written into the job's folder as the loop does.
  // `lateCompileSpeedup`: once released, c2 is sent again with this speedup over torch.compile, as
  // the loop sends a candidate verified before torch.compile was timed.
  ScriptedRunner(std::shared_ptr<Gate> gate, std::vector<agents::program::ProgramFile> files,
                 std::optional<double> lateCompileSpeedup = std::nullopt)
      : gate_(std::move(gate)), files_(std::move(files)), lateCompileSpeedup_(lateCompileSpeedup) {}

  protocol::JobFinishedParams run(const agents::JobRequest& request, agents::JobContext& context) override {
    context.progress("measuring", 10);
    std::vector<protocol::CandidateFile> program;
    for (const auto& f : files_) {
      const auto source = request.jobDir / "program" / std::filesystem::path(f.path).filename();
      std::filesystem::create_directories(source.parent_path());
      std::ofstream(source) << f.text;
      program.push_back({f.path, source.string()});
    }
    std::optional<protocol::CandidateParams> c2;
    for (auto& e : test::sampleEvents(request.jobId, request.uri)) {
      if (std::holds_alternative<protocol::JobFinishedParams>(e)) continue;
      if (auto* c = std::get_if<protocol::CandidateParams>(&e)) c->candidate.documentVersion = request.documentVersion;
      if (auto* c = std::get_if<protocol::CandidateParams>(&e); c && c->candidate.id == "c1") c->candidate.files = program;
      if (auto* c = std::get_if<protocol::CandidateParams>(&e); c && c->candidate.id == "c2") c2 = *c;
      context.emit(e);
    }
    {
      std::unique_lock lock(gate_->m);
      while (!gate_->released && !context.cancelToken().cancelled())
        gate_->cv.wait_for(lock, std::chrono::milliseconds(10));
    }
    if (context.cancelToken().cancelled()) return {request.jobId, "cancelled", std::nullopt, std::nullopt, ""};
    if (lateCompileSpeedup_ && c2) {
      c2->candidate.speedupCompile = lateCompileSpeedup_;
      context.emit(*c2);
    }
    return {request.jobId, "improved", std::string("c1"), 1.8, "done"};
  }

private:
  std::shared_ptr<Gate> gate_;
  std::vector<agents::program::ProgramFile> files_;
  std::optional<double> lateCompileSpeedup_;
};

class ServerTest : public ::testing::Test {
protected:
  void SetUp() override {
    config.jobsDir = std::filesystem::temp_directory_path() / ("stitch-server-test-" + std::to_string(::getpid()));
    server = std::make_unique<server::Server>(out, pool, config,
                                              [this](const protocol::OptimizeParams& p, const server::HostConfig&)
                                                  -> std::unique_ptr<agents::JobRunner> {
                                                if (p.brain != "builtin") return nullptr;
                                                return std::make_unique<ScriptedRunner>(gate, programFiles, lateCompileSpeedup);
                                              });
  }
  void TearDown() override {
    gate->release();
    server.reset();
    pool.join();
  }

  json request(const std::string& method, json params) {
    json id = nextId++;
    server->handleBody(protocol::serialize(protocol::makeRequest(id, method, std::move(params))));
    auto reply = out.waitForId(id);
    EXPECT_TRUE(reply) << "no reply to " << method;
    return reply ? *reply : json();
  }
  void notify(const std::string& method, json params) {
    server->handleBody(protocol::serialize(protocol::makeNotification(method, std::move(params))));
  }
  void initialize(json capabilities) {
    request("initialize", {{"processId", nullptr}, {"capabilities", std::move(capabilities)}});
    notify("initialized", json::object());
  }
  void openDocument(int version = 1) {
    notify("textDocument/didOpen", {{"textDocument", {{"uri", uri}, {"languageId", "python"}, {"version", version},
                                                      {"text", std::string(20, '\n')}}}});
  }
  std::string startJob(json extra = json::object()) {
    json params{{"textDocument", {{"uri", uri}}}};
    params.update(extra);
    auto reply = request("stitchcuda/optimize", params);
    EXPECT_TRUE(reply.contains("result")) << reply.dump();
    std::string id = reply["result"]["jobId"];
    // The scripted runner emits its candidates right away; c2 is the last of them.
    EXPECT_TRUE(out.waitFor([](const json& m) {
      return m.value("method", "") == "stitchcuda/candidate" && m["params"]["candidate"]["id"] == "c2";
    }));
    return id;
  }
  // Answers the server's pending request `method` with `result`.
  json answer(const std::string& method, json result) {
    auto req = out.waitForMethod(method);
    EXPECT_TRUE(req) << "the server did not send " << method;
    if (!req) return json();
    server->handleBody(protocol::serialize(protocol::makeResponse((*req)["id"], std::move(result))));
    return *req;
  }

  const std::string uri = "file:///tmp/model.py";
  boost::asio::thread_pool pool{2};
  test::RecordingOutput out;
  server::HostConfig config;
  std::shared_ptr<ScriptedRunner::Gate> gate = std::make_shared<ScriptedRunner::Gate>();
  std::unique_ptr<server::Server> server;
  std::vector<agents::program::ProgramFile> programFiles;
  std::optional<double> lateCompileSpeedup;
  int nextId = 1;
  const json fullCapabilities{{"window", {{"workDoneProgress", true}}},
                              {"workspace", {{"applyEdit", true},
                                             {"workspaceEdit", {{"documentChanges", true}}},
                                             {"codeLens", {{"refreshSupport", true}}}}}};
};

TEST_F(ServerTest, EditorFeaturesAnswerEmptyWithoutAJob) {
  initialize(json::object());
  openDocument();
  EXPECT_TRUE(request("textDocument/hover", {{"textDocument", {{"uri", uri}}}, {"position", {{"line", 0}, {"character", 0}}}})["result"].is_null());
  EXPECT_EQ(request("textDocument/codeLens", {{"textDocument", {{"uri", uri}}}})["result"], json::array());
  EXPECT_EQ(request("textDocument/codeAction", {{"textDocument", {{"uri", uri}}},
                                                {"range", {{"start", {{"line", 0}, {"character", 0}}}, {"end", {{"line", 0}, {"character", 0}}}}},
                                                {"context", {{"diagnostics", json::array()}}}})["result"],
            json::array());
  EXPECT_EQ(request("stitchcuda/listJobs", json::object())["result"]["jobs"], json::array());
}

TEST_F(ServerTest, InitializeNegotiatesUtf8AndAdvertisesFeatures) {
  auto r = request("initialize", {{"capabilities", {{"general", {{"positionEncodings", {"utf-8", "utf-16"}}}}}}});
  auto caps = r["result"]["capabilities"];
  EXPECT_EQ(caps["positionEncoding"], "utf-8");
  EXPECT_EQ(caps["hoverProvider"], true);
  EXPECT_EQ(caps["executeCommandProvider"]["commands"].size(), 2u);
}

TEST_F(ServerTest, JobStreamsHoversLensesAndAcceptAppliesAVersionedEdit) {
  initialize(fullCapabilities);
  openDocument(3);
  std::string jobId = startJob({{"workDoneToken", "tok"}});
  auto begin = out.waitFor([](const json& m) { return m.value("method", "") == "$/progress" && m["params"]["value"]["kind"] == "begin"; });
  ASSERT_TRUE(begin);
  EXPECT_EQ((*begin)["params"]["token"], "tok");

  auto hover = request("textDocument/hover", {{"textDocument", {{"uri", uri}}}, {"position", {{"line", 10}, {"character", 2}}}});
  EXPECT_NE(hover["result"]["contents"]["value"].get<std::string>().find("memory"), std::string::npos);
  auto lenses = request("textDocument/codeLens", {{"textDocument", {{"uri", uri}}}})["result"];
  ASSERT_EQ(lenses.size(), 3u);  // two variants of one range: one row

  json id = nextId++;
  server->handleBody(protocol::serialize(protocol::makeRequest(id, "workspace/executeCommand",
      {{"command", "stitchcuda.acceptCandidate"}, {"arguments", {{{"jobId", jobId}, {"candidateId", "c1"}}}}})));
  auto applyEdit = answer("workspace/applyEdit", {{"applied", true}});
  EXPECT_EQ(applyEdit["params"]["edit"]["documentChanges"][0]["textDocument"]["version"], 3);
  auto reply = out.waitForId(id);
  ASSERT_TRUE(reply);
  EXPECT_EQ((*reply)["result"]["applied"], true);
  EXPECT_TRUE(out.waitForMethod("workspace/codeLens/refresh"));
  // The accepted candidate has no lenses any more; the failed one keeps its three.
  EXPECT_EQ(request("textDocument/codeLens", {{"textDocument", {{"uri", uri}}}})["result"].size(), 3u);
}

// Undo in the editor puts the model back as it was before Accept: the candidate is open again, with
// its lens, and Accept of it is valid for the document's new version; Redo accepts it again.
TEST_F(ServerTest, UndoOfAnAcceptReopensTheCandidateAndRedoAcceptsItAgain) {
  initialize(fullCapabilities);
  openDocument(3);
  const std::string jobId = startJob();
  const std::string before(20, '\n');
  const std::string after = std::string(10, '\n') + "        return stitch_ops.gelu_scale(x)\n" + std::string(8, '\n');
  auto change = [&](int version, const std::string& text) {
    notify("textDocument/didChange", {{"textDocument", {{"uri", uri}, {"version", version}}}, {"contentChanges", {{{"text", text}}}}});
  };
  auto candidateEvent = [&](const std::string& status, int version) {
    return out.waitFor([&](const json& m) {
      return m.value("method", "") == "stitchcuda/candidate" && m["params"]["candidate"]["id"] == "c1" &&
             m["params"]["candidate"]["status"] == status && m["params"]["candidate"]["documentVersion"] == version;
    }, std::chrono::seconds(2));
  };
  auto lensFor = [&](const std::string& id) {
    const json lenses = request("textDocument/codeLens", {{"textDocument", {{"uri", uri}}}})["result"];
    for (const auto& l : lenses)
      if (l["command"]["arguments"][0]["candidateId"] == id) return true;
    return false;
  };
  const json acceptCommand{{"command", "stitchcuda.acceptCandidate"}, {"arguments", {{{"jobId", jobId}, {"candidateId", "c1"}}}}};
  json id = nextId++;
  server->handleBody(protocol::serialize(protocol::makeRequest(id, "workspace/executeCommand", acceptCommand)));
  change(4, after);  // the editor applies the edit, then answers
  const json firstEdit = answer("workspace/applyEdit", {{"applied", true}})["id"];
  ASSERT_TRUE(out.waitForId(id));
  EXPECT_FALSE(lensFor("c1"));

  change(5, before);  // Undo
  EXPECT_TRUE(candidateEvent("verified", 5));
  EXPECT_TRUE(lensFor("c1"));
  change(6, after);  // Redo
  EXPECT_TRUE(candidateEvent("accepted", 5));
  EXPECT_FALSE(lensFor("c1"));
  change(7, before);
  ASSERT_TRUE(candidateEvent("verified", 7));
  // Accept again is valid for the version Undo made.
  id = nextId++;
  server->handleBody(protocol::serialize(protocol::makeRequest(id, "workspace/executeCommand", acceptCommand)));
  auto secondEdit = out.waitFor([&](const json& m) { return m.value("method", "") == "workspace/applyEdit" && m["id"] != firstEdit; });
  ASSERT_TRUE(secondEdit);
  server->handleBody(protocol::serialize(protocol::makeResponse((*secondEdit)["id"], {{"applied", true}})));
  auto again = out.waitForId(id);
  ASSERT_TRUE(again);
  EXPECT_EQ((*again)["result"]["applied"], true) << again->dump();
}

// A candidate's program goes beside the model (/tmp here), written by the host before the edit and taken
// back when the editor undoes it; a program gone from the job folder is an error.
class ServerProgramTest : public ServerTest {
protected:
  void SetUp() override {
    ServerTest::SetUp();
    programFiles = {{folder + "/m.cu", "// the program\n"}};
  }
  void TearDown() override {
    ServerTest::TearDown();
    std::filesystem::remove_all("/tmp/" + folder);
  }
  json accept(const std::string& jobId) {
    json id = nextId++;
    server->handleBody(protocol::serialize(protocol::makeRequest(id, "workspace/executeCommand",
        {{"command", "stitchcuda.acceptCandidate"}, {"arguments", {{{"jobId", jobId}, {"candidateId", "c1"}}}}})));
    return id;
  }
  std::string read(const std::string& name) const {
    std::ifstream in("/tmp/" + folder + "/" + name);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  const std::string folder = "stitch_server_test_kernels_" + std::to_string(::getpid());
};

// Even a client that can create files gets the program from the host: the edit changes the model only,
// so that the editor's Undo of it (which the host follows) takes back exactly what Accept wrote.
TEST_F(ServerProgramTest, TheHostWritesTheProgramAndTheEditChangesOnlyTheModel) {
  json caps = fullCapabilities;
  caps["workspace"]["workspaceEdit"]["resourceOperations"] = {"create", "rename"};
  initialize(caps);
  openDocument(3);
  const json id = accept(startJob());
  auto edit = answer("workspace/applyEdit", {{"applied", true}})["params"]["edit"]["documentChanges"];
  ASSERT_EQ(edit.size(), 1u);
  EXPECT_EQ(edit[0]["textDocument"]["uri"], uri);
  EXPECT_EQ(read("m.cu"), "// the program\n");
  ASSERT_TRUE(out.waitForId(id));
}

// Undo of the Accept removes every file it added, and the folder it made; a file it replaced gets its
// text back. Redo writes the program again.
TEST_F(ServerProgramTest, UndoTakesTheProgramBackAndRedoWritesItAgain) {
  programFiles.push_back({folder + "/__init__.py", "# the loader\n"});
  initialize(fullCapabilities);
  openDocument(3);
  const std::string before(20, '\n');
  const std::string after = std::string(10, '\n') + "        return stitch_ops.gelu_scale(x)\n" + std::string(8, '\n');
  auto change = [&](int version, const std::string& text) {
    notify("textDocument/didChange", {{"textDocument", {{"uri", uri}, {"version", version}}}, {"contentChanges", {{{"text", text}}}}});
  };
  const json id = accept(startJob());
  change(4, after);
  answer("workspace/applyEdit", {{"applied", true}});
  ASSERT_TRUE(out.waitForId(id));
  EXPECT_EQ(read("m.cu"), "// the program\n");
  EXPECT_EQ(read("__init__.py"), "# the loader\n");
  change(5, before);
  EXPECT_FALSE(std::filesystem::exists("/tmp/" + folder));
  change(6, after);
  EXPECT_EQ(read("m.cu"), "// the program\n");
  EXPECT_EQ(read("__init__.py"), "# the loader\n");
}

TEST_F(ServerProgramTest, UndoGivesAReplacedFileItsTextBack) {
  std::filesystem::create_directories("/tmp/" + folder);
  std::ofstream("/tmp/" + folder + "/m.cu") << "// the user's own\n";
  initialize(fullCapabilities);
  openDocument(3);
  const json id = accept(startJob());
  notify("textDocument/didChange", {{"textDocument", {{"uri", uri}, {"version", 4}}}, {"contentChanges", {{{"text", "edited\n"}}}}});
  answer("workspace/applyEdit", {{"applied", true}});
  ASSERT_TRUE(out.waitForId(id));
  EXPECT_EQ(read("m.cu"), "// the program\n");
  notify("textDocument/didChange", {{"textDocument", {{"uri", uri}, {"version", 5}}}, {"contentChanges", {{{"text", std::string(20, '\n')}}}}});
  EXPECT_EQ(read("m.cu"), "// the user's own\n");
}

TEST_F(ServerProgramTest, AnEditTheClientDoesNotApplyLeavesNoProgram) {
  initialize(fullCapabilities);
  openDocument(3);
  const json id = accept(startJob());
  answer("workspace/applyEdit", {{"applied", false}, {"failureReason", "the user said no"}});
  auto reply = out.waitForId(id);
  ASSERT_TRUE(reply);
  EXPECT_TRUE(reply->contains("error"));
  EXPECT_FALSE(std::filesystem::exists("/tmp/" + folder));
}

TEST_F(ServerProgramTest, AProgramGoneFromTheJobFolderIsAnError) {
  initialize(fullCapabilities);
  openDocument(3);
  const std::string jobId = startJob();
  std::filesystem::remove_all(config.jobsDir / jobId / "program");
  auto r = request("workspace/executeCommand", {{"command", "stitchcuda.acceptCandidate"},
                                                {"arguments", {{{"jobId", jobId}, {"candidateId", "c1"}}}}});
  EXPECT_EQ(r["error"]["code"], -32803);
  EXPECT_NE(r["error"]["message"].get<std::string>().find("optimize again"), std::string::npos) << r.dump();
}

TEST_F(ServerTest, AcceptIsRefusedWhenTheDocumentChanged) {
  initialize(fullCapabilities);
  openDocument(3);
  std::string jobId = startJob();
  notify("textDocument/didChange", {{"textDocument", {{"uri", uri}, {"version", 4}}},
                                    {"contentChanges", {{{"text", "x = 1\n"}}}}});
  auto r = request("workspace/executeCommand", {{"command", "stitchcuda.acceptCandidate"},
                                                {"arguments", {{{"jobId", jobId}, {"candidateId", "c1"}}}}});
  EXPECT_EQ(r["error"]["code"], -32801);
}

TEST_F(ServerTest, RejectRemovesTheLensesAndIsLogged) {
  initialize(fullCapabilities);
  openDocument();
  std::string jobId = startJob();
  auto r = request("workspace/executeCommand", {{"command", "stitchcuda.rejectCandidate"},
                                                {"arguments", {{{"jobId", jobId}, {"candidateId", "c2"}}}}});
  EXPECT_TRUE(r["result"].is_null());
  EXPECT_EQ(request("textDocument/codeLens", {{"textDocument", {{"uri", uri}}}})["result"].size(), 3u);
  gate->release();
  request("stitchcuda/waitJob", {{"jobId", jobId}});
  auto log = agents::readJobLog(config.jobsDir / jobId / "log.jsonl");
  bool sawReject = false;
  for (const auto& e : log.events)
    if (auto* c = std::get_if<protocol::CandidateParams>(&e); c && c->candidate.status == "rejected") sawReject = true;
  EXPECT_TRUE(sawReject);
}

// The job sends a candidate again once torch.compile was timed after it: the number is taken, the
// user's reject stays, in the host's state, in what the client is sent and in the job's log.
TEST_F(ServerTest, AJobsLaterWordOnACandidateKeepsTheUsersReject) {
  lateCompileSpeedup = 1.4;
  initialize(fullCapabilities);
  openDocument();
  std::string jobId = startJob();
  request("workspace/executeCommand", {{"command", "stitchcuda.rejectCandidate"},
                                       {"arguments", {{{"jobId", jobId}, {"candidateId", "c2"}}}}});
  gate->release();
  request("stitchcuda/waitJob", {{"jobId", jobId}});
  auto late = out.waitFor([](const json& m) {
    return m.value("method", "") == "stitchcuda/candidate" && m["params"]["candidate"]["id"] == "c2" &&
           m["params"]["candidate"].contains("speedupCompile");
  });
  ASSERT_TRUE(late);
  EXPECT_EQ((*late)["params"]["candidate"]["status"], "rejected");
  EXPECT_EQ((*late)["params"]["candidate"]["speedupCompile"], 1.4);
  const protocol::Candidate* last = nullptr;
  auto log = agents::readJobLog(config.jobsDir / jobId / "log.jsonl");
  for (const auto& e : log.events)
    if (auto* c = std::get_if<protocol::CandidateParams>(&e); c && c->candidate.id == "c2") last = &c->candidate;
  ASSERT_TRUE(last);
  EXPECT_EQ(last->status, "rejected");
  EXPECT_EQ(last->speedupCompile, 1.4);
}

TEST_F(ServerTest, WaitJobCancelledAnswersRequestCancelledAndTheJobRunsOn) {
  initialize(fullCapabilities);
  openDocument();
  std::string jobId = startJob();
  server->handleBody(protocol::serialize(protocol::makeRequest("w", "stitchcuda/waitJob", {{"jobId", jobId}})));
  notify("$/cancelRequest", {{"id", "w"}});
  auto r = out.waitForId("w");
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["error"]["code"], -32800);
  EXPECT_EQ(request("stitchcuda/listJobs", json::object())["result"]["jobs"][0]["state"], "running");

  EXPECT_EQ(request("stitchcuda/cancelJob", {{"jobId", jobId}})["result"]["cancelled"], true);
  auto done = request("stitchcuda/waitJob", {{"jobId", jobId}});
  EXPECT_EQ(done["result"]["state"], "cancelled");
  EXPECT_TRUE(out.waitForMethod("stitchcuda/jobFinished"));
}

TEST_F(ServerTest, ServerCreatedProgressWaitsForTheClient) {
  initialize(fullCapabilities);
  openDocument();
  startJob();
  auto create = out.waitForMethod("window/workDoneProgress/create");
  ASSERT_TRUE(create);
  auto token = (*create)["params"]["token"];
  auto progressFor = [&](const std::string& kind) {
    return [&, kind](const json& m) {
      return m.value("method", "") == "$/progress" && m["params"]["token"] == token && m["params"]["value"]["kind"] == kind;
    };
  };
  EXPECT_FALSE(out.waitFor(progressFor("begin"), std::chrono::milliseconds(100)));
  server->handleBody(protocol::serialize(protocol::makeResponse((*create)["id"], nullptr)));
  EXPECT_TRUE(out.waitFor(progressFor("begin")));
  EXPECT_TRUE(out.waitFor(progressFor("report")));
  gate->release();
  EXPECT_TRUE(out.waitFor(progressFor("end")));
}

TEST_F(ServerTest, OptimizeErrorsAreClear) {
  initialize(json::object());
  EXPECT_EQ(request("stitchcuda/optimize", {{"textDocument", {{"uri", "untitled:1"}}}})["error"]["code"], -32602);
  EXPECT_EQ(request("stitchcuda/optimize", {{"textDocument", {{"uri", "file:///no/such/file.py"}}}})["error"]["code"], -32602);
  openDocument();
  auto r = request("stitchcuda/optimize", {{"textDocument", {{"uri", uri}}}, {"brain", "openai"}});
  EXPECT_EQ(r["error"]["code"], -32803);
  EXPECT_NE(r["error"]["message"].get<std::string>().find("openai"), std::string::npos);
  EXPECT_EQ(request("stitchcuda/optimize", {{"textDocument", {{"uri", uri}}}, {"brain", "gpt"}})["error"]["code"], -32602);
  EXPECT_EQ(request("stitchcuda/cancelJob", {{"jobId", "nope"}})["error"]["code"], -32602);
  EXPECT_EQ(request("stitchcuda/waitJob", {{"jobId", "nope"}})["error"]["code"], -32602);
}

TEST_F(ServerTest, ReopenedLogRestoresLensesAndHovers) {
  initialize(fullCapabilities);
  auto path = config.jobsDir / "recorded" / "log.jsonl";
  std::filesystem::remove(path);
  {
    agents::JobLogWriter w(path);
    for (const auto& e : test::sampleEvents("rec1", uri)) w.append(e);
  }
  auto r = request("stitchcuda/openJobLog", {{"path", path.string()}});
  EXPECT_EQ(r["result"]["jobId"], "rec1");
  EXPECT_TRUE(out.waitForMethod("stitchcuda/plan"));
  EXPECT_TRUE(out.waitForMethod("stitchcuda/profile"));
  auto lenses = request("textDocument/codeLens", {{"textDocument", {{"uri", uri}}}})["result"];
  ASSERT_EQ(lenses.size(), 3u);
  EXPECT_EQ(lenses[0]["command"]["title"], "Accept (1.80×, verified; best of 2)");
  auto jobs = request("stitchcuda/listJobs", json::object())["result"]["jobs"];
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0]["state"], "improved");
  EXPECT_EQ(request("stitchcuda/openJobLog", {{"path", "/no/such/log.jsonl"}})["error"]["code"], -32602);
}

}  // namespace
