// Retries, streaming and error mapping; see ChatClient.h.
#include "agents/llm/ChatClient.h"

#include "agents/llm/Backoff.h"
#include "agents/llm/HttpPost.h"
#include "agents/llm/SseParser.h"

#include <cstdio>
#include <thread>

namespace stitch::agents::llm {
namespace {

std::string seconds(std::chrono::milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", ms.count() / 1000.0);
  return buf;
}

ChatError protocolError(std::string message) { return {ChatError::Kind::Protocol, 0, std::move(message), true, {}}; }

// What failed before any answer could be read, streamed or whole: the connection, or a non-2xx
// status in the provider's own error format (with its Retry-After).
std::optional<ChatError> transportError(const ProviderWire& wire, HttpOutcome& http) {
  if (http.failure) return std::move(http.failure);
  if (http.status >= 200 && http.status < 300) return std::nullopt;
  ChatError e = wire.httpError(http.status, http.errorBody);
  e.retryAfter = http.retryAfter;
  return e;
}

}  // namespace

ChatClient::ChatClient(ProviderSettings settings, Log log)
    : settings_(std::move(settings)), wire_(makeWire(settings_.kind)), log_(std::move(log)) {}

ChatResult ChatClient::complete(const ChatRequest& chat, const CancelToken& cancel) {
  const int attempts = std::max(1, settings_.maxAttempts);
  ChatResult last;
  for (int n = 1; n <= attempts; ++n) {
    if (cancel.cancelled()) {
      last = {};
      last.error = ChatError{ChatError::Kind::Cancelled, 0, "cancelled", false, {}};
      last.attempts = n - 1;
      return last;
    }
    last = attempt(chat, cancel);
    last.attempts = n;
    if (last.ok()) return last;
    last.error->message = settings_.apiKey.scrub(last.error->message);
    if (!last.error->retryable || n == attempts) break;
    const auto delay = backoffDelay(n, last.error->retryAfter, settings_.backoffBase, settings_.backoffCap,
                                    std::uniform_real_distribution<double>(0, 1)(rng_));
    if (log_)
      log_("warning", providerName(settings_.kind) + ": " + last.error->message + "; retrying in " + seconds(delay) +
                          (last.error->retryAfter ? " as the server asked" : "") + " (attempt " +
                          std::to_string(n + 1) + " of " + std::to_string(attempts) + ")");
    if (!wait(delay, cancel)) {
      last.error = ChatError{ChatError::Kind::Cancelled, 0, "cancelled", false, {}};
      return last;
    }
  }
  if (last.error->retryable && attempts > 1)
    last.error->message += " (gave up after " + std::to_string(last.attempts) + " attempts)";
  return last;
}

ChatResult ChatClient::attempt(const ChatRequest& chat, const CancelToken& cancel) {
  const WireRequest request = wire_->request(settings_, chat);
  return settings_.stream ? streamed(request, cancel) : whole(request, cancel);
}

ChatResult ChatClient::streamed(const WireRequest& request, const CancelToken& cancel) {
  auto decoder = wire_->decoder();
  std::optional<ChatError> decodeError;
  SseParser parser([&](const SseEvent& event) -> std::optional<std::string> {
    decodeError = decoder->onEvent(event);
    return decodeError ? std::optional<std::string>(decodeError->message) : std::nullopt;
  });
  auto sink = [&](std::string_view bytes) -> std::optional<ChatError> {
    if (auto error = parser.feed(bytes)) return decodeError ? *decodeError : protocolError(*error);
    return std::nullopt;
  };
  HttpOutcome http = httpPost(request, {settings_.connectTimeout, settings_.totalTimeout}, sink, cancel);
  ChatResult r;
  if (auto transport = transportError(*wire_, http)) {
    r.error = std::move(transport);
  } else if (auto error = parser.finish()) {
    r.error = decodeError ? *decodeError : protocolError(*error);
  } else if (!decoder->done()) {
    r.error = protocolError("the answer stream ended before its end marker (" + std::to_string(decoder->answer().text.size()) +
                            " characters received)");
  } else {
    r.answer = decoder->answer();
  }
  return r;
}

ChatResult ChatClient::whole(const WireRequest& request, const CancelToken& cancel) {
  std::string body;
  auto sink = [&](std::string_view bytes) -> std::optional<ChatError> {
    body.append(bytes);
    return std::nullopt;
  };
  HttpOutcome http = httpPost(request, {settings_.connectTimeout, settings_.totalTimeout}, sink, cancel);
  if (auto error = transportError(*wire_, http)) return ChatResult{std::nullopt, std::move(error)};
  return wire_->parseBody(body);
}

bool ChatClient::wait(std::chrono::milliseconds delay, const CancelToken& cancel) {
  const auto until = std::chrono::steady_clock::now() + delay;
  while (std::chrono::steady_clock::now() < until) {
    if (cancel.cancelled()) return false;
    std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(
        std::chrono::milliseconds(20),
        std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()) +
            std::chrono::milliseconds(1)));
  }
  return !cancel.cancelled();
}

}  // namespace stitch::agents::llm
