// Where the task's `forward` is in its Python source: the parameter names (the thin ModelNew
// keeps the same signature) and the body's lines (the span a candidate's edit replaces).
#pragma once

#include "agents/ir/Outcome.h"

#include <string>
#include <vector>

namespace stitch::agents::builtin {

struct ForwardSource {
  std::vector<std::string> params;    // without self
  std::vector<std::string> defaults;  // each param's default as written, "" where it has none
  int defLine = 0;                  // one-based
  int bodyFirst = 0;                // one-based, inclusive
  int bodyLast = 0;
  std::string bodyIndent;
  std::string body;  // lines bodyFirst..bodyLast as written, each ending in a newline
  // A body on the def line itself (`def forward(self, x): return x * 2`): that line is then
  // bodyFirst = bodyLast, `body` its statement on a line of its own, and `header` the line up to
  // its colon: an edit of lines bodyFirst..bodyLast begins with it. Empty for a body of its own lines.
  std::string header;
};

// Finds `def forward` of `modelClass` (the first class defining forward when empty).
Outcome<ForwardSource> findForward(const std::string& source, const std::string& modelClass = "Model");

}  // namespace stitch::agents::builtin
