// Errors as values for the built-in brain: parsing, planning and code generation return a
// value or a Failure saying what failed and where, so nothing throws across the job thread.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace stitch::agents::builtin {

struct Failure {
  std::string message;  // what failed, where (file:line or graph node when known), what to do
};

template <typename T>
class Outcome {
public:
  Outcome(T value) : v_(std::move(value)) {}
  Outcome(Failure failure) : v_(std::move(failure)) {}
  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const Failure& failure() const { return std::get<Failure>(v_); }

private:
  std::variant<T, Failure> v_;
};

}  // namespace stitch::agents::builtin
