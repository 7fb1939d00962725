// export_json / import_json: the tuning cache as a portable JSON document, for moving tunings
// between machines and for review. nlohmann::json is the one adapter for JSON exceptions here;
// every validation error names the JSON path of the offending field.
#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "ktune/cache/tuning_cache.h"

namespace ktune {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

constexpr std::string_view kFormat = "ktune-tuning-cache";
constexpr std::int64_t kFormatVersion = 1;

ordered_json stats_to_json(const std::optional<BenchStats>& stats) {
  if (!stats) return nullptr;
  return ordered_json{{"median_ns", stats->median_ns},
                      {"min_ns", stats->min_ns},
                      {"max_ns", stats->max_ns},
                      {"mad_ns", stats->mad_ns},
                      {"runs", stats->runs}};
}

ordered_json record_to_json(const TuningRecord& r) {
  ordered_json candidates = ordered_json::array();
  for (const CandidateRecord& c : r.candidates) {
    candidates.push_back({{"choice_key", c.choice_key},
                          {"name", c.name},
                          {"info", c.info},
                          {"outcome", outcome_name(c.outcome)},
                          {"message", c.message},
                          {"stats", stats_to_json(c.stats)},
                          {"compile_s", c.compile_s}});
  }
  const TuningKey& k = r.key;
  // "digest" is for readers and `ktune cache show`; import recomputes it from the key.
  return ordered_json{{"digest", k.digest()},
                      {"key",
                       {{"op", k.op},
                        {"problem", k.problem},
                        {"candidate_set", k.candidate_set},
                        {"device", k.device},
                        {"toolchain", k.toolchain},
                        {"version", k.version}}},
                      {"winner", r.winner},
                      {"created_unix", r.created_unix},
                      {"compile_s", r.compile_s},
                      {"bench_s", r.bench_s},
                      {"candidates", std::move(candidates)}};
}

// Reads typed fields, remembering the first failure with its JSON path. After a failure every
// read returns a default, so the conversion below reads straight through and checks once.
class Reader {
 public:
  [[nodiscard]] const json* field(const json& obj, std::string_view name, const std::string& path,
                                  json::value_t type) {
    if (error_) return nullptr;
    const std::string at = join(path, name);
    auto it = obj.find(name);
    if (it == obj.end()) {
      fail(at, "missing");
      return nullptr;
    }
    const bool ok = type == json::value_t::number_float     ? it->is_number()
                    : type == json::value_t::number_integer ? it->is_number_integer()
                                                            : it->type() == type;
    if (!ok) {
      fail(at, fmt::format("expected {}, got {}", type_name(type), it->type_name()));
      return nullptr;
    }
    return &*it;
  }

  std::string str(const json& obj, std::string_view name, const std::string& path) {
    const json* v = field(obj, name, path, json::value_t::string);
    return v != nullptr ? v->get<std::string>() : std::string();
  }
  double num(const json& obj, std::string_view name, const std::string& path) {
    const json* v = field(obj, name, path, json::value_t::number_float);
    return v != nullptr ? v->get<double>() : 0.0;
  }
  std::int64_t integer(const json& obj, std::string_view name, const std::string& path,
                       std::int64_t lo, std::int64_t hi) {
    const json* v = field(obj, name, path, json::value_t::number_integer);
    if (v == nullptr) return 0;
    const bool too_big =
        v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(hi);
    const std::int64_t value = too_big ? hi : v->get<std::int64_t>();
    if (too_big || value < lo || value > hi) {
      fail(join(path, name), fmt::format("{} out of range; expected {} to {}", v->dump(), lo, hi));
      return 0;
    }
    return value;
  }

  void fail(const std::string& path, std::string_view what) {
    if (!error_) error_ = Error{ErrorCode::kParse, fmt::format("{}: {}", path, what)};
  }
  [[nodiscard]] const std::optional<Error>& error() const { return error_; }

  static std::string join(const std::string& path, std::string_view name) {
    return path.empty() ? std::string(name) : fmt::format("{}.{}", path, name);
  }

 private:
  static std::string_view type_name(json::value_t type) {
    switch (type) {
      case json::value_t::object:
        return "object";
      case json::value_t::array:
        return "array";
      case json::value_t::string:
        return "string";
      case json::value_t::number_integer:
        return "integer";
      default:
        return "number";
    }
  }

