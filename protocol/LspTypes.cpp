// JSON conversions for the LSP types in LspTypes.h.
#include "protocol/LspTypes.h"

namespace stitch::protocol {
namespace {

// Walks a path of object keys; any missing step gives null.
const json& at(const json& j, std::initializer_list<const char*> path) {
  static const json null;
  const json* cur = &j;
  for (const char* key : path) {
    if (!cur->is_object()) return null;
    auto it = cur->find(key);
    if (it == cur->end()) return null;
    cur = &*it;
  }
  return *cur;
}

bool flag(const json& j, std::initializer_list<const char*> path) {
  const json& v = at(j, path);
  return v.is_boolean() && v.get<bool>();
}

}  // namespace

void from_json(const json& j, Position& p) {
  p.line = required<int>(j, "line");
  p.character = required<int>(j, "character");
  if (p.line < 0 || p.character < 0) throw ParamsError("position fields must not be negative");
}
void to_json(json& j, const Position& p) { j = json{{"line", p.line}, {"character", p.character}}; }

void from_json(const json& j, Range& r) {
  r.start = required<Position>(j, "start");
  r.end = required<Position>(j, "end");
}
void to_json(json& j, const Range& r) { j = json{{"start", r.start}, {"end", r.end}}; }

void from_json(const json& j, TextDocumentItem& d) {
  d.uri = required<std::string>(j, "uri");
  d.languageId = optional<std::string>(j, "languageId").value_or("");
  d.version = required<int>(j, "version");
  d.text = required<std::string>(j, "text");
}

void from_json(const json& j, TextDocumentIdentifier& d) { d.uri = required<std::string>(j, "uri"); }
void to_json(json& j, const TextDocumentIdentifier& d) { j = json{{"uri", d.uri}}; }

void from_json(const json& j, TextDocumentContentChange& c) {
  c.range = optional<Range>(j, "range");
  c.text = required<std::string>(j, "text");
}

void from_json(const json& j, DidOpenParams& p) {
  p.textDocument = required<TextDocumentItem>(j, "textDocument");
}

void from_json(const json& j, DidChangeParams& p) {
  const json& doc = at(j, {"textDocument"});
  if (!doc.is_object()) throw ParamsError("missing \"textDocument\"");
  p.uri = required<std::string>(doc, "uri");
  p.version = required<int>(doc, "version");
  p.contentChanges = required<std::vector<TextDocumentContentChange>>(j, "contentChanges");
}

void from_json(const json& j, DidCloseParams& p) {
  p.textDocument = required<TextDocumentIdentifier>(j, "textDocument");
}

void from_json(const json& j, TextDocumentPositionParams& p) {
  p.textDocument = required<TextDocumentIdentifier>(j, "textDocument");
  p.position = required<Position>(j, "position");
}

void from_json(const json& j, CodeLensParams& p) {
  p.textDocument = required<TextDocumentIdentifier>(j, "textDocument");
}

void from_json(const json& j, CodeActionParams& p) {
  p.textDocument = required<TextDocumentIdentifier>(j, "textDocument");
  p.range = required<Range>(j, "range");
}

void from_json(const json& j, ExecuteCommandParams& p) {
  p.command = required<std::string>(j, "command");
  p.arguments = optional<json>(j, "arguments").value_or(json::array());
  if (!p.arguments.is_array()) throw ParamsError("\"arguments\" must be an array");
}

void from_json(const json& j, CancelParams& p) {
  p.id = required<json>(j, "id");
  if (!p.id.is_number_integer() && !p.id.is_string())
    throw ParamsError("\"id\" must be an integer or a string");
}

void from_json(const json& j, InitializeParams& p) {
  if (!j.is_object()) throw ParamsError("initialize params must be an object");
  p.processId = optional<int>(j, "processId");
  p.rootUri = optional<std::string>(j, "rootUri");
  const json& caps = at(j, {"capabilities"});
  p.capabilities.workDoneProgress = flag(caps, {"window", "workDoneProgress"});
  p.capabilities.applyEdit = flag(caps, {"workspace", "applyEdit"});
  p.capabilities.documentChanges = flag(caps, {"workspace", "workspaceEdit", "documentChanges"});
  p.capabilities.codeLensRefresh = flag(caps, {"workspace", "codeLens", "refreshSupport"});
  const json& encodings = at(caps, {"general", "positionEncodings"});
  if (encodings.is_array())
    for (const json& e : encodings)
      if (e == "utf-8") p.capabilities.utf8Positions = true;
  p.initializationOptions = optional<json>(j, "initializationOptions").value_or(json::object());
}

}  // namespace stitch::protocol
