// Numbers as people read them in hovers, log lines and reports ("1.80", "42"): one formatter,
// so every layer that writes text for the editor prints them alike.
#pragma once

#include <cstdio>
#include <string>

namespace stitch::protocol {

inline std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// Three significant digits ("1.3e-06", "0.00205"): for values that `fixed` would print as 0.00.
inline std::string significant(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace stitch::protocol
