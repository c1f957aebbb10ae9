// The brain's memory of attempts; see AttemptMemory.h.
#include "agents/llm/AttemptMemory.h"

#include <cctype>
#include <cstdio>

namespace stitch::agents::llm {

std::string AttemptMemory::fingerprint(const std::string& error) {
  std::string out;
  bool inQuote = false;
  for (std::size_t i = 0; i < error.size() && out.size() < 160; ++i) {
    const char c = error[i];
    if (c == '"') {
      inQuote = !inQuote;
      if (inQuote) out += "\"…\"";
      continue;
    }
    if (inQuote) continue;
    if (std::isdigit(static_cast<unsigned char>(c))) {
      if (out.empty() || out.back() != '#') out += '#';
      continue;
    }
    if (c == '/') {  // a path: keep only its last component
      while (!out.empty() && !std::isspace(static_cast<unsigned char>(out.back()))) out.pop_back();
      continue;
    }
    out += c;
  }
  return out;
}

void AttemptMemory::note(const std::string& line, const std::string& fp) {
  const int times = ++seen_[fp];
  lines_.push_back(line + (times > 1 ? " (seen " + std::to_string(times) + " times now: change approach)" : ""));
}

void AttemptMemory::recordVerdict(const std::string& id, const std::string& strategy, const loop::Feedback& fb) {
  std::string verdict;
  if (fb.passed) {
    verdict = "passed";
    if (fb.medianMs) {
      char buf[48];
      std::snprintf(buf, sizeof buf, ", median %.4f ms", *fb.medianMs);
      verdict += buf;
    }
    if (!fb.diagnosis.empty()) verdict += "; " + fb.diagnosis;
  } else {
    verdict = fb.built ? "FAILED" : "FAILED to build";
    std::string checks;
    for (const auto& c : fb.failedChecks) checks += (checks.empty() ? "" : ", ") + c;
    if (!checks.empty()) verdict += ": " + checks;
  }
  std::string fp = fb.passed ? "passed " + id : fingerprint(verdict);
  note("- " + id + " [" + (strategy.empty() ? "no strategy given" : strategy) + "]: " + verdict, fp);
}

void AttemptMemory::recordInvalidAnswer(const std::string& role, const std::string& error) {
  note("- an answer of the " + role + " was invalid: " + error, role + ": " + fingerprint(error));
}

std::string AttemptMemory::render() const {
  std::string s;
  for (const auto& l : lines_) s += l + "\n";
  return s;
}

}  // namespace stitch::agents::llm
