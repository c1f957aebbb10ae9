// A small finished job (plan, two candidates, a reference profile) for the tests of the
// state, the log and the editor features.
#pragma once

#include "agents/JobEvent.h"

#include <vector>

namespace stitch::test {

inline std::vector<agents::JobEvent> sampleEvents(const std::string& jobId = "j1",
                                                  const std::string& uri = "file:///m.py") {
  using namespace protocol;
  PlanTask task{"t1", "fuse gelu + scale", {{10, 0}, {12, 0}}, {"aten::gelu", "aten::mul"},
                "fused elementwise kernel", 35.0, "active"};
  Candidate verified{"c1", "t1", "fused gelu·scale", {{10, 0}, {12, 0}}, "verified", 1.8, 1.2, {},
                     "        return stitch_ops.gelu_scale(x)\n", 3, {}};
  Candidate failed{"c2", "t1", "vectorized variant", {{10, 0}, {12, 0}}, "failed", std::nullopt,
                   std::nullopt, {"numerics", "nan_inf"}, "        return bad(x)\n", 3, {}};
  ProfileParams profile{jobId, uri, "reference", "gpu", 2000.0,
                        {ProfileLine{10, 1500.0, 0.75, "memory", 71.0, std::string("long scoreboard"),
                                     {"vectorized_elementwise_kernel"}, "1.50 ms · 75% · memory-bound"},
                         ProfileLine{11, 500.0, 0.25, "latency", std::nullopt, std::nullopt, {}, ""}}};
  return {
      LogParams{jobId, "info", "BASELINE", "harness: Python 3.12"},
      PlanParams{jobId, uri, {task}, {"aten::nonzero"}, std::nullopt},
      profile,
      CandidateParams{jobId, uri, verified},
      CandidateParams{jobId, uri, failed},
      JobFinishedParams{jobId, "improved", std::string("c1"), 1.8, "1.80× over eager"},
  };
}

}  // namespace stitch::test
