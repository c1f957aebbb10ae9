// verify --batch; see VerifyBatch.h.
#include "server/VerifyBatch.h"

#include "server/BatchRows.h"
#include "server/WorkerProcess.h"

#include <filesystem>
#include <fstream>
#include <iostream>

namespace stitch::server {

using protocol::json;

int runVerifyBatch(const HostConfig& config, const VerifyArgs& args) {
  std::ifstream in(args.batch);
  if (!in) {
    std::cerr << "stitchcuda verify: cannot read " << args.batch << "\n";
    return 2;
  }
  RowBatch batch{"verify", "verified", {}, args.out, args.gpus, args.slurm};
  for (std::string line; std::getline(in, line);) batch.rows.push_back(line);
  const VerifyCall defaults = verifyCallOf(args);
  const auto deadline = callDeadline(config.workerDeadline, config.loadTimeoutSeconds);
  // A row's line: its verdict, or the error that kept it from one.
  auto verifyRow = [&](agents::Worker& worker, std::size_t i, const json& row) {
    json line = rowLineHead(i, row);
    try {
      if (!row.is_object()) throw std::invalid_argument("a row is a JSON object");
      for (const char* field : {"reference", "candidate"})
        if (!row.contains(field) || !row[field].is_string()) throw std::invalid_argument(std::string("missing field '") + field + "'");
      const VerifyCall call = verifyCallFrom(
          row, "a verify row takes reference, candidate, id, atol, rtol, trials, seed, allowPrecision, precision, "
               "timing and kernelbench",
          defaults);
      json params = call.params;
      std::error_code ec;
      for (const char* field : {"reference", "candidate"})
        params[field] = std::filesystem::absolute(row[field].get<std::string>(), ec).string();
      params["cacheDir"] = (config.jobsDir / ".verify-cache").string();
      auto verdict = worker.call(call.method(), params, deadline, agents::CancelToken());
      if (verdict.ok()) line.update(*verdict.result);
      else line["error"] = {{"code", verdict.error->code}, {"message", verdict.error->message}};
    } catch (const std::exception& e) {
      line["error"] = {{"code", "invalid_row"}, {"message", e.what()}};
    }
    return line;
  };
  const auto outcome = runRowBatch(config, batch, verifyRow);
  if (args.slurm.element || outcome.status != 0) return outcome.status;
  return outcome.failed ? 1 : 0;
}

}  // namespace stitch::server
