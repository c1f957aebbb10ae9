// One event of a job: the payload of a stitchcuda/* notification. The same value is sent
// to the client, appended to the job's JSONL log and applied to the job's state.
#pragma once

#include "protocol/StitchTypes.h"

#include <string>
#include <variant>

namespace stitch::agents {

using JobEvent = std::variant<protocol::PlanParams, protocol::CandidateParams,
                              protocol::ProfileParams, protocol::LogParams,
                              protocol::JobFinishedParams>;

// The notification method that carries the event ("stitchcuda/plan", ...).
std::string methodOf(const JobEvent& event);
protocol::json paramsOf(const JobEvent& event);
const std::string& jobIdOf(const JobEvent& event);
// Parses a notification back into an event; throws protocol::ParamsError.
JobEvent parseEvent(const std::string& method, const protocol::json& params);

}  // namespace stitch::agents
