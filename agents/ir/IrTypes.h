// The captured graph's closed vocabularies as enums: a tensor's dtype (PyTorch's names), its role
// and a node's kind (protocol/HARNESS.md). parseGraph reads each name once and refuses one it does
// not know, naming the field; inside the brains they are enum values, compared as such.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace stitch::agents::ir {

// Every dtype PyTorch names (str(torch.dtype) less "torch."), so that a capture of any model parses.
enum class DType {
  Float32, Float16, BFloat16, Float64, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64, Bool,
  Complex32, Complex64, Complex128, Float8E4M3Fn, Float8E4M3Fnuz, Float8E5M2, Float8E5M2Fnuz, Float8E8M0Fnu,
  Float4E2M1FnX2, QInt8, QUInt8, QInt32, QUInt4x2, QUInt2x4, Bits1x8, Bits2x4, Bits4x2, Bits8, Bits16,
};
enum class Role { Input, Parameter, Buffer, Attribute, Constant, Intermediate };
enum class NodeKind { Compute, View, Inplace };

template <class E>
struct Vocabulary;
template <>
struct Vocabulary<DType> {
  static constexpr const char* field = "dtype";
  static_assert(static_cast<std::size_t>(DType::Bits16) + 1 == 32, "a name for every dtype");
  static constexpr std::array<std::string_view, 32> names{
      "float32",       "float16",        "bfloat16",    "float64",        "int8",           "int16",
      "int32",         "int64",          "uint8",       "uint16",         "uint32",         "uint64",
      "bool",          "complex32",      "complex64",   "complex128",     "float8_e4m3fn",  "float8_e4m3fnuz",
      "float8_e5m2",   "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "qint8",      "quint8",
      "qint32",        "quint4x2",       "quint2x4",    "bits1x8",        "bits2x4",        "bits4x2",
      "bits8",         "bits16"};
};
template <>
struct Vocabulary<Role> {
  static constexpr const char* field = "role";
  static constexpr std::array<std::string_view, 6> names{"input",     "parameter", "buffer",
                                                         "attribute", "constant",  "intermediate"};
};
template <>
struct Vocabulary<NodeKind> {
  static constexpr const char* field = "kind";
  static constexpr std::array<std::string_view, 3> names{"compute", "view", "inplace"};
};

// A field of one vocabulary: the enum value, which reads back as its name for messages and the
// Python and CUDA the brains write (`"dtype=torch." + t.dtype`). A name written in code
// (`t.role == "buffer"`) is looked up like a captured one, and a misspelt one throws at its first
// use rather than comparing unequal; new code compares with the enum (`t.role == Role::Buffer`).
template <class E>
class Named {
public:
  constexpr Named(E value = E{}) : value_(value) {}
  Named(const char* name) : value_(require(name)) {}
  Named(const std::string& name) : value_(require(name)) {}

  static std::optional<E> parse(std::string_view name) {
    const auto& names = Vocabulary<E>::names;
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return static_cast<E>(i);
    return std::nullopt;
  }
  // The accepted names, for a message that refuses another.
  static std::string known() {
    std::string s;
    for (std::string_view n : Vocabulary<E>::names) s += (s.empty() ? "" : ", ") + std::string(n);
    return s;
  }

  constexpr E value() const { return value_; }
  const std::string& name() const {
    static const auto all = [] {
      std::array<std::string, Vocabulary<E>::names.size()> s;
      for (std::size_t i = 0; i < s.size(); ++i) s[i] = std::string(Vocabulary<E>::names[i]);
      return s;
    }();
    return all[static_cast<std::size_t>(value_)];
  }
  operator const std::string&() const { return name(); }

  friend constexpr bool operator==(Named a, Named b) { return a.value_ == b.value_; }
  friend constexpr bool operator==(Named a, E b) { return a.value_ == b; }
  friend bool operator==(Named a, const char* b) { return a == Named(b); }
  friend std::string operator+(const std::string& a, Named b) { return a + b.name(); }
  friend std::string operator+(const char* a, Named b) { return a + b.name(); }
  friend std::string operator+(Named a, const std::string& b) { return a.name() + b; }
  friend std::string operator+(Named a, const char* b) { return a.name() + b; }
  friend std::ostream& operator<<(std::ostream& o, Named v) { return o << v.name(); }
  friend void to_json(nlohmann::json& j, Named v) { j = v.name(); }

private:
  static E require(std::string_view name) {
    if (auto e = parse(name)) return *e;
    throw std::invalid_argument("unknown " + std::string(Vocabulary<E>::field) + " '" + std::string(name) + "'");
  }
  E value_;
};

}  // namespace stitch::agents::ir
