// libcurl behind httpPost; see HttpPost.h.
#include "agents/llm/HttpPost.h"

#include <curl/curl.h>

#include <cctype>
#include <ctime>
#include <mutex>

namespace stitch::agents::llm {
namespace {

constexpr std::size_t kErrorBodyCap = 64 * 1024;

struct Transfer {
  CURL* curl = nullptr;
  const BodySink* onBody = nullptr;
  const CancelToken* cancel = nullptr;
  int status = 0;
  std::optional<std::chrono::milliseconds> retryAfter;
  std::string errorBody;
  std::optional<ChatError> sinkError;
};

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

std::size_t onHeader(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string line(data, size * count);
  if (line.rfind("HTTP/", 0) == 0) {  // a new status line (after a 100 Continue, say)
    const auto space = line.find(' ');
    t->status = space == std::string::npos ? 0 : std::atoi(line.c_str() + space + 1);
    t->retryAfter.reset();
    return size * count;
  }
  const auto colon = line.find(':');
  if (colon == std::string::npos) return size * count;
  std::string name = line.substr(0, colon);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (name == "retry-after") t->retryAfter = parseRetryAfter(trim(line.substr(colon + 1)));
  return size * count;
}

std::size_t onWrite(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  if (t->status < 200 || t->status >= 300) {
    if (t->errorBody.size() < kErrorBodyCap) t->errorBody.append(data, std::min(n, kErrorBodyCap - t->errorBody.size()));
    return n;
  }
  if (auto error = (*t->onBody)(std::string_view(data, n))) {
    t->sinkError = std::move(error);
    return 0;  // curl ends the transfer with CURLE_WRITE_ERROR
  }
  return n;
}

int onProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<Transfer*>(user)->cancel->cancelled() ? 1 : 0;
}

void globalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

ChatError transportError(CURLcode code, const char* detail, const WireRequest& request) {
  using K = ChatError::Kind;
  std::string what = std::string(curl_easy_strerror(code)) + (detail && *detail ? std::string(" (") + detail + ")" : "");
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
      return {K::Timeout, 0, "no complete answer from " + request.url + " in time: " + what, true, {}};
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return {K::Connection, 0, "the connection to " + request.url + " failed: " + what, true, {}};
    default:
      return {K::Connection, 0, "the request to " + request.url + " failed: " + what, false, {}};
  }
}

}  // namespace

std::optional<std::chrono::milliseconds> parseRetryAfter(const std::string& value) {
  if (value.empty()) return std::nullopt;
  if (value.find_first_not_of("0123456789") == std::string::npos && value.size() < 10)
    return std::chrono::milliseconds(std::stoll(value) * 1000);
  const time_t when = curl_getdate(value.c_str(), nullptr);
  if (when < 0) return std::nullopt;
  const auto delta = std::chrono::seconds(when - std::time(nullptr));
  return std::chrono::milliseconds(std::max<long long>(0, std::chrono::duration_cast<std::chrono::milliseconds>(delta).count()));
}

HttpOutcome httpPost(const WireRequest& request, HttpTimeouts timeouts, const BodySink& onBody,
                     const CancelToken& cancel) {
  globalInit();
  HttpOutcome out;
  Transfer t;
  t.onBody = &onBody;
  t.cancel = &cancel;
  t.curl = curl_easy_init();
  if (!t.curl) {
    out.failure = ChatError{ChatError::Kind::Connection, 0, "libcurl could not start a transfer", false, {}};
    return out;
  }
  curl_slist* headers = nullptr;
  for (const auto& h : request.headers) headers = curl_slist_append(headers, h.c_str());
  char detail[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(t.curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(t.curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(t.curl, CURLOPT_POSTFIELDS, request.body.c_str());
  curl_easy_setopt(t.curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  curl_easy_setopt(t.curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(timeouts.connect.count()));
  curl_easy_setopt(t.curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeouts.total.count()));
  curl_easy_setopt(t.curl, CURLOPT_NOSIGNAL, 1L);  // we run on worker threads; no SIGALRM for DNS
  curl_easy_setopt(t.curl, CURLOPT_HEADERFUNCTION, onHeader);
  curl_easy_setopt(t.curl, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(t.curl, CURLOPT_WRITEFUNCTION, onWrite);
  curl_easy_setopt(t.curl, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(t.curl, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(t.curl, CURLOPT_XFERINFOFUNCTION, onProgress);
  curl_easy_setopt(t.curl, CURLOPT_XFERINFODATA, &t);
  curl_easy_setopt(t.curl, CURLOPT_ERRORBUFFER, detail);
  curl_easy_setopt(t.curl, CURLOPT_ACCEPT_ENCODING, "");  // whatever this libcurl can decode
  const CURLcode code = curl_easy_perform(t.curl);
  curl_slist_free_all(headers);
  curl_easy_cleanup(t.curl);

  out.status = t.status;
  out.retryAfter = t.retryAfter;
  out.errorBody = std::move(t.errorBody);
  if (code == CURLE_OK) return out;
  if (code == CURLE_ABORTED_BY_CALLBACK || cancel.cancelled())
    out.failure = ChatError{ChatError::Kind::Cancelled, 0, "cancelled", false, {}};
  else if (code == CURLE_WRITE_ERROR && t.sinkError)
    out.failure = std::move(t.sinkError);
  else
    out.failure = transportError(code, detail, request);
  return out;
}

}  // namespace stitch::agents::llm
