// Mapping between job events and their stitchcuda/* notifications.
#include "agents/JobEvent.h"

namespace stitch::agents {

std::string methodOf(const JobEvent& event) {
  struct {
    std::string operator()(const protocol::PlanParams&) const { return "stitchcuda/plan"; }
    std::string operator()(const protocol::CandidateParams&) const { return "stitchcuda/candidate"; }
    std::string operator()(const protocol::ProfileParams&) const { return "stitchcuda/profile"; }
    std::string operator()(const protocol::LogParams&) const { return "stitchcuda/log"; }
    std::string operator()(const protocol::JobFinishedParams&) const { return "stitchcuda/jobFinished"; }
  } visitor;
  return std::visit(visitor, event);
}

protocol::json paramsOf(const JobEvent& event) {
  return std::visit([](const auto& e) { return protocol::json(e); }, event);
}

const std::string& jobIdOf(const JobEvent& event) {
  return std::visit([](const auto& e) -> const std::string& { return e.jobId; }, event);
}

JobEvent parseEvent(const std::string& method, const protocol::json& params) {
  if (method == "stitchcuda/plan") return params.get<protocol::PlanParams>();
  if (method == "stitchcuda/candidate") return params.get<protocol::CandidateParams>();
  if (method == "stitchcuda/profile") return params.get<protocol::ProfileParams>();
  if (method == "stitchcuda/log") return params.get<protocol::LogParams>();
  if (method == "stitchcuda/jobFinished") return params.get<protocol::JobFinishedParams>();
  throw protocol::ParamsError("not a job event: " + method);
}

}  // namespace stitch::agents
