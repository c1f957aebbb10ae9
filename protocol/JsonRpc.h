// JSON-RPC 2.0 as LSP uses it: error codes, message classification, and builders for
// outgoing messages. Knows no method names and does no I/O.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace stitch::protocol {

using json = nlohmann::json;

enum class ErrorCode : int {
  ParseError = -32700,
  InvalidRequest = -32600,
  MethodNotFound = -32601,
  InvalidParams = -32602,
  InternalError = -32603,
  ServerNotInitialized = -32002,
  RequestCancelled = -32800,
  ContentModified = -32801,
  RequestFailed = -32803,
};

struct RpcError {
  ErrorCode code = ErrorCode::InternalError;
  std::string message;
  std::optional<json> data;
};

// A request id is a number or a string; null only in answers to unreadable messages.
using RequestId = json;

struct Incoming {
  enum class Kind { Request, Notification, Response, Invalid };
  Kind kind = Kind::Invalid;
  RequestId id;             // Request, Response, and Invalid when an id could be read
  std::string method;       // Request, Notification
  json params;              // Request, Notification (null when absent)
  std::optional<json> result;         // Response
  std::optional<RpcError> error;      // Response; for Invalid, why
};

// Classifies one parsed JSON value, moving its params or result out (a message's body may be
// megabytes: it is not copied). Never throws.
Incoming classify(json message);

// What one message may hold, checked by a byte scan before it is parsed: parsing costs per value,
// and copying or freeing a parsed value recurses once per level (a message nested a million deep
// overflows the stack). Both are far above any message of the protocol.
struct ShapeLimits {
  std::size_t maxDepth = 256;
  std::size_t maxValues = 1u << 19;
};
// Why `text` is refused ("nested deeper than 256 levels"), or nullopt when it fits.
std::optional<std::string> exceedsShape(std::string_view text, ShapeLimits limits = {});

json makeResponse(const RequestId& id, json result);
json makeError(const RequestId& id, const RpcError& error);
json makeNotification(std::string_view method, json params);
json makeRequest(const RequestId& id, std::string_view method, json params);

// Serializes for the wire; invalid UTF-8 that arrived from a client is replaced, never thrown.
std::string serialize(const json& message);

}  // namespace stitch::protocol
