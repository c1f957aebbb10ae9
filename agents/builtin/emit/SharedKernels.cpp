// See SharedKernels.h.
#include "agents/builtin/emit/SharedKernels.h"

#include "agents/builtin/emit/Coder.h"

#include <cctype>

namespace stitch::agents::builtin {
namespace {

bool identifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// `text` with the names CudaEmitter derives from step `id` ("k36_kernel", "k36_off0", "k36_part":
// `id` opening an identifier, no digit after it) spelled after `to`. The launcher's own name,
// "launch_k36", does not open with `id` and is kept.
std::string renamed(const std::string& text, const std::string& id, const std::string& to) {
  std::string out;
  out.reserve(text.size());
  std::size_t from = 0;
  for (std::size_t at = text.find(id); at != std::string::npos; at = text.find(id, at + id.size())) {
    const std::size_t end = at + id.size();
    if ((at > 0 && identifierChar(text[at - 1])) || (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))))
      continue;
    out.append(text, from, at - from).append(to);
    from = end;
  }
  return out.append(text, from, std::string::npos);
}

}  // namespace

std::size_t SharedKernels::add(const std::string& id, const EmittedKernel& e) {
  // The launcher comes last (CudaEmitter): what precedes it is the code a repeat shares.
  const std::size_t launcher = e.device.find("static int " + e.launcher + "(");
  if (launcher != std::string::npos) {
    std::string code = renamed(e.device.substr(0, launcher), id, "@");
    const auto [it, added] = byCode_.emplace(std::move(code), blocks_.size());
    if (!added) {
      Block& b = blocks_[it->second];
      b.launchers.push_back(e.launcher);
      b.repeats += "\n" + renamed(e.device.substr(launcher), id, b.id);
      return it->second;
    }
  }
  blocks_.push_back(Block{id, e.device, {e.launcher}, ""});
  return blocks_.size() - 1;
}

std::string SharedKernels::text(std::size_t b) const {
  const Block& block = blocks_.at(b);
  std::string marker = kKernelBegin;
  for (const auto& l : block.launchers) marker += " " + l;
  return marker + "\n" + block.code + block.repeats + "\n" + kKernelEnd + "\n";
}

}  // namespace stitch::agents::builtin
