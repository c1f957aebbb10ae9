// Open documents and LSP position arithmetic; see DocumentStore.h.
#include "server/DocumentStore.h"

namespace stitch::server {
namespace {

// Length of the UTF-8 sequence starting with `lead` (1 for stray continuation bytes, so
// malformed text still advances).
std::size_t utf8Length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  if ((lead >> 3) == 0x1E) return 4;
  return 1;
}

}  // namespace

std::optional<std::size_t> DocumentStore::offsetOf(const std::string& text, protocol::Position pos,
                                                   PositionEncoding encoding) {
  std::size_t i = 0;
  for (int line = 0; line < pos.line; ++line) {
    std::size_t eol = text.find('\n', i);
    if (eol == std::string::npos) return std::nullopt;
    i = eol + 1;
  }
  std::size_t lineEnd = text.find('\n', i);
  if (lineEnd == std::string::npos) lineEnd = text.size();
  int units = 0;
  while (i < lineEnd && units < pos.character) {
    std::size_t len = std::min(utf8Length(static_cast<unsigned char>(text[i])), lineEnd - i);
    // A character outside the BMP takes two UTF-16 code units.
    units += encoding == PositionEncoding::Utf8 ? static_cast<int>(len) : (len == 4 ? 2 : 1);
    i += len;
  }
  return i;
}

protocol::Position DocumentStore::endOf(const std::string& text, PositionEncoding encoding) {
  protocol::Position p;
  std::size_t lineStart = 0;
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') {
      ++p.line;
      lineStart = i + 1;
    }
  for (std::size_t i = lineStart; i < text.size();) {
    std::size_t len = std::min(utf8Length(static_cast<unsigned char>(text[i])), text.size() - i);
    p.character += encoding == PositionEncoding::Utf8 ? static_cast<int>(len) : (len == 4 ? 2 : 1);
    i += len;
  }
  return p;
}

void DocumentStore::open(const protocol::TextDocumentItem& item) {
  std::lock_guard lock(mutex_);
  docs_[item.uri] = Document{item.uri, item.languageId, item.version, item.text};
}

void DocumentStore::change(const protocol::DidChangeParams& params) {
  std::lock_guard lock(mutex_);
  auto it = docs_.find(params.uri);
  if (it == docs_.end()) throw protocol::ParamsError("didChange for a document that is not open: " + params.uri);
  std::string text = it->second.text;
  for (const auto& c : params.contentChanges) {
    if (!c.range) {
      text = c.text;
      continue;
    }
    auto begin = offsetOf(text, c.range->start, encoding_);
    auto end = offsetOf(text, c.range->end, encoding_);
    if (!begin || !end || *end < *begin)
      throw protocol::ParamsError("didChange range outside the document " + params.uri);
    text.replace(*begin, *end - *begin, c.text);
  }
  it->second.text = std::move(text);
  it->second.version = params.version;
}

void DocumentStore::close(const std::string& uri) {
  std::lock_guard lock(mutex_);
  docs_.erase(uri);
}

std::optional<Document> DocumentStore::get(const std::string& uri) const {
  std::lock_guard lock(mutex_);
  auto it = docs_.find(uri);
  if (it == docs_.end()) return std::nullopt;
  return it->second;
}

std::size_t DocumentStore::size() const {
  std::lock_guard lock(mutex_);
  return docs_.size();
}

}  // namespace stitch::server
