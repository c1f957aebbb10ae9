// Cooperative cancellation shared by requests and jobs: a source flips the flag once,
// holders of a token poll it between steps or register a callback. Racy by design: work
// that finishes after a cancel still delivers (or drops) its result deliberately.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace stitch::agents {

class CancelToken {
public:
  CancelToken() : state_(std::make_shared<State>()) {}

  bool cancelled() const {
    std::lock_guard lock(state_->mutex);
    return state_->cancelled;
  }

  // Runs `callback` once on cancellation (at once, on this thread, if already cancelled).
  void onCancel(std::function<void()> callback) const {
    {
      std::lock_guard lock(state_->mutex);
      if (!state_->cancelled) {
        state_->callbacks.push_back(std::move(callback));
        return;
      }
    }
    callback();
  }

private:
  friend class CancelSource;
  struct State {
    mutable std::mutex mutex;
    bool cancelled = false;
    std::vector<std::function<void()>> callbacks;
  };
  std::shared_ptr<State> state_;
};

class CancelSource {
public:
  CancelToken token() const { return token_; }

  // Idempotent; callbacks run on the calling thread, outside the lock.
  void cancel() const {
    std::vector<std::function<void()>> callbacks;
    {
      std::lock_guard lock(token_.state_->mutex);
      if (token_.state_->cancelled) return;
      token_.state_->cancelled = true;
      callbacks.swap(token_.state_->callbacks);
    }
    for (auto& cb : callbacks) cb();
  }

private:
  CancelToken token_;
};

}  // namespace stitch::agents
