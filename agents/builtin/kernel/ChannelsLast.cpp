// Channels-last strides; see ChannelsLast.h.
#include "agents/builtin/kernel/ChannelsLast.h"

namespace stitch::agents::builtin {

std::vector<int64_t> channelsLastStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  if (shape.size() < 3) return s;
  int64_t step = shape[1];  // channels innermost, then the spatial dims from the last, then the batch
  for (std::size_t d = shape.size(); d-- > 2;) {
    s[d] = step;
    step *= shape[d];
  }
  s[0] = step;
  return s;
}

bool isChannelsLast(const TensorInfo& t) {
  if (t.shape.size() != 4 && t.shape.size() != 5) return false;
  const auto want = channelsLastStrides(t.shape);
  for (std::size_t d = 0; d < t.shape.size(); ++d)
    if (t.shape[d] != 1 && t.strides[d] != want[d]) return false;
  return true;
}

}  // namespace stitch::agents::builtin
