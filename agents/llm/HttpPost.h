// One HTTP POST over libcurl, its 2xx body handed over as it arrives (so server-sent events are
// parsed while the model writes). Connect and total timeouts; the job's cancel token aborts the
// transfer from curl's progress callback, which curl calls at least once a second even when no
// byte arrives.
#pragma once

#include "agents/Cancellation.h"
#include "agents/llm/Chat.h"
#include "agents/llm/ProviderWire.h"

#include <functional>
#include <string_view>

namespace stitch::agents::llm {

struct HttpOutcome {
  int status = 0;  // 0 when no response arrived
  std::optional<std::chrono::milliseconds> retryAfter;
  std::string errorBody;            // a non-2xx body (its first 64 KiB)
  std::optional<ChatError> failure;  // no complete response: connection, timeout, cancel, or the sink's error
};

struct HttpTimeouts {
  std::chrono::milliseconds connect;
  std::chrono::milliseconds total;
};

// `onBody` gets each chunk of a 2xx body and may return an error to abort the transfer.
using BodySink = std::function<std::optional<ChatError>(std::string_view)>;

HttpOutcome httpPost(const WireRequest& request, HttpTimeouts timeouts, const BodySink& onBody,
                     const CancelToken& cancel);

// A Retry-After value: delta-seconds or an HTTP date; nullopt when it is neither.
std::optional<std::chrono::milliseconds> parseRetryAfter(const std::string& value);

}  // namespace stitch::agents::llm
