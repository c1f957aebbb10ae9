// What the LLM brain remembers across one job's attempts, written into every later prompt so
// the model does not repeat itself: each candidate's strategy and verdict, the answers that
// could not be parsed, and error fingerprints (the same failure seen twice is called out).
#pragma once

#include "agents/loop/Brain.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stitch::agents::llm {

class AttemptMemory {
public:
  // A candidate the loop judged.
  void recordVerdict(const std::string& id, const std::string& strategy, const loop::Feedback& feedback);
  // An answer that was sent back for a parse error (planner or coder).
  void recordInvalidAnswer(const std::string& role, const std::string& error);

  // A short stable form of an error: numbers, paths and quoted text removed, so failures that
  // differ only in a line number or a value count as the same.
  static std::string fingerprint(const std::string& error);

  // The section for the prompt; "" when nothing happened yet.
  std::string render() const;

private:
  void note(const std::string& line, const std::string& fingerprint);

  std::vector<std::string> lines_;
  std::map<std::string, int> seen_;  // fingerprint -> times
};

}  // namespace stitch::agents::llm