  std::optional<Error> error_;
};

constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

std::optional<BenchStats> read_stats(Reader& in, const json& c, const std::string& path) {
  const std::string at = Reader::join(path, "stats");
  auto it = c.find("stats");
  if (it == c.end()) {
    in.fail(at, "missing");
    return std::nullopt;
  }
  if (it->is_null()) return std::nullopt;
  if (!it->is_object()) {
    in.fail(at, fmt::format("expected object or null, got {}", it->type_name()));
    return std::nullopt;
  }
  BenchStats s;
  s.median_ns = in.num(*it, "median_ns", at);
  s.min_ns = in.num(*it, "min_ns", at);
  s.max_ns = in.num(*it, "max_ns", at);
  s.mad_ns = in.num(*it, "mad_ns", at);
  s.runs = static_cast<int>(in.integer(*it, "runs", at, 0, std::numeric_limits<int>::max()));
  return s;
}

CandidateRecord read_candidate(Reader& in, const json& c, const std::string& path) {
  CandidateRecord out;
  out.choice_key = in.str(c, "choice_key", path);
  out.name = in.str(c, "name", path);
  out.info = in.str(c, "info", path);
  const std::string outcome = in.str(c, "outcome", path);
  if (!in.error()) {
    auto parsed = parse_outcome(outcome);
    if (parsed) {
      out.outcome = *parsed;
    } else {
      in.fail(Reader::join(path, "outcome"), fmt::format("unknown outcome '{}'", outcome));
    }
  }
  out.message = in.str(c, "message", path);
  out.stats = read_stats(in, c, path);
  out.compile_s = in.num(c, "compile_s", path);
  return out;
}

TuningRecord read_record(Reader& in, const json& r, const std::string& path) {
  TuningRecord out;
  if (const json* k = in.field(r, "key", path, json::value_t::object)) {
    const std::string at = Reader::join(path, "key");
    out.key.op = in.str(*k, "op", at);
    out.key.problem = in.str(*k, "problem", at);
    out.key.candidate_set = in.str(*k, "candidate_set", at);
    out.key.device = in.str(*k, "device", at);
    out.key.toolchain = in.str(*k, "toolchain", at);
    out.key.version = in.str(*k, "version", at);
  }
  out.winner = in.str(r, "winner", path);
  out.created_unix = in.integer(r, "created_unix", path, kInt64Min, kInt64Max);
  out.compile_s = in.num(r, "compile_s", path);
  out.bench_s = in.num(r, "bench_s", path);
  if (const json* cs = in.field(r, "candidates", path, json::value_t::array)) {
    for (std::size_t i = 0; i < cs->size() && !in.error(); ++i) {
      const std::string at = fmt::format("{}.candidates[{}]", path, i);
      const json& c = (*cs)[i];
      if (!c.is_object()) {
        in.fail(at, fmt::format("expected object, got {}", c.type_name()));
        break;
      }
      out.candidates.push_back(read_candidate(in, c, at));
    }
  }
  return out;
}

Result<std::vector<TuningRecord>> read_document(const json& doc) {
  Reader in;
  if (!doc.is_object()) {
    return make_error(
        ErrorCode::kParse,
        fmt::format("tuning cache JSON: expected an object, got {}", doc.type_name()));
  }
  const std::string format = in.str(doc, "format", "");
  if (!in.error() && format != kFormat) {
    in.fail("format", fmt::format("expected '{}', got '{}'", kFormat, format));
  }
  const std::int64_t version = in.integer(doc, "version", "", kInt64Min, kInt64Max);
  if (!in.error() && version != kFormatVersion) {
    in.fail("version", fmt::format("unsupported version {}; expected {}", version, kFormatVersion));
  }
  std::vector<TuningRecord> records;
  if (const json* rs = in.field(doc, "records", "", json::value_t::array)) {
    for (std::size_t i = 0; i < rs->size() && !in.error(); ++i) {
      const std::string at = fmt::format("records[{}]", i);
      const json& r = (*rs)[i];
      if (!r.is_object()) {
        in.fail(at, fmt::format("expected object, got {}", r.type_name()));
        break;
      }
      records.push_back(read_record(in, r, at));
    }
  }
  if (in.error()) return std::unexpected(*in.error());
  return records;
}

}  // namespace

std::string export_json(const std::vector<TuningRecord>& records) {
  ordered_json list = ordered_json::array();
  for (const TuningRecord& r : records) list.push_back(record_to_json(r));
  const ordered_json doc{
      {"format", kFormat}, {"version", kFormatVersion}, {"records", std::move(list)}};
  // Compiler messages may hold bytes that are not UTF-8; replace them rather than throw.
  return doc.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

Result<std::vector<TuningRecord>> import_json(std::string_view text) {
  // The adapter: nothing from nlohmann escapes as an exception.
  try {
    return read_document(json::parse(text));
  } catch (const json::exception& e) {
    return make_error(ErrorCode::kParse, fmt::format("tuning cache JSON: {}", e.what()));
  }
}

}  // namespace ktune
