// Handlers of the LSP server; see Server.h.
#include "server/Server.h"
#include "server/ScoreMethod.h"

#include "server/EditorFeatures.h"
#include "server/Logger.h"
#include "server/Uri.h"

#include "agents/UntrustedFiles.h"
#include "agents/program/ProgramFiles.h"

namespace stitch::server {
namespace {

using protocol::ErrorCode;

constexpr const char* kVersion = "0.1.0";

// A reply that two racing paths may try to send (a job finishing vs. the request being
// cancelled): the first wins, the second is a deliberate no-op.
class SharedReply {
public:
  explicit SharedReply(Reply reply) : reply_(std::move(reply)) {}
  template <typename F>
  void once(F&& f) {
    std::lock_guard lock(mutex_);
    if (done_) return;
    done_ = true;
    f(reply_);
  }

private:
  std::mutex mutex_;
  bool done_ = false;
  Reply reply_;
};

// A candidate's program as its files name it, each checked before anything is read or written: its
// source a regular file inside the job's own folder, its path inside the model's folder. The
// candidate may come from a log anyone wrote. Throws naming the file.
std::vector<agents::program::ProgramFile> readProgram(const protocol::Candidate& c, const std::filesystem::path& jobFolder,
                                                      const std::filesystem::path& modelFolder) {
  std::vector<agents::program::ProgramFile> texts;
  for (const auto& f : c.files) {
    (void)agents::placeInside(modelFolder, f.path);
    const auto source = agents::existingInside(jobFolder, f.source);
    texts.push_back({f.path, agents::readRegularFile(source, agents::kMaxProgramFileBytes, "the program file")});
  }
  return texts;
}

}  // namespace

Server::Server(Output& output, boost::asio::thread_pool& pool, HostConfig config, RunnerFactory factory)
    : output_(output),
      pool_(pool),
      config_(std::move(config)),
      factory_(std::move(factory)),
      outgoing_(output),
      dispatcher_(output, outgoing_) {
  bindLifecycle();
  bindDocuments();
  bindEditorFeatures();
  bindJobs();
}

Server::~Server() {
  if (jobs_) jobs_->cancelAll();
}

void Server::finish() {
  if (finished_) return;
  finished_ = true;
  if (jobs_) jobs_->cancelAll();
  if (onFinished_) onFinished_();
}

void Server::handleEndOfInput(bool midMessage) {
  if (midMessage) logWarning("input ended in the middle of a message");
  if (!shutdownReceived_) logInfo("input ended before shutdown; exiting");
  finish();
}

void Server::bindLifecycle() {
  dispatcher_.request<protocol::InitializeParams>(
      "initialize", [this](protocol::InitializeParams params, Reply reply, CancelToken) {
        try {
          config_.apply(params.initializationOptions);
        } catch (const std::exception& e) {
          reply.error(ErrorCode::InvalidParams, std::string("initializationOptions: ") + e.what());
          return;
        }
        client_ = params.capabilities;
        documents_.setEncoding(client_.utf8Positions ? PositionEncoding::Utf8 : PositionEncoding::Utf16);
        jobs_ = std::make_unique<JobManager>(
            pool_, config_.jobsDir,
            [this](const protocol::OptimizeParams& p) { return factory_(p, config_); },
            [this](const agents::JobEvent& e) { onJobEvent(e); });
        dispatcher_.setLifecycle(Dispatcher::Lifecycle::Running);
        logInfo("initialized; jobs in " + config_.jobsDir.string());
        reply(json{
            {"capabilities",
             {{"positionEncoding", client_.utf8Positions ? "utf-8" : "utf-16"},
              {"textDocumentSync", {{"openClose", true}, {"change", 2}}},
              {"hoverProvider", true},
              {"codeLensProvider", {{"resolveProvider", false}}},
              {"codeActionProvider", {{"codeActionKinds", {"refactor.rewrite"}}}},
              {"executeCommandProvider", {{"commands", {kAcceptCommand, kRejectCommand}}}},
              {"experimental",
               {{"stitchcuda",
                 {{"protocolVersion", 1},
                  {"methods", {"stitchcuda/optimize", "stitchcuda/cancelJob", "stitchcuda/listJobs",
                               "stitchcuda/waitJob", "stitchcuda/openJobLog", "stitchcuda/score"}}}}}}}},
            {"serverInfo", {{"name", "stitchcuda"}, {"version", kVersion}}}});
      });
  dispatcher_.addNotification("initialized", [](const json&) {});
  dispatcher_.addRequest("shutdown", [this](const json&, Reply reply, CancelToken) {
    shutdownReceived_ = true;
    if (jobs_) jobs_->cancelAll();  // runners notice between steps; their logs stay
    dispatcher_.setLifecycle(Dispatcher::Lifecycle::ShutDown);
    reply(nullptr);
  });
  dispatcher_.addNotification("exit", [this](const json&) { finish(); });
  // Accepted and ignored: the host has no per-client settings beyond initializationOptions.
  dispatcher_.addNotification("workspace/didChangeConfiguration", [](const json&) {});
}

void Server::bindDocuments() {
  dispatcher_.notification<protocol::DidOpenParams>(
      "textDocument/didOpen", [this](protocol::DidOpenParams p) { documents_.open(p.textDocument); });
  dispatcher_.notification<protocol::DidChangeParams>("textDocument/didChange",
                                                      [this](protocol::DidChangeParams p) {
                                                        try {
                                                          documents_.change(p);
                                                        } catch (const std::exception& e) {
                                                          logError(e.what());
                                                        }
                                                        followUndoOfAccept(p.uri);
                                                      });
  dispatcher_.notification<protocol::DidCloseParams>(
      "textDocument/didClose", [this](protocol::DidCloseParams p) { documents_.close(p.textDocument.uri); });
  dispatcher_.addNotification("textDocument/didSave", [](const json&) {});
}

void Server::bindEditorFeatures() {
  dispatcher_.request<protocol::TextDocumentPositionParams>(
      "textDocument/hover", [this](protocol::TextDocumentPositionParams p, Reply reply, CancelToken) {
        const auto doc = documents_.get(p.textDocument.uri);
        auto markdown = jobs_->readLatestFor(p.textDocument.uri, [&](const agents::JobState* job) {
          return job ? hoverMarkdown(*job, p.position.line, doc ? doc->text : std::string()) : std::nullopt;
        });
        if (!markdown) return reply(nullptr);
        reply(json{{"contents", {{"kind", "markdown"}, {"value", *markdown}}}});
      });
  dispatcher_.request<protocol::CodeLensParams>(
      "textDocument/codeLens", [this](protocol::CodeLensParams p, Reply reply, CancelToken) {
        reply(jobs_->readLatestFor(p.textDocument.uri,
                                   [](const agents::JobState* job) { return job ? codeLenses(*job) : json::array(); }));
      });
  dispatcher_.request<protocol::CodeActionParams>(
      "textDocument/codeAction", [this](protocol::CodeActionParams p, Reply reply, CancelToken) {
        reply(jobs_->readLatestFor(p.textDocument.uri, [&](const agents::JobState* job) {
          return job ? codeActions(*job, p.range) : json::array();
        }));
      });
  dispatcher_.request<protocol::ExecuteCommandParams>(
      "workspace/executeCommand", [this](protocol::ExecuteCommandParams p, Reply reply, CancelToken) {
        if (p.command != kAcceptCommand && p.command != kRejectCommand)
          return reply.error(ErrorCode::InvalidParams, "unknown command " + p.command);
        protocol::CandidateRef ref;
        try {
          if (p.arguments.empty()) throw protocol::ParamsError("expected one argument {jobId, candidateId}");
          ref = p.arguments.at(0).get<protocol::CandidateRef>();
        } catch (const std::exception& e) {
          return reply.error(ErrorCode::InvalidParams, p.command + ": " + e.what());
        }
        if (p.command == kAcceptCommand) acceptCandidate(ref, std::move(reply));
        else rejectCandidate(ref, std::move(reply));
      });
}

void Server::acceptCandidate(const protocol::CandidateRef& ref, Reply reply) {
  auto job = jobs_->state(ref.jobId);
  const protocol::Candidate* c = job ? job->candidate(ref.candidateId) : nullptr;
  if (!c) return reply.error(ErrorCode::InvalidParams, "no candidate " + ref.candidateId + " in job " + ref.jobId);
  if (!isOpen(*c)) return reply.error(ErrorCode::RequestFailed, "candidate " + c->id + " was already " + c->status);
  if (!client_.applyEdit)
    return reply.error(ErrorCode::RequestFailed, "this client cannot apply workspace edits");
  if (auto doc = documents_.get(job->uri); doc && doc->version != c->documentVersion)
    return reply.error(ErrorCode::ContentModified,
                       "the document changed since the candidate was made (version " +
                           std::to_string(c->documentVersion) + ", now " + std::to_string(doc->version) +
                           "); optimize again or use Diff");
  // The program the edit imports goes beside the model, written here first, not created by the edit: VS
  // Code's Undo of an edit that creates files left some of them behind. The host takes the program back
  // when the editor undoes the edit (followUndoOfAccept).
  WrittenProgram program;
  if (!c->files.empty()) {
    const auto model = uriToPath(job->uri);
    if (!model) return reply.error(ErrorCode::RequestFailed, "save " + job->uri + " to a file first: its program is written beside it");
    const std::filesystem::path folder = std::filesystem::path(*model).parent_path();
    std::vector<agents::program::ProgramFile> texts;
    try {
      texts = readProgram(*c, std::filesystem::path(job->logPath).parent_path(), folder);
    } catch (const std::exception& e) {
      return reply.error(ErrorCode::RequestFailed, "candidate " + c->id + "'s program cannot be used (" + e.what() +
                                                       "); optimize again");
    }
    std::string error;
    auto written = writeAcceptedProgram(folder, texts, error);
    if (!written) return reply.error(ErrorCode::RequestFailed, error);
    program = std::move(*written);
  }
  protocol::CandidateParams accepted{job->jobId, job->uri, *c};
  accepted.candidate.status = "accepted";
  std::optional<UndoableAccept> undoable;
  if (auto doc = documents_.get(job->uri))
    undoable = {{job->jobId, c->id, c->status, doc->text, applyLineEdit(doc->text, c->range, c->newText)}, program};
  auto shared = std::make_shared<Reply>(std::move(reply));
  outgoing_.send("workspace/applyEdit",
                 json{{"label", "StitchCUDA: " + c->title}, {"edit", candidateEdit(job->uri, *c, client_.documentChanges)}},
                 [this, shared, accepted, undoable, program](std::optional<json> result, std::optional<protocol::RpcError> error) {
                   bool applied = !error && result && result->value("applied", false);
                   if (!applied) takeBackProgram(program, [](const auto&) { return false; });
                   if (error) return shared->error(ErrorCode::RequestFailed, "the client refused the edit: " + error->message);
                   if (!applied) {
                     std::string why = result ? result->value("failureReason", "no reason given") : "no answer";
                     return shared->error(ErrorCode::RequestFailed, "the edit was not applied: " + why);
                   }
                   jobs_->record(accepted);
                   if (undoable) accepts_[accepted.uri] = *undoable;
                   if (client_.codeLensRefresh) outgoing_.send("workspace/codeLens/refresh", nullptr, [](auto, auto) {});
                   (*shared)(json{{"applied", true}});
                 });
}

void Server::followUndoOfAccept(const std::string& uri) {
  auto it = accepts_.find(uri);
  auto doc = documents_.get(uri);
  auto job = it != accepts_.end() && doc ? jobs_->state(it->second.edit.jobId) : std::nullopt;
  auto event = job ? undoOrRedoOfAccept(it->second.edit, *job, doc->text, doc->version) : std::nullopt;
  if (!event) return;
  std::string error;
  if (event->candidate.status == "accepted") {
    if (!rewriteProgram(it->second.program, error)) logError("writing the program again: " + error);
  } else {
    // A file another document's accepted program also wrote (the shared loader) stays.
    takeBackProgram(it->second.program, [&](const std::filesystem::path& path) {
      for (const auto& [other, accept] : accepts_) {
        if (other == uri) continue;
        auto otherJob = jobs_->state(accept.edit.jobId);
        const auto* c = otherJob ? otherJob->candidate(accept.edit.candidateId) : nullptr;
        if (!c || c->status != "accepted") continue;
        for (const auto& f : accept.program.files)
          if (accept.program.folder / f.path == path) return true;
      }
      return false;
    });
  }
  jobs_->record(*event);
  if (client_.codeLensRefresh) outgoing_.send("workspace/codeLens/refresh", nullptr, [](auto, auto) {});
}

void Server::rejectCandidate(const protocol::CandidateRef& ref, Reply reply) {
  auto job = jobs_->state(ref.jobId);
  const protocol::Candidate* c = job ? job->candidate(ref.candidateId) : nullptr;
  if (!c) return reply.error(ErrorCode::InvalidParams, "no candidate " + ref.candidateId + " in job " + ref.jobId);
  protocol::CandidateParams rejected{job->jobId, job->uri, *c};
  rejected.candidate.status = "rejected";
  jobs_->record(rejected);
  if (client_.codeLensRefresh) outgoing_.send("workspace/codeLens/refresh", nullptr, [](auto, auto) {});
  reply(nullptr);
}

void Server::bindJobs() {
  bindScoreMethod(dispatcher_, pool_, config_, jobs_);
  dispatcher_.request<protocol::OptimizeParams>(
      "stitchcuda/optimize", [this](protocol::OptimizeParams p, Reply reply, CancelToken) {
        JobManager::StartRequest request;
        request.uri = p.textDocument.uri;
        auto path = uriToPath(p.textDocument.uri);
        if (auto doc = documents_.get(p.textDocument.uri)) {
          request.text = doc->text;
          request.documentVersion = doc->version;
        } else if (path) {
          try {
            request.text = agents::readRegularFile(*path, agents::kMaxModelFileBytes, "the model file");
          } catch (const std::exception& e) {
            return reply.error(ErrorCode::InvalidParams, std::string("the document is not open and ") + e.what());
          }
        } else {
          return reply.error(ErrorCode::InvalidParams, "the document is not open: " + p.textDocument.uri);
        }
        request.fileName = path ? std::filesystem::path(*path).filename().string() : "task.py";
        // Progress begins before the job so that its end, sent when the job finishes on the
        // pool, can never overtake its begin.
        auto progress = Progress::start(output_, outgoing_, p.workDoneToken, client_.workDoneProgress,
                                        "stitchcuda/progress/" + std::to_string(++progressCounter_),
                                        "StitchCUDA: optimizing " + request.fileName);
        request.options = std::move(p);
        if (progress) {
          request.progress = [progress](const std::string& m, std::optional<int> pct) { progress->report(m, pct); };
          request.onFinished = [progress](const protocol::JobFinishedParams& f) {
            progress->end(f.state + (f.message.empty() ? "" : ": " + f.message));
          };
        }
        std::string id;
        try {
          id = jobs_->start(std::move(request));
        } catch (const std::exception& e) {
          if (progress) progress->end(std::string("failed: ") + e.what());
          return reply.error(ErrorCode::RequestFailed, e.what());
        }
        reply(json{{"jobId", id}});
      });
  dispatcher_.request<protocol::JobRef>(
      "stitchcuda/cancelJob", [this](protocol::JobRef p, Reply reply, CancelToken) {
        if (!jobs_->state(p.jobId)) return reply.error(ErrorCode::InvalidParams, "no job " + p.jobId);
        reply(json{{"cancelled", jobs_->cancel(p.jobId)}});
      });
  dispatcher_.addRequest("stitchcuda/listJobs", [this](const json&, Reply reply, CancelToken) {
    reply(json{{"jobs", jobs_->list()}});
  });
  dispatcher_.request<protocol::JobRef>(
      "stitchcuda/waitJob", [this](protocol::JobRef p, Reply reply, CancelToken cancel) {
        auto shared = std::make_shared<SharedReply>(std::move(reply));
        bool known = jobs_->whenFinished(
            p.jobId, [shared](const protocol::JobFinishedParams& f) { shared->once([&](Reply& r) { r(json(f)); }); },
            cancel);
        if (!known)
          return shared->once([&](Reply& r) { r.error(ErrorCode::InvalidParams, "no job " + p.jobId); });
        cancel.onCancel([shared] {
          shared->once([](Reply& r) { r.error(ErrorCode::RequestCancelled, "waitJob cancelled"); });
        });
      });
  dispatcher_.request<protocol::OpenJobLogParams>(
      "stitchcuda/openJobLog", [this](protocol::OpenJobLogParams p, Reply reply, CancelToken) {
        try {
          reply(json{{"jobId", jobs_->reopen(p.path)}});
        } catch (const std::exception& e) {
          reply.error(ErrorCode::InvalidParams, e.what());
        }
      });
}

void Server::onJobEvent(const agents::JobEvent& event) {
  output_.send(protocol::makeNotification(agents::methodOf(event), agents::paramsOf(event)));
}

}  // namespace stitch::server
