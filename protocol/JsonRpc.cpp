// JSON-RPC 2.0 message classification and builders; see JsonRpc.h.
#include "protocol/JsonRpc.h"

namespace stitch::protocol {
namespace {

Incoming invalid(RequestId id, std::string why) {
  Incoming in;
  in.kind = Incoming::Kind::Invalid;
  in.id = std::move(id);
  in.error = RpcError{ErrorCode::InvalidRequest, std::move(why), std::nullopt};
  return in;
}

bool validId(const json& id) { return id.is_number_integer() || id.is_string(); }

}  // namespace

Incoming classify(json message) {
  if (message.is_array()) return invalid(nullptr, "batch messages are not supported");
  if (!message.is_object()) return invalid(nullptr, "a message must be a JSON object");
  auto version = message.find("jsonrpc");
  if (version == message.end() || *version != "2.0")
    return invalid(message.contains("id") && validId(message["id"]) ? message["id"] : json(nullptr),
                   "\"jsonrpc\" must be \"2.0\"");

  auto id = message.find("id");
  auto method = message.find("method");
  if (method != message.end()) {
    if (!method->is_string())
      return invalid(id != message.end() && validId(*id) ? *id : json(nullptr),
                     "\"method\" must be a string");
    auto params = message.find("params");
    if (params != message.end() && !params->is_object() && !params->is_array() && !params->is_null())
      return invalid(id != message.end() && validId(*id) ? *id : json(nullptr),
                     "\"params\" must be an object or an array");
    Incoming in;
    in.method = method->get<std::string>();
    if (params != message.end()) in.params = std::move(*params);
    if (id == message.end()) {
      in.kind = Incoming::Kind::Notification;
      return in;
    }
    if (!validId(*id)) return invalid(nullptr, "\"id\" must be an integer or a string");
    in.kind = Incoming::Kind::Request;
    in.id = *id;
    return in;
  }

  if (id == message.end()) return invalid(nullptr, "a message needs a \"method\" or an \"id\"");
  Incoming in;
  in.kind = Incoming::Kind::Response;
  in.id = *id;
  if (auto err = message.find("error"); err != message.end() && err->is_object()) {
    RpcError e;
    e.code = static_cast<ErrorCode>(err->value("code", -32603));
    e.message = err->contains("message") && (*err)["message"].is_string()
                    ? (*err)["message"].get<std::string>()
                    : std::string("(no message)");
    if (err->contains("data")) e.data = (*err)["data"];
    in.error = std::move(e);
  } else if (auto res = message.find("result"); res != message.end()) {
    in.result = std::move(*res);
  } else {
    return invalid(*id, "a response needs \"result\" or \"error\"");
  }
  return in;
}

json makeResponse(const RequestId& id, json result) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json makeError(const RequestId& id, const RpcError& error) {
  json e{{"code", static_cast<int>(error.code)}, {"message", error.message}};
  if (error.data) e["data"] = *error.data;
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(e)}};
}

json makeNotification(std::string_view method, json params) {
  return json{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
}

json makeRequest(const RequestId& id, std::string_view method, json params) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

std::optional<std::string> exceedsShape(std::string_view text, ShapeLimits limits) {
  std::size_t depth = 0, values = 1;
  bool inString = false, escaped = false;
  for (char c : text) {
    if (inString) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') inString = false;
      continue;
    }
    switch (c) {
      case '"': inString = true; break;
      case '[':
      case '{':
        if (++depth > limits.maxDepth) return "nested deeper than " + std::to_string(limits.maxDepth) + " levels";
        [[fallthrough]];
      case ',':
        if (++values > limits.maxValues) return "more than " + std::to_string(limits.maxValues) + " values";
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default: break;
    }
  }
  return std::nullopt;
}

std::string serialize(const json& message) {
  return message.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace stitch::protocol
