// A resumable batch of JSON rows, each turned into one output line by a harness worker: what
// `score --batch` and `verify --batch` share. Locally one worker per GPU takes rows in turn; with
// --slurm the rows are one job array (SlurmArray.h), each element this binary re-run for its row.
// The output file holds one line per row, {"row": N, "id"?, "requested": {reference, candidate}, ...};
// a second run keeps the lines without an error and does the other rows only.
#pragma once

#include "agents/Worker.h"
#include "server/Config.h"
#include "server/SlurmArray.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace stitch::server {

struct RowBatch {
  std::string command;            // "score", "verify": how messages start
  std::string doneWord = "done";  // what the summary calls a row with a result ("scored", "verified")
  std::vector<std::string> rows;  // the rows file's lines (a blank one is skipped, its number kept)
  std::string out;                // JSON lines, one per row
  int gpus = 1;
  SlurmOptions slurm;
};

// The part of a row's output line that does not depend on the work: row, id, requested.
protocol::json rowLineHead(std::size_t row, const protocol::json& parsed);

// Turns row `i` (parsed; discarded when it is not JSON) into its output line (rowLineHead's fields
// plus the result, or "error": {code, message}). Never throws.
using RowWork = std::function<protocol::json(agents::Worker& worker, std::size_t i, const protocol::json& row)>;

struct RowBatchOutcome {
  int status = 0;  // 2: the output could not be written or Slurm refused the array; else 0
  int done = 0, failed = 0;
  std::size_t kept = 0;  // lines an earlier run had written
};

// Runs every row not already in batch.out (or, in a Slurm element, its one row and exits). Prints
// "COMMAND: N <doneWord>, K already in OUT, F failed" on stderr.
RowBatchOutcome runRowBatch(const HostConfig& config, const RowBatch& batch, const RowWork& work);

// A harness worker for batch work: on GPU `gpu` alone, or on what the environment shows; one of
// `workers` on this host (its share of the cores, cpuShare).
std::unique_ptr<agents::Worker> batchWorker(const HostConfig& config, std::optional<int> gpu, int workers = 1);

}  // namespace stitch::server
