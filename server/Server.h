// The LSP server logic: lifecycle, documents, the editor features and the stitchcuda/*
// methods, bound to a Dispatcher. Runs on one loop thread; jobs run on the pool. Knows
// nothing of stdio: bodies come in through handleBody, messages leave through Output.
#pragma once

#include "server/Config.h"
#include "server/Dispatcher.h"
#include "server/DocumentStore.h"
#include "server/EditorFeatures.h"
#include "server/JobManager.h"
#include "server/OutgoingRequests.h"
#include "server/ProgramExport.h"
#include "server/Progress.h"

#include <boost/asio/thread_pool.hpp>

#include <functional>
#include <map>
#include <memory>

namespace stitch::server {

class Server {
public:
  // Makes the runner for a job's brain under the final configuration; nullptr when the
  // brain is not available.
  using RunnerFactory = std::function<std::unique_ptr<agents::JobRunner>(const protocol::OptimizeParams&,
                                                                         const HostConfig&)>;

  Server(Output& output, boost::asio::thread_pool& pool, HostConfig config, RunnerFactory factory);
  ~Server();

  void handleBody(std::string_view body) { dispatcher_.handleBody(body); }
  void handleFrameProblem(const std::string& description, bool refusedMessage) {
    dispatcher_.handleFrameProblem(description, refusedMessage);
  }
  // The input ended (the client went away): stop jobs and exit.
  void handleEndOfInput(bool midMessage);
  // Cancels every job and finishes (on the loop thread): for `exit`, the end of input, a termination signal.
  void finish();

  // Set once `exit` arrived or the input ended; the process should then return exitCode().
  bool finished() const { return finished_; }
  int exitCode() const { return shutdownReceived_ ? 0 : 1; }
  // Called (on the loop thread) when the server is finished.
  void setOnFinished(std::function<void()> f) { onFinished_ = std::move(f); }

  // For tests and the benchmark.
  const Dispatcher& dispatcher() const { return dispatcher_; }
  JobManager* jobs() { return jobs_.get(); }

private:
  void bindLifecycle();
  void bindDocuments();
  void bindEditorFeatures();
  void bindJobs();
  void onJobEvent(const agents::JobEvent& event);
  void acceptCandidate(const protocol::CandidateRef& ref, Reply reply);
  void rejectCandidate(const protocol::CandidateRef& ref, Reply reply);
  // After a change of `uri`: the editor's Undo of an Accept reopens its candidate and takes its program
  // back; Redo accepts it and writes the program again.
  void followUndoOfAccept(const std::string& uri);

  Output& output_;
  boost::asio::thread_pool& pool_;
  HostConfig config_;
  RunnerFactory factory_;
  OutgoingRequests outgoing_;
  Dispatcher dispatcher_;
  DocumentStore documents_;
  protocol::ClientCapabilities client_;
  std::unique_ptr<JobManager> jobs_;
  // The last Accept of each document, by URI: what its Undo reverts in the text and takes back on disk.
  struct UndoableAccept {
    AcceptedEdit edit;
    WrittenProgram program;
  };
  std::map<std::string, UndoableAccept> accepts_;
  int progressCounter_ = 0;
  bool shutdownReceived_ = false;
  bool finished_ = false;
  std::function<void()> onFinished_;
};

}  // namespace stitch::server
