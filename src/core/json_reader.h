// JsonReader: typed reads of a parsed nlohmann::json with the JSON path of every field, for the
// codecs of json_codec.h and their users (the worker protocol, the tuning-cache export). The
// first failure is kept as data (JsonFailure: path and what) and every later read returns a
// default, so that decoding reads as straight-line code and is checked once at the end. Nothing
// here throws.
//
// Two wordings, because two formats grew their own and tests and scripts pin both:
//   kProtocol (worker messages): "expected a 32-bit integer, it is missing", "unknown name 'x'"
//   kDocument (cache export):    "missing", "expected integer, got string", "unknown outcome 'x'"
// The caller puts the failure into its own Error (worker: "bad field '<path>'; <what>").
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace ktune {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

enum class JsonWording { kProtocol, kDocument };

// What a field should be, in both wordings: {"a string", "string"}.
struct JsonKind {
  std::string_view prose;
  std::string_view terse;
};
inline constexpr JsonKind kJsonObject{"an object", "object"};
inline constexpr JsonKind kJsonObjectOrNull{"an object or null", "object or null"};
inline constexpr JsonKind kJsonArray{"an array", "array"};
inline constexpr JsonKind kJsonString{"a string", "string"};
inline constexpr JsonKind kJsonBoolean{"a boolean", "boolean"};
inline constexpr JsonKind kJsonNumber{R"(a number (or "nan", "inf", "-inf"))", "number"};
inline constexpr JsonKind kJsonUnsigned{"an unsigned integer", "integer"};

// The first problem found: where ("records[0].stats.runs"; empty for the document itself) and
// what, in the reader's wording.
struct JsonFailure {
  std::string path;
  std::string what;
};

class JsonReader {
 public:
  explicit JsonReader(JsonWording wording) : wording_(wording) {}

  [[nodiscard]] bool ok() const { return !failure_; }
  [[nodiscard]] const std::optional<JsonFailure>& failure() const { return failure_; }

  // The member `key` of `obj`, whose path is `at`, checked to be of its kind; null (and the
  // failure) when `obj` is not an object, the member is missing or of another kind.
  const Json* member(const Json& obj, const std::string& at, std::string_view key,
                     const JsonKind& kind);
  const Json* object(const Json& obj, const std::string& at, std::string_view key);
  // Present and an object or null; null for JSON null too (no failure then).
  const Json* nullable_object(const Json& obj, const std::string& at, std::string_view key);
  const Json* array(const Json& obj, const std::string& at, std::string_view key);
  std::string str(const Json& obj, const std::string& at, std::string_view key);
  bool boolean(const Json& obj, const std::string& at, std::string_view key);
  double f64(const Json& obj, const std::string& at, std::string_view key);
  std::uint64_t u64(const Json& obj, const std::string& at, std::string_view key);
  std::int64_t integer(const Json& obj, const std::string& at, std::string_view key,
                       std::int64_t lo, std::int64_t hi);
  std::int64_t i64(const Json& obj, const std::string& at, std::string_view key) {
    return integer(obj, at, key, kI64Min, kI64Max);
  }
  int i32(const Json& obj, const std::string& at, std::string_view key) {
    return static_cast<int>(integer(obj, at, key, kI32Min, kI32Max));
  }

  // The same checks for a value itself, whose path is `at`.
  bool is_object(const Json& j, const std::string& at);
  double f64_value(const Json& j, const std::string& at);
  std::int64_t integer_value(const Json& j, const std::string& at, std::int64_t lo,
                             std::int64_t hi);

  // A name from a fixed set (an enum's): `parse` gives nullopt for an unknown one; `noun`
  // names the set in the document wording ("unknown outcome 'x'").
  template <class Enum, class Parse>
  Enum named(const Json& obj, const std::string& at, std::string_view key, std::string_view noun,
             Parse parse) {
    const std::string name = str(obj, at, key);
    if (!ok()) return Enum{};
    std::optional<Enum> v = parse(name);
    if (!v) fail_name(sub(at, key), noun, name);
    return v.value_or(Enum{});
  }

  // Failures, kept only when they are the first. fail_kind with `got` null: it is missing.
  void fail(const std::string& at, std::string what);
  void fail_kind(const std::string& at, const JsonKind& kind, const Json* got);
  void fail_name(const std::string& at, std::string_view noun, std::string_view name);

  // Present and not null.
  [[nodiscard]] static bool has(const Json& obj, std::string_view key);
  [[nodiscard]] static std::string sub(const std::string& at, std::string_view key);
  [[nodiscard]] static std::string index(const std::string& at, std::size_t i);

 private:
  static constexpr std::int64_t kI64Min = std::numeric_limits<std::int64_t>::min();
  static constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();
  static constexpr std::int64_t kI32Min = std::numeric_limits<int>::min();
  static constexpr std::int64_t kI32Max = std::numeric_limits<int>::max();

  JsonWording wording_;
  std::optional<JsonFailure> failure_;
};

// A double as JSON: NaN and the infinities, which JSON cannot hold, as "nan", "inf" and "-inf"
// (JsonReader::f64 takes them back).
[[nodiscard]] OrderedJson json_number(double v);

// `j` as text; bytes that are not UTF-8 (compiler messages) are replaced rather than thrown on.
[[nodiscard]] std::string json_dump(const Json& j, int indent = -1);
[[nodiscard]] std::string json_dump(const OrderedJson& j, int indent = -1);

}  // namespace ktune
