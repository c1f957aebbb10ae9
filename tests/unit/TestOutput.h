// An Output that records what the server sends, for in-process tests; waits with a
// timeout so a missing message fails the test instead of hanging it.
#pragma once

#include "server/Output.h"

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <vector>

namespace stitch::test {

class RecordingOutput final : public server::Output {
public:
  void send(const protocol::json& message) override {
    std::lock_guard lock(mutex_);
    messages_.push_back(message);
    cv_.notify_all();
  }

  std::vector<protocol::json> messages() const {
    std::lock_guard lock(mutex_);
    return messages_;
  }

  // The first message (in order of arrival) matching `pred`, waiting up to `timeout`.
  std::optional<protocol::json> waitFor(const std::function<bool(const protocol::json&)>& pred,
                                        std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::unique_lock lock(mutex_);
    std::optional<protocol::json> found;
    cv_.wait_for(lock, timeout, [&] {
      for (const auto& m : messages_)
        if (pred(m)) {
          found = m;
          return true;
        }
      return false;
    });
    return found;
  }

  std::optional<protocol::json> waitForId(const protocol::json& id) {
    return waitFor([&](const protocol::json& m) { return m.contains("id") && m["id"] == id && !m.contains("method"); });
  }

  std::optional<protocol::json> waitForMethod(const std::string& method) {
    return waitFor([&](const protocol::json& m) { return m.value("method", "") == method; });
  }

private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<protocol::json> messages_;
};

}  // namespace stitch::test
