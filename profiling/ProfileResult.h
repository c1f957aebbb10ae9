// Errors as values for the profiling layer: every runner and parser returns a value or a
// ProfileError that says what failed and what to do, so no exception leaves a worker thread.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace stitch::profiling {

struct ProfileError {
  std::string code;     // stable snake_case: tool_missing, counters_permission, parse_error, ...
  std::string message;  // for people: what failed, where, and what to do
};

template <typename T>
class ProfileResult {
public:
  ProfileResult(T value) : v_(std::move(value)) {}
  ProfileResult(ProfileError error) : v_(std::move(error)) {}
  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const ProfileError& error() const { return std::get<ProfileError>(v_); }

private:
  std::variant<T, ProfileError> v_;
};

}  // namespace stitch::profiling
