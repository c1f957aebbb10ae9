// The loader's import in an edited forward; see ProgramImport.h.
#include "agents/program/ProgramImport.h"

namespace stitch::agents::program {

std::string importLoader(const ProgramNames& names, const std::string& indent) {
  // __package__ is "" for a top-level module, None for a file run as a script or loaded from a path.
  return indent + "if __package__:\n" +
         indent + "    from ." + names.folder + " import load_program\n" +
         indent + "else:\n" +
         indent + "    from " + names.folder + " import load_program\n";
}

}  // namespace stitch::agents::program
