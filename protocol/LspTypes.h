// The subset of LSP types the host reads and writes, parsed at the edge with errors that
// name the offending field (they become -32602 answers).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace stitch::protocol {

using json = nlohmann::json;

// A params object that does not have the shape a method needs.
struct ParamsError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Reads a required member, naming it in the error.
template <typename T>
T required(const json& j, const char* key) {
  if (!j.is_object()) throw ParamsError("expected an object holding \"" + std::string(key) + "\"");
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) throw ParamsError("missing \"" + std::string(key) + "\"");
  try {
    return it->get<T>();
  } catch (const ParamsError& e) {
    throw ParamsError(std::string(key) + "." + e.what());
  } catch (const json::exception& e) {
    throw ParamsError("\"" + std::string(key) + "\" has the wrong type (" + it->type_name() + ")");
  }
}

// Reads an optional member; absent or null gives nullopt.
template <typename T>
std::optional<T> optional(const json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  try {
    return it->get<T>();
  } catch (const ParamsError& e) {
    throw ParamsError(std::string(key) + "." + e.what());
  } catch (const json::exception& e) {
    throw ParamsError("\"" + std::string(key) + "\" has the wrong type (" + it->type_name() + ")");
  }
}

struct Position {
  int line = 0;
  int character = 0;
  friend bool operator==(const Position&, const Position&) = default;
  friend auto operator<=>(const Position&, const Position&) = default;
};
void from_json(const json& j, Position& p);
void to_json(json& j, const Position& p);

struct Range {
  Position start;
  Position end;
  friend bool operator==(const Range&, const Range&) = default;
};
void from_json(const json& j, Range& r);
void to_json(json& j, const Range& r);

struct TextDocumentItem {
  std::string uri;
  std::string languageId;
  int version = 0;
  std::string text;
};
void from_json(const json& j, TextDocumentItem& d);

struct TextDocumentIdentifier {
  std::string uri;
};
void from_json(const json& j, TextDocumentIdentifier& d);
void to_json(json& j, const TextDocumentIdentifier& d);

struct TextDocumentContentChange {
  std::optional<Range> range;  // absent: the text replaces the whole document
  std::string text;
};
void from_json(const json& j, TextDocumentContentChange& c);

struct DidOpenParams {
  TextDocumentItem textDocument;
};
void from_json(const json& j, DidOpenParams& p);

struct DidChangeParams {
  std::string uri;
  int version = 0;
  std::vector<TextDocumentContentChange> contentChanges;
};
void from_json(const json& j, DidChangeParams& p);

struct DidCloseParams {
  TextDocumentIdentifier textDocument;
};
void from_json(const json& j, DidCloseParams& p);

struct TextDocumentPositionParams {
  TextDocumentIdentifier textDocument;
  Position position;
};
void from_json(const json& j, TextDocumentPositionParams& p);

struct CodeLensParams {
  TextDocumentIdentifier textDocument;
};
void from_json(const json& j, CodeLensParams& p);

struct CodeActionParams {
  TextDocumentIdentifier textDocument;
  Range range;
};
void from_json(const json& j, CodeActionParams& p);

struct ExecuteCommandParams {
  std::string command;
  json arguments = json::array();
};
void from_json(const json& j, ExecuteCommandParams& p);

struct CancelParams {
  json id;
};
void from_json(const json& j, CancelParams& p);

// What the host needs to know about the client from `initialize`.
struct ClientCapabilities {
  bool workDoneProgress = false;      // window.workDoneProgress
  bool applyEdit = false;             // workspace.applyEdit
  bool documentChanges = false;       // workspace.workspaceEdit.documentChanges
  bool codeLensRefresh = false;       // workspace.codeLens.refreshSupport
  bool utf8Positions = false;         // general.positionEncodings includes "utf-8"
};

struct InitializeParams {
  std::optional<int> processId;
  std::optional<std::string> rootUri;
  ClientCapabilities capabilities;
  json initializationOptions;  // parsed by the server's configuration
};
void from_json(const json& j, InitializeParams& p);

}  // namespace stitch::protocol
