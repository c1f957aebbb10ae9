// Bounded table of server-to-client requests; see OutgoingRequests.h.
#include "server/OutgoingRequests.h"

#include "server/Logger.h"

namespace stitch::server {

void OutgoingRequests::send(const std::string& method, protocol::json params, Callback callback) {
  std::optional<Entry> dropped;
  std::int64_t id;
  {
    std::lock_guard lock(mutex_);
    id = nextId_++;
    entries_.push_back(Entry{id, method, std::move(callback)});
    if (entries_.size() > capacity_) {
      dropped = std::move(entries_.front());
      entries_.pop_front();
    }
  }
  if (dropped) {
    logWarning("no answer to " + dropped->method + " (id " + std::to_string(dropped->id) +
               ") before " + std::to_string(capacity_) + " newer requests; dropped");
    dropped->callback(std::nullopt,
                      protocol::RpcError{protocol::ErrorCode::RequestFailed,
                                         "the client did not answer " + dropped->method, std::nullopt});
  }
  // Server ids are strings so they can never collide with a client's numeric ids in logs.
  output_.send(protocol::makeRequest("s" + std::to_string(id), method, std::move(params)));
}

bool OutgoingRequests::resolve(const protocol::Incoming& response) {
  if (!response.id.is_string()) return false;
  const std::string& text = response.id.get_ref<const std::string&>();
  if (text.size() < 2 || text[0] != 's') return false;
  std::int64_t id = 0;
  try {
    id = std::stoll(text.substr(1));
  } catch (const std::exception&) {
    return false;
  }
  std::optional<Entry> entry;
  {
    std::lock_guard lock(mutex_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (it->id == id) {
        entry = std::move(*it);
        entries_.erase(it);
        break;
      }
  }
  if (!entry) return false;
  entry->callback(response.result, response.error);
  return true;
}

std::size_t OutgoingRequests::pending() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

}  // namespace stitch::server
