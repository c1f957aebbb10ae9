// `stitchcuda serve-reward` in a build configured without cpp-httplib (the GPU machine has none
// unless it is carried there): the command exists and says how to get it.
#include "server/RewardCommand.h"

#include <iostream>

namespace stitch::server {

int runServeReward(const HostConfig&, const RewardArgs&) {
  std::cerr << "stitchcuda serve-reward: this build has no reward service: cpp-httplib was not found when it was "
               "configured (Debian: libcpp-httplib-dev; or PKG_CONFIG_PATH pointing at a cpp-httplib.pc)\n";
  return 2;
}

}  // namespace stitch::server
