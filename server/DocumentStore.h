// The documents the client has open: text and version, kept current through didOpen /
// didChange (full and incremental) / didClose. Thread-safe; readers get copies.
#pragma once

#include "protocol/LspTypes.h"

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace stitch::server {

enum class PositionEncoding { Utf16, Utf8 };

struct Document {
  std::string uri;
  std::string languageId;
  int version = 0;
  std::string text;
};

class DocumentStore {
public:
  void setEncoding(PositionEncoding encoding) { encoding_ = encoding; }
  PositionEncoding encoding() const { return encoding_; }

  void open(const protocol::TextDocumentItem& item);
  // Applies the changes in order. Throws protocol::ParamsError (document unknown, range out
  // of the document) and leaves the document as it was.
  void change(const protocol::DidChangeParams& params);
  void close(const std::string& uri);
  std::optional<Document> get(const std::string& uri) const;
  std::size_t size() const;

  // Byte offset of an LSP position in `text`, in the negotiated encoding; positions past a
  // line's end clamp to it (as the LSP spec asks).
  static std::optional<std::size_t> offsetOf(const std::string& text, protocol::Position pos,
                                             PositionEncoding encoding);
  // The LSP position of the end of `text` (for whole-document edits).
  static protocol::Position endOf(const std::string& text, PositionEncoding encoding);

private:
  PositionEncoding encoding_ = PositionEncoding::Utf16;
  mutable std::mutex mutex_;
  std::map<std::string, Document> docs_;
};

}  // namespace stitch::server
