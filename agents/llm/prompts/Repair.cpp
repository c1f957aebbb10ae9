// The turn that sends an invalid answer back to the model: the exact parse error, and for an
// answer cut off at the token limit, the instruction to be shorter.
#include "agents/llm/prompts/Prompts.h"

namespace stitch::agents::llm::prompts {

std::string repair(const std::string& error, bool truncated) {
  std::string s = "Your answer could not be used: " + error + "\n";
  if (truncated) s += "It was cut off at the output token limit: write less prose and shorter code.\n";
  s += "Answer again, complete and in exactly the format asked for, with nothing else.";
  return s;
}

}  // namespace stitch::agents::llm::prompts
