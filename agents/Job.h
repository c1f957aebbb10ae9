// The contract between the job manager (server/) and what a job does (agents/): a runner
// gets the request and a context through which it streams events, reports progress and
// learns of cancellation; it returns how the job ended.
#pragma once

#include "agents/Cancellation.h"
#include "agents/JobEvent.h"

#include <filesystem>
#include <optional>
#include <string>

namespace stitch::agents {

struct JobRequest {
  std::string jobId;
  std::string uri;
  std::filesystem::path taskFile;  // a snapshot of the document as the job saw it
  std::filesystem::path jobDir;    // where the job may write (candidates, caches, reports)
  int documentVersion = 0;
  protocol::OptimizeParams options;
  // The user's own path of the file (empty when the document has none): messages name it, not the
  // snapshot, which the user never sees.
  std::string userFile;
};

class JobContext {
public:
  virtual ~JobContext() = default;
  // Streams the event to the client, appends it to the log and applies it to the state.
  virtual void emit(JobEvent event) = 0;
  // Progress text (and percentage when known) for the client's progress UI.
  virtual void progress(const std::string& message, std::optional<int> percentage) = 0;
  virtual const CancelToken& cancelToken() const = 0;
};

class JobRunner {
public:
  virtual ~JobRunner() = default;
  // Runs on the worker pool. Must not throw: failures end the job with state "failed".
  virtual protocol::JobFinishedParams run(const JobRequest& request, JobContext& context) = 0;
};

}  // namespace stitch::agents
