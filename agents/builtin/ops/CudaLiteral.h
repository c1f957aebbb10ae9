// A number as CUDA float source, spelled one way for the registry's CUDA expressions and the
// emitters, which include it from here: the registry then needs nothing of the emitters.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

namespace stitch::agents::builtin {

// A float constant as CUDA source, exact to float precision, NaN and infinities included.
inline std::string floatLiteral(double v) {
  if (std::isnan(v)) return "__int_as_float(0x7fc00000)";
  if (std::isinf(v)) return v > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return "(" + s + "f)";
}

}  // namespace stitch::agents::builtin
