// Which Python runs the harness when the command line names none: a terminal user's active
// environment, else the first interpreter on PATH that has PyTorch. A machine whose default
// `python3` lacks torch must not end in a traceback from inside the harness.
#pragma once

#include "protocol/Result.h"

#include <string>
#include <vector>

namespace stitch::server {

// The rule, as --help states it.
extern const char* const kPythonRule;

// The candidates in the rule's order: $VIRTUAL_ENV/bin/python, $CONDA_PREFIX/bin/python, then every
// python3 and python on $PATH (an entry once). Only files that exist and are executable.
std::vector<std::string> pythonCandidates();

// Why none would do: one line naming what was tried and --python.
struct NoTorchPython {
  std::string message;
};

// The first candidate in which the torch package is found (each tried with a deadline).
protocol::Result<std::string, NoTorchPython> findTorchPython();

}  // namespace stitch::server
