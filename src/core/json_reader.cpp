// JsonReader (json_reader.h): the typed, path-naming reads shared by every JSON codec.
#include "core/json_reader.h"

#include <fmt/format.h>

#include <cmath>
#include <utility>

namespace ktune {
namespace {

// An integer field's kind: what its range fits in.
JsonKind integer_kind(std::int64_t lo, std::int64_t hi) {
  const bool fits_int =
      lo >= std::numeric_limits<int>::min() && hi <= std::numeric_limits<int>::max();
  return {fits_int ? "a 32-bit integer" : "a 64-bit integer", "integer"};
}

}  // namespace

void JsonReader::fail(const std::string& at, std::string what) {
  if (!failure_) failure_ = JsonFailure{at, std::move(what)};
}

void JsonReader::fail_kind(const std::string& at, const JsonKind& kind, const Json* got) {
  if (failure_) return;
  if (wording_ == JsonWording::kDocument) {
    fail(at, got ? fmt::format("expected {}, got {}", kind.terse, got->type_name()) : "missing");
  } else {
    fail(at, fmt::format("expected {}, {}", kind.prose,
                         got ? fmt::format("got {}", got->type_name()) : "it is missing"));
  }
}

void JsonReader::fail_name(const std::string& at, std::string_view noun, std::string_view name) {
  fail(at, wording_ == JsonWording::kDocument ? fmt::format("unknown {} '{}'", noun, name)
                                              : fmt::format("unknown name '{}'", name));
}

bool JsonReader::has(const Json& obj, std::string_view key) {
  if (!obj.is_object()) return false;
  auto it = obj.find(key);
  return it != obj.end() && !it->is_null();
}

std::string JsonReader::sub(const std::string& at, std::string_view key) {
  return at.empty() ? std::string(key) : fmt::format("{}.{}", at, key);
}

std::string JsonReader::index(const std::string& at, std::size_t i) {
  return fmt::format("{}[{}]", at, i);
}

bool JsonReader::is_object(const Json& j, const std::string& at) {
  if (j.is_object()) return true;
  fail_kind(at, kJsonObject, &j);
  return false;
}

const Json* JsonReader::member(const Json& obj, const std::string& at, std::string_view key,
                               const JsonKind& kind) {
  if (!ok() || !is_object(obj, at)) return nullptr;
  auto it = obj.find(key);
  if (it == obj.end()) {
    fail_kind(sub(at, key), kind, nullptr);
    return nullptr;
  }
  return &*it;
}

const Json* JsonReader::object(const Json& obj, const std::string& at, std::string_view key) {
  const Json* j = member(obj, at, key, kJsonObject);
  if (j && !j->is_object()) return fail_kind(sub(at, key), kJsonObject, j), nullptr;
  return j;
}

const Json* JsonReader::nullable_object(const Json& obj, const std::string& at,
                                        std::string_view key) {
  const Json* j = member(obj, at, key, kJsonObjectOrNull);
  if (!j || j->is_null()) return nullptr;
  if (!j->is_object()) return fail_kind(sub(at, key), kJsonObjectOrNull, j), nullptr;
  return j;
}

const Json* JsonReader::array(const Json& obj, const std::string& at, std::string_view key) {
  const Json* j = member(obj, at, key, kJsonArray);
  if (j && !j->is_array()) return fail_kind(sub(at, key), kJsonArray, j), nullptr;
  return j;
}

std::string JsonReader::str(const Json& obj, const std::string& at, std::string_view key) {
  const Json* j = member(obj, at, key, kJsonString);
  if (!j) return {};
  if (!j->is_string()) return fail_kind(sub(at, key), kJsonString, j), std::string();
  return j->get<std::string>();
}

bool JsonReader::boolean(const Json& obj, const std::string& at, std::string_view key) {
  const Json* j = member(obj, at, key, kJsonBoolean);
  if (!j) return false;
  if (!j->is_boolean()) return fail_kind(sub(at, key), kJsonBoolean, j), false;
  return j->get<bool>();
}

double JsonReader::f64_value(const Json& j, const std::string& at) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
  }
  fail_kind(at, kJsonNumber, &j);
  return 0;
}

double JsonReader::f64(const Json& obj, const std::string& at, std::string_view key) {
  const Json* j = member(obj, at, key, kJsonNumber);
  return j ? f64_value(*j, sub(at, key)) : 0;
}

std::uint64_t JsonReader::u64(const Json& obj, const std::string& at, std::string_view key) {
  const Json* j = member(obj, at, key, kJsonUnsigned);
  if (!j) return 0;
  if (!j->is_number_unsigned()) return fail_kind(sub(at, key), kJsonUnsigned, j), 0;
  return j->get<std::uint64_t>();
}

std::int64_t JsonReader::integer_value(const Json& j, const std::string& at, std::int64_t lo,
                                       std::int64_t hi) {
  const JsonKind kind = integer_kind(lo, hi);
  if (!j.is_number_integer()) return fail_kind(at, kind, &j), 0;
  const bool too_big =
      j.is_number_unsigned() && j.get<std::uint64_t>() > static_cast<std::uint64_t>(hi);
  const std::int64_t v = too_big ? hi : j.get<std::int64_t>();
  if (!too_big && v >= lo && v <= hi) return v;
  if (wording_ == JsonWording::kDocument) {
    fail(at, fmt::format("{} out of range; expected {} to {}", j.dump(), lo, hi));
  } else if ((lo == kI32Min && hi == kI32Max) || (lo == kI64Min && hi == kI64Max)) {
    fail(at, fmt::format("expected {}, got {}", kind.prose, j.dump()));
  } else {
    fail(at, fmt::format("expected an integer from {} to {}, got {}", lo, hi, j.dump()));
  }
  return 0;
}

std::int64_t JsonReader::integer(const Json& obj, const std::string& at, std::string_view key,
                                 std::int64_t lo, std::int64_t hi) {
  const Json* j = member(obj, at, key, integer_kind(lo, hi));
  return j ? integer_value(*j, sub(at, key), lo, hi) : 0;
}

OrderedJson json_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

std::string json_dump(const Json& j, int indent) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

std::string json_dump(const OrderedJson& j, int indent) {
  return j.dump(indent, ' ', false, OrderedJson::error_handler_t::replace);
}

}  // namespace ktune
