// The batch both `score --batch` and `verify --batch` run; see BatchRows.h.
#include "server/BatchRows.h"

#include "server/ResultFiles.h"
#include "server/RowQueue.h"
#include "server/WorkerProcess.h"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

namespace stitch::server {
namespace {

using protocol::json;

// A row's identity in the output: its line number and the candidate it names, so that a resumed run
// over an edited rows file never takes one row's line for another's.
std::string rowKey(std::size_t row, const std::string& candidate) { return std::to_string(row) + "\t" + candidate; }

json requestedOf(const json& row) {
  return json{{"reference", row.is_object() ? row.value("reference", "") : ""},
              {"candidate", row.is_object() ? row.value("candidate", "") : ""}};
}

// A row's estimated cost for the order of a batch on several GPUs (RowQueue): its candidate's bytes
// of code (a folder's files, or the one file). A row's time is mostly the candidate's build, which
// grows with its code: 17 kB rows took 3 s, 75 kB 6-7 s, 100 kB 11 s on an H200
// (reward_throughput_2026-11-29b_h200). A path that cannot be read costs nothing.
double candidateBytes(const std::string& candidate) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(candidate, ec)) {
    const auto size = fs::file_size(candidate, ec);
    return ec ? 0.0 : static_cast<double>(size);
  }
  double bytes = 0;
  for (const auto& entry : fs::directory_iterator(candidate, ec))
    if (entry.is_regular_file(ec)) bytes += static_cast<double>(entry.file_size(ec));
  return bytes;
}

bool blank(const std::string& line) { return line.find_first_not_of(" \t\r") == std::string::npos; }

// Keeps the lines already done (an error is tried again), rewritten atomically so that a line cut
// short by a stopped run is dropped. Returns the keys kept, or nothing when the file cannot be written.
std::optional<std::set<std::string>> keepDone(const RowBatch& batch) {
  std::set<std::string> done;
  std::string kept;
  std::istringstream previous(readText(batch.out));
  for (std::string line; std::getline(previous, line);) {
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || j.contains("error") || !j["row"].is_number_integer()) continue;
    done.insert(rowKey(j["row"].get<std::size_t>(), j.value("requested", json::object()).value("candidate", "")));
    kept += line + "\n";
  }
  if (auto error = writeAtomically(batch.out, kept)) {
    std::cerr << "stitchcuda " << batch.command << ": " << *error << "\n";
    return std::nullopt;
  }
  return done;
}

}  // namespace

json rowLineHead(std::size_t row, const json& parsed) {
  json line{{"row", row}};
  if (parsed.is_object() && parsed.contains("id")) line["id"] = parsed["id"];
  line["requested"] = requestedOf(parsed);
  return line;
}

std::unique_ptr<agents::Worker> batchWorker(const HostConfig& config, std::optional<int> gpu, int workers) {
  return std::make_unique<WorkerProcess>(
      WorkerSettings{config.python, config.harnessDir, {}, gpu, config.loadTimeoutSeconds, cpuShare(workers)}, [](const json& event) {
        if (event.value("event", "") == "log")  // verifyStage events are for deadlines
          std::cerr << "harness: " << event.value("message", "") << "\n";
      });
}

RowBatchOutcome runRowBatch(const HostConfig& config, const RowBatch& batch, const RowWork& work) {
  const auto& rows = batch.rows;
  auto parsed = [&](std::size_t i) { return json::parse(rows[i], nullptr, false); };
  // Each row's key, reference and candidate (the workers' order on several GPUs, RowQueue.h): one parse each.
  std::vector<std::string> keys, references, candidates;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const json requested = requestedOf(parsed(i));
    keys.push_back(rowKey(i, requested["candidate"]));
    references.push_back(requested["reference"]);
    candidates.push_back(requested["candidate"]);
  }
  if (batch.slurm.element)  // one row of a Slurm array, on its node
    return {runSlurmElement(batch.slurm, keys, [&](std::size_t i) -> std::optional<json> {
      return work(*batchWorker(config, std::nullopt), i, parsed(i));
    })};

  RowBatchOutcome outcome;
  auto done = keepDone(batch);
  if (!done) return {2};
  outcome.kept = done->size();
  std::ofstream out(batch.out, std::ios::app);
  std::mutex outMutex;
  std::atomic<int> finished{0}, failed{0};
  auto record = [&](const json& line) {
    ++(line.contains("error") ? failed : finished);
    std::lock_guard lock(outMutex);
    out << line.dump() << "\n" << std::flush;
  };
  if (batch.slurm.enabled) {
    // Each row's line once: a row already in the output (an earlier submitter merged it) is not added again.
    SlurmArrayRun array{batch.out + ".slurm", keys, {}, true, true, true};
    for (std::size_t i = 0; i < rows.size(); ++i) array.wanted.push_back(!blank(rows[i]) && !done->count(keys[i]));
    const int status = runSlurmArray(
        batch.slurm, array,
        [&](const json& element) {
          const std::size_t i = element.value("index", std::size_t{0});
          if (i >= keys.size() || !done->insert(keys[i]).second) return;
          json line = element["result"];
          line["slurm"] = element["slurm"];
          record(line);
        },
        [&](std::size_t i, const std::string& why) {
          json line = rowLineHead(i, parsed(i));
          line["error"] = {{"code", "slurm_lost"}, {"message", why}};
          record(line);
        });
    if (status != 0) return {2};
  } else {
    // One worker takes the rows in file order; several keep to a reference each, the costliest
    // references first (RowQueue.h).
    std::vector<bool> take;
    std::vector<double> costs;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      take.push_back(!blank(rows[i]) && !done->count(keys[i]));
      costs.push_back(batch.gpus > 1 && take.back() ? candidateBytes(candidates[i]) : 0.0);
    }
    RowQueue queue(batch.gpus > 1 ? references : std::vector<std::string>(rows.size()), take, costs);
    // Each line says where the row ran and how long it took (the worker's start in its first row's
    // time), so that a batch's GPUs can be seen busy or idle from its output alone.
    auto local = [&](std::optional<int> gpu) {
      auto worker = batchWorker(config, gpu, batch.gpus);
      std::optional<std::string> reference;
      while (auto i = queue.next(reference)) {
        const auto start = std::chrono::steady_clock::now();
        json line = work(*worker, *i, parsed(*i));
        line["worker"] = {{"gpu", gpu ? json(*gpu) : json(nullptr)},
                          {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()}};
        record(line);
      }
    };
    std::vector<std::thread> threads;
    for (int g = 0; g < batch.gpus; ++g) threads.emplace_back(local, batch.gpus > 1 ? std::optional<int>(g) : std::nullopt);
    for (auto& t : threads) t.join();
  }
  outcome.done = finished;
  outcome.failed = failed;
  std::cerr << "stitchcuda " << batch.command << ": " << outcome.done << " " << batch.doneWord << ", " << outcome.kept << " already in "
            << batch.out << ", " << outcome.failed << " failed\n";
  return outcome;
}

}  // namespace stitch::server
