// The reward service's request bodies; see RewardRequest.h.
#include "server/RewardRequest.h"

#include "server/Scoring.h"
#include "server/VerifyRequest.h"

#include <atomic>
#include <fstream>
#include <stdexcept>

namespace stitch::server {
namespace {

using protocol::json;
namespace fs = std::filesystem;

// A path a request names, resolved (symlinks too) and required to lie under the root: a client may
// name the tasks and candidates the service was given, not any file of the machine.
std::string confined(const json& value, const std::string& field, const fs::path& root) {
  if (!value.is_string() || value.get<std::string>().empty())
    throw std::invalid_argument("'" + field + "' must be a path (a string) under the service's root");
  const std::string text = value.get<std::string>();
  const fs::path given(text);
  std::error_code ec;
  const fs::path resolved = fs::canonical(given.is_absolute() ? given : root / given, ec);
  if (ec) throw std::invalid_argument(field + ": no file or folder " + text + " under the service's root");
  const fs::path relative = resolved.lexically_relative(root);
  if (relative.empty() || *relative.begin() == "..")
    throw std::invalid_argument(field + ": " + text + " lies outside the service's root " + root.string());
  return resolved.string();
}

std::optional<std::string> text(const json& body, const char* field) {
  if (!body.contains(field) || body[field].is_null()) return std::nullopt;
  if (!body[field].is_string()) throw std::invalid_argument(std::string("'") + field + "' must be a string");
  return body[field].get<std::string>();
}

// The task and the candidate given as text: written to files just before the worker reads them.
struct InlineFiles {
  std::optional<std::string> reference, candidate, cuda;
  bool any() const { return reference || candidate; }
};

constexpr const char* kPlaceholder = "(inline)";

// Takes the reference and the candidate out of `body`: a path (confined to the root) or the
// source text, exactly one of each; the text fields are removed and their paths left as placeholders.
InlineFiles takeFiles(json& body, const RewardSettings& settings) {
  InlineFiles files;
  files.reference = text(body, "referenceSource");
  files.candidate = text(body, "candidateSource");
  files.cuda = text(body, "candidateCuda");
  for (const auto& [path, source] : {std::pair{"reference", &files.reference}, {"candidate", &files.candidate}}) {
    const bool hasPath = body.contains(path) && !body[path].is_null();
    const std::string sourceField = std::string(path) + "Source";
    if (hasPath && *source)
      throw std::invalid_argument(std::string("give '") + path + "' (a path) or '" + sourceField + "' (its text), not both");
    if (!hasPath && !*source)
      throw std::invalid_argument(std::string("missing field '") + path + "' (a path under the service's root) or '" +
                                  sourceField + "' (the file's text)");
    body[path] = hasPath ? confined(body[path], path, settings.root) : kPlaceholder;
  }
  if (files.cuda && !files.candidate)
    throw std::invalid_argument("'candidateCuda' is the .cu beside an inline 'candidateSource'; give both");
  for (const char* field : {"referenceSource", "candidateSource", "candidateCuda"}) body.erase(field);
  return files;
}

// A request's own folder for its inline files, removed with everything in it when the request is done.
class ScratchFolder {
public:
  explicit ScratchFolder(const fs::path& base) {
    static std::atomic<std::uint64_t> next{0};
    path_ = base / ("r" + std::to_string(++next));
    fs::create_directories(path_);
  }
  ~ScratchFolder() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;

  std::string write(const std::string& name, const std::string& content) const {
    const fs::path file = path_ / name;
    std::ofstream out(file, std::ios::binary);
    out << content;
    if (!out.flush()) throw std::runtime_error("cannot write " + file.string());
    return file.string();
  }

private:
  fs::path path_;
};

// Writes the inline files and points `body` at them. A fast-path pair is model_new.py beside
// model_new.cu, as the harness finds a candidate's .cu (protocol/HARNESS.md, Candidates).
void materialize(const ScratchFolder& folder, const InlineFiles& files, json& body) {
  if (files.reference) body["reference"] = folder.write("reference.py", *files.reference);
  if (files.candidate) body["candidate"] = folder.write("model_new.py", *files.candidate);
  if (files.cuda) folder.write("model_new.cu", *files.cuda);
}

void requireObject(const json& body, const char* what) {
  if (!body.is_object()) throw std::invalid_argument(std::string("the body must be a JSON object: ") + what);
}

}  // namespace

RewardFailure failureOf(const agents::WorkerError& error) {
  RewardFailure f{422, error.code, error.message};
  if (error.code == "cancelled")
    f = {503, "shutting_down", "the reward service stopped before this request finished; send it again"};
  else if (error.code == "worker_start_failed")
    f.status = 503;
  if (error.file) f.detail["file"] = *error.file;
  if (error.line) f.detail["line"] = *error.line;
  return f;
}

RewardWork scoreWork(const json& body, const RewardSettings& settings) {
  requireObject(body, "a `score --batch` row (protocol/REWARD_SERVICE.md)");
  json row = body;
  const InlineFiles files = takeFiles(row, settings);
  for (const char* field : {"previous", "profile"})
    if (row.contains(field) && !row[field].is_null()) row[field] = confined(row[field], field, settings.root);
  for (const char* field : {"verdict", "previousVerdict", "feedback", "plan", "coverage"})  // an object, or its file
    if (row.contains(field) && row[field].is_string()) row[field] = confined(row[field], field, settings.root);
  scoreInputsFrom(row);  // every other field is checked now: a bad one is the client's 400, not a failed run
  return [row, files, settings](agents::Worker& worker, const agents::CancelToken& cancel) -> RewardOutcome {
    json request = row;
    std::optional<ScratchFolder> folder;
    if (files.any()) materialize(folder.emplace(settings.scratch), files, request);
    auto scored = scoreCandidate(worker, scoreInputsFrom(request), settings.cacheDir, settings.deadline, cancel);
    if (!scored.ok()) return failureOf(scored.error());
    json out = std::move(scored).value();
    if (row.contains("id")) out["id"] = row["id"];
    return out;
  };
}

RewardWork verifyWork(const json& body, const RewardSettings& settings) {
  requireObject(body, "verify's options (protocol/REWARD_SERVICE.md)");
  json request = body;
  const InlineFiles files = takeFiles(request, settings);
  const VerifyCall verify = verifyCallFrom(
      request, "a verify body takes reference or referenceSource, candidate or candidateSource (with candidateCuda), "
               "atol, rtol, trials, seed, allowPrecision, precision, timing, kernelbench and id");
  const json id = request.value("id", json());
  return [request, verify, files, id, settings](agents::Worker& worker, const agents::CancelToken& cancel) -> RewardOutcome {
    json paths = request;
    std::optional<ScratchFolder> folder;
    if (files.any()) materialize(folder.emplace(settings.scratch), files, paths);
    json call = verify.params;
    call["reference"] = paths["reference"];
    call["candidate"] = paths["candidate"];
    call["cacheDir"] = settings.cacheDir.string();
    auto verdict = worker.call(verify.method(), call, settings.deadline, cancel);
    if (!verdict.ok()) return failureOf(*verdict.error);
    json out = std::move(*verdict.result);
    if (!id.is_null()) out["id"] = id;
    return out;
  };
}

}  // namespace stitch::server
