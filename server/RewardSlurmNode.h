// The node's side of serve-reward --slurm (protocol/REWARD_SERVICE.md): a worker job runs this binary's
// serve-reward again with `--slurm-plan PLAN --slurm-element SEAT`; it starts its harness worker on the
// job's GPU, connects back to the service (service.json beside the plan) and answers the requests the
// service sends it, one at a time, with the code a local slot runs (RewardRequest), until the service
// closes the connection.
#pragma once

#include "server/Config.h"
#include "server/RewardRequest.h"
#include "server/SlurmArray.h"

namespace stitch::server {

// Returns 0 when the service closed the connection, 1 when it could not start or connect.
int runRewardSlurmNode(const HostConfig& config, const RewardSettings& settings, const SlurmOptions& slurm);

}  // namespace stitch::server
