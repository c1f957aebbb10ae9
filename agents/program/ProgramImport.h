// How an edited forward imports the loader of its program folder. Relative to the model's own
// module when it lives in a package (the user moved it into `myproj/models/`), by name when it is a
// top-level module or a script (the folder then sits on sys.path beside it).
#pragma once

#include "agents/program/ProgramFiles.h"

#include <string>

namespace stitch::agents::program {

// Lines, each starting with `indent`, that bind `load_program` from the program folder.
std::string importLoader(const ProgramNames& names, const std::string& indent);

}  // namespace stitch::agents::program
