// The stitchcuda/score request (protocol/PROTOCOL.md, SCORE.md): the rubric reward of a job's
// candidate ({jobId, candidateId}: the job's task snapshot, the candidate's folder, the verdict the
// loop recorded there and the plan's coverage) or of any candidate (the fields of a batch row). It
// runs on the pool with its own harness worker, so the loop thread never waits for it.
#pragma once

#include "server/Config.h"
#include "server/Dispatcher.h"
#include "server/JobManager.h"

#include <boost/asio/thread_pool.hpp>

namespace stitch::server {

void bindScoreMethod(Dispatcher& dispatcher, boost::asio::thread_pool& pool, const HostConfig& config,
                     const std::unique_ptr<JobManager>& jobs);

// A job's candidate as score inputs; throws std::invalid_argument when the job or candidate is unknown.
protocol::json candidateScoreRequest(const agents::JobState& job, const std::string& candidateId);

}  // namespace stitch::server
