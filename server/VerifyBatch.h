// `stitchcuda verify --batch ROWS.jsonl --out VERDICTS.jsonl [--gpus N | --slurm ...]`: many candidates,
// one verdict line each, resumable, as `score --batch` does for rewards (BatchRows.h). A row is a
// reference, a candidate, an optional id and verify's options by their JSON names (VerifyRequest.h),
// over the command line's.
#pragma once

#include "server/HeadlessVerify.h"

namespace stitch::server {

int runVerifyBatch(const HostConfig& config, const VerifyArgs& args);

}  // namespace stitch::server
