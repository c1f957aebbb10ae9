// Errors as values: a value, or an error that says what failed and what to do, so nothing throws
// across a job's or a worker's thread. Each layer names its error type (builtin::Failure,
// profiling::ProfileError) and aliases this template.
#pragma once

#include <utility>
#include <variant>

namespace stitch::protocol {

template <typename T, typename E>
class Result {
public:
  Result(T value) : v_(std::move(value)) {}
  Result(E error) : v_(std::move(error)) {}
  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const E& error() const { return std::get<E>(v_); }

private:
  std::variant<T, E> v_;
};

}  // namespace stitch::protocol
