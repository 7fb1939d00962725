// export_json / import_json: the tuning cache as a portable JSON document, for moving tunings
// between machines and for review. The records' fields go through the shared codec
// (core/json_codec.h, bench/bench_json.h: outcomes, statistics), which the worker protocol uses
// too; nlohmann::json is the one adapter for JSON exceptions here, and every validation error
// names the JSON path of the offending field.
#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "bench/bench_json.h"
#include "cache/record_json.h"
#include "core/json_codec.h"
#include "ktune/cache/record_json.h"
#include "ktune/cache/tuning_cache.h"

namespace ktune {
namespace {

constexpr std::string_view kFormat = kRecordFormat;
constexpr std::int64_t kFormatVersion = kRecordVersion;

// The same place in the document parsed keeping the members' order (nlohmann::json sorts them):
// where the order of a candidate's params object is read. Null where the document has no such
// place (the two parses differ only in order, so that happens only for bad input).
const OrderedJson* ordered_member(const OrderedJson* o, std::string_view key) {
  if (o == nullptr || !o->is_object()) return nullptr;
  auto it = o->find(key);
  return it == o->end() ? nullptr : &*it;
}
const OrderedJson* ordered_item(const OrderedJson* o, std::size_t i) {
  if (o == nullptr || !o->is_array() || i >= o->size()) return nullptr;
  return &(*o)[i];
}

OrderedJson text_or_null(const std::string& s) {
  return s.empty() ? OrderedJson(nullptr) : OrderedJson(s);
}

// Absent or null: empty; else a string.
std::string optional_str(JsonReader& in, const Json& obj, const std::string& at,
                         std::string_view key) {
  return JsonReader::has(obj, key) ? in.str(obj, at, key) : std::string();
}

OrderedJson confidence_to_json(const PickConfidence& c) {
  return OrderedJson{{"runner_up", c.runner_up},
                     {"runner_up_ratio", json_number(c.runner_up_ratio)},
                     {"ratio_low", json_number(c.ratio_low)},
                     {"ratio_high", json_number(c.ratio_high)},
                     {"ratio_rounds", c.ratio_rounds},
                     {"spread", json_number(c.spread)},
                     {"others_load", json_number(c.others_load)},
                     {"cores", c.cores},
                     {"reverified", c.reverified},
                     {"trusted", c.trusted}};
}

PickConfidence read_confidence(JsonReader& in, const Json& c, const std::string& path) {
  PickConfidence out;
  out.runner_up = in.str(c, path, "runner_up");
  out.runner_up_ratio = in.f64(c, path, "runner_up_ratio");
  out.ratio_low = in.f64(c, path, "ratio_low");
  out.ratio_high = in.f64(c, path, "ratio_high");
  out.ratio_rounds = in.i32(c, path, "ratio_rounds");
  out.spread = in.f64(c, path, "spread");
  out.others_load = in.f64(c, path, "others_load");
  out.cores = in.i32(c, path, "cores");
  out.reverified = in.i32(c, path, "reverified");
  out.trusted = in.boolean(c, path, "trusted");
  return out;
}

OrderedJson settings_to_json(const MeasureSettings& s) {
  return OrderedJson{{"budget_ms", json_number(s.budget_ms)},
                     {"min_runs", s.min_runs},
                     {"max_runs", s.max_runs},
                     {"warmup_runs", s.warmup_runs},
                     {"flush_cache", s.flush_cache},
                     {"graph_calls", s.graph_calls},
                     {"decide_rounds", s.decide_rounds},
                     {"close_call_band", json_number(s.close_call_band)}};
}

MeasureSettings read_settings(JsonReader& in, const Json& s, const std::string& path) {
  MeasureSettings out;
  out.budget_ms = in.f64(s, path, "budget_ms");
  out.min_runs = in.i32(s, path, "min_runs");
  out.max_runs = in.i32(s, path, "max_runs");
  out.warmup_runs = in.i32(s, path, "warmup_runs");
  out.flush_cache = in.boolean(s, path, "flush_cache");
  out.graph_calls = in.i32(s, path, "graph_calls");
  out.decide_rounds = in.i32(s, path, "decide_rounds");
  out.close_call_band = in.f64(s, path, "close_call_band");
  return out;
}

OrderedJson candidate_to_json(const CandidateRecord& c) {
  OrderedJson out{{"choice_key", c.choice_key},
                  {"name", c.name},
                  {"info", c.info},
                  {"outcome", encode_json(c.outcome)},
                  {"message", c.message},
                  {"stats", c.stats ? encode_json(*c.stats) : OrderedJson(nullptr)},
                  {"compile_s", json_number(c.compile_s)}};
  // Only where there are some: exports of tunings without metrics stay as they were.
  if (!c.metrics.empty()) {
    OrderedJson metrics = OrderedJson::array();
    for (const MetricValue& m : c.metrics) {
      metrics.push_back({{"name", m.name}, {"value", json_number(m.value)}});
    }
    out["metrics"] = std::move(metrics);
  }
  // The parameters as an object, in the space's order ({} for library calls).
  out["params"] = params_to_json(c.params);
  out["artifact"] = text_or_null(c.artifact);
  return out;
}

OrderedJson key_to_json(const TuningKey& k) {
  return OrderedJson{
      {"op", k.op},         {"problem", k.problem},     {"candidate_set", k.candidate_set},
      {"device", k.device}, {"toolchain", k.toolchain}, {"version", k.version}};
}

TuningKey read_key(JsonReader& in, const Json& k, const std::string& at) {
  TuningKey out;
  out.op = in.str(k, at, "op");
  out.problem = in.str(k, at, "problem");
  out.candidate_set = in.str(k, at, "candidate_set");
  out.device = in.str(k, at, "device");
  out.toolchain = in.str(k, at, "toolchain");
  out.version = in.str(k, at, "version");
  return out;
}

// A candidate's params: an object (version 2, its order from `ordered`) or, in version 1
// documents, an array of {"name", "value"} strings; absent for library calls and in exports
// older than them.
void read_params(JsonReader& in, const Json& c, const OrderedJson* ordered, const std::string& path,
                 CandidateRecord& out) {
  if (!JsonReader::has(c, "params")) return;
  const Json& ps = c.at("params");
  const std::string at = JsonReader::sub(path, "params");
  if (ps.is_array()) {
    for (std::size_t i = 0; i < ps.size() && in.ok(); ++i) {
      const std::string item = JsonReader::index(at, i);
      if (!in.is_object(ps[i], item)) break;
      out.params.emplace_back(in.str(ps[i], item, "name"), in.str(ps[i], item, "value"));
    }
    return;
  }
  if (!ps.is_object()) {
    in.fail(at, fmt::format("expected an object, got {}", ps.type_name()));
    return;
  }
  // The names in the order written, then (should the two parses disagree) any others; a set, so
  // that an object of many members costs n log n, not n^2.
  std::vector<std::string> names;
  std::set<std::string> seen;
  if (const OrderedJson* o = ordered_member(ordered, "params"); o && o->is_object()) {
    for (const auto& [name, value] : o->items()) {
      if (ps.contains(name) && seen.insert(name).second) names.push_back(name);
    }
  }
  for (const auto& [name, value] : ps.items()) {
    if (seen.insert(name).second) names.push_back(name);
  }
  for (const std::string& name : names) {
    const Json& v = ps.at(name);
    if (!v.is_string() && !v.is_number()) {
      in.fail(JsonReader::sub(at, name),
              fmt::format("expected a string or a number, got {}", v.type_name()));
      return;
    }
    out.params.emplace_back(name, param_text(v));
  }
}

CandidateRecord read_candidate(JsonReader& in, const Json& c, const OrderedJson* ordered,
                               const std::string& path) {
  CandidateRecord out;
  out.choice_key = in.str(c, path, "choice_key");
  out.name = in.str(c, path, "name");
  out.info = in.str(c, path, "info");
  out.outcome = decode_outcome(in, c, path, "outcome");
  out.message = in.str(c, path, "message");
  // Present always, null when the candidate was not measured.
  if (const Json* stats = in.nullable_object(c, path, "stats")) {
    out.stats.emplace();
    decode_json(in, *stats, JsonReader::sub(path, "stats"), *out.stats);
  }
  out.compile_s = in.f64(c, path, "compile_s");
  // Absent where the tuning had no metrics (and in exports older than them).
  if (JsonReader::has(c, "metrics")) {
    if (const Json* ms = in.array(c, path, "metrics")) {
      const std::string at = JsonReader::sub(path, "metrics");
      for (std::size_t i = 0; i < ms->size() && in.ok(); ++i) {
        const std::string item = JsonReader::index(at, i);
        if (!in.is_object((*ms)[i], item)) break;
        out.metrics.push_back({in.str((*ms)[i], item, "name"), in.f64((*ms)[i], item, "value")});
      }
    }
  }
  if (in.ok()) read_params(in, c, ordered, path, out);
  out.artifact = optional_str(in, c, path, "artifact");  // absent before version 2
  return out;
}

// Exports written before candidate_count existed have none; their rows are still checked against
// the candidates asked for when a pick is read (lookup_checked).
TuningRecord read_record(JsonReader& in, const Json& r, const OrderedJson* ordered,
                         const std::string& path, std::optional<std::size_t>& count) {
  TuningRecord out;
  if (const Json* k = in.object(r, path, "key")) {
    out.key = read_key(in, *k, JsonReader::sub(path, "key"));
  }
  out.spec = optional_str(in, r, path, "spec");  // absent before version 2, null when unknown
  out.problem_name = optional_str(in, r, path, "problem_name");
  out.winner = in.str(r, path, "winner");
  out.created_unix = in.i64(r, path, "created_unix");
  out.compile_s = in.f64(r, path, "compile_s");
  out.bench_s = in.f64(r, path, "bench_s");
  if (r.contains("candidate_count")) {
    count = static_cast<std::size_t>(in.integer(r, path, "candidate_count", 0, 1 << 30));
  }
  // Absent from exports older than the field, null when it was not measured.
  if (JsonReader::has(r, "confidence")) {
    if (const Json* c = in.nullable_object(r, path, "confidence")) {
      out.confidence = read_confidence(in, *c, JsonReader::sub(path, "confidence"));
    }
  }
  if (JsonReader::has(r, "settings")) {
    if (const Json* s = in.nullable_object(r, path, "settings")) {
      out.settings = read_settings(in, *s, JsonReader::sub(path, "settings"));
    }
  }
  if (JsonReader::has(r, "stand_in")) out.stand_in = in.str(r, path, "stand_in");
  if (const Json* cs = in.array(r, path, "candidates")) {
    const OrderedJson* ocs = ordered_member(ordered, "candidates");
    for (std::size_t i = 0; i < cs->size() && in.ok(); ++i) {
      const std::string at = JsonReader::index(JsonReader::sub(path, "candidates"), i);
      if (!in.is_object((*cs)[i], at)) break;
      out.candidates.push_back(read_candidate(in, (*cs)[i], ordered_item(ocs, i), at));
    }
  }
  return out;
}

Result<std::vector<TuningRecord>> read_document(const Json& doc, const OrderedJson& ordered) {
  if (!doc.is_object()) {
    return make_error(
        ErrorCode::kParse,
        fmt::format("tuning cache JSON: expected an object, got {}", doc.type_name()));
  }
  JsonReader in(JsonWording::kDocument);
  const std::string format = in.str(doc, "", "format");
  if (in.ok() && format != kFormat) {
    in.fail("format", fmt::format("expected '{}', got '{}'", kFormat, format));
  }
  const std::int64_t version = in.i64(doc, "", "version");
  if (in.ok() && (version < 1 || version > kFormatVersion)) {
    in.fail("version",
            fmt::format("unsupported version {}; expected 1 to {}", version, kFormatVersion));
  }
  std::vector<TuningRecord> records;
  if (const Json* rs = in.array(doc, "", "records")) {
    const OrderedJson* ors = ordered_member(&ordered, "records");
    for (std::size_t i = 0; i < rs->size() && in.ok(); ++i) {
      const std::string at = JsonReader::index("records", i);
      if (!in.is_object((*rs)[i], at)) break;
      std::optional<std::size_t> count;
      records.push_back(read_record(in, (*rs)[i], ordered_item(ors, i), at, count));
      // Rows cut out of a document (by hand, or a truncated copy) make it inconsistent. Whether
      // a whole record may be served is check_record's question, asked where picks are read.
      if (in.ok() && count && *count != records.back().candidates.size()) {
        in.fail(JsonReader::sub(at, "candidates"),
                fmt::format("{} rows; candidate_count says {}", records.back().candidates.size(),
                            *count));
      }
    }
  }
  if (const auto& f = in.failure()) {
    return make_error(ErrorCode::kParse, fmt::format("{}: {}", f->path, f->what));
  }
  return records;
}

}  // namespace

OrderedJson record_to_json(const TuningRecord& r) {
  OrderedJson candidates = OrderedJson::array();
  for (const CandidateRecord& c : r.candidates) candidates.push_back(candidate_to_json(c));
  OrderedJson out = record_summary_json(r);
  // In the record's order: the summary's fields, then these.
  OrderedJson full;
  for (const auto& [name, value] : out.items()) {
    full[name] = value;
    if (name == "created_unix") {
      full["compile_s"] = json_number(r.compile_s);
      full["bench_s"] = json_number(r.bench_s);
    }
  }
  full["confidence"] = r.confidence ? confidence_to_json(*r.confidence) : OrderedJson(nullptr);
  full["settings"] = r.settings ? settings_to_json(*r.settings) : OrderedJson(nullptr);
  full["candidates"] = std::move(candidates);
  if (r.stand_in) full["stand_in"] = *r.stand_in;  // no reference: who stood in for one
  return full;
}

OrderedJson record_summary_json(const TuningRecord& r) {
  const TuningKey& k = r.key;
  // "digest" is for readers and `ktune cache show`; import recomputes it from the key.
  return OrderedJson{{"digest", k.digest()},
                     {"key", key_to_json(k)},
                     {"spec", text_or_null(r.spec)},
                     {"problem_name", text_or_null(r.problem_name)},
                     {"winner", r.winner},
                     {"created_unix", r.created_unix},
                     {"candidate_count", r.candidates.size()}};
}

OrderedJson params_to_json(const std::vector<std::pair<std::string, std::string>>& params) {
  OrderedJson out = OrderedJson::object();
  for (const auto& [name, text] : params) {
    // A number only when it reads back as the same text: nothing is lost or reformatted.
    const Json number = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (number.is_number() && !number.is_discarded() && number.dump() == text) {
      out[name] = OrderedJson::parse(text);
    } else {
      out[name] = text;
    }
  }
  return out;
}

std::string param_text(const Json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

std::string export_json(const std::vector<TuningRecord>& records) {
  OrderedJson list = OrderedJson::array();
  for (const TuningRecord& r : records) list.push_back(record_to_json(r));
  const OrderedJson doc{
      {"format", kFormat}, {"version", kFormatVersion}, {"records", std::move(list)}};
  // Compiler messages may hold bytes that are not UTF-8: json_dump replaces them.
  return json_dump(doc, 2) + "\n";
}

std::string partial_to_json(const PartialRow& row) {
  const OrderedJson doc{{"key", key_to_json(row.key)},
                        {"settings", settings_to_json(row.settings)},
                        {"candidate", candidate_to_json(row.candidate)}};
  return json_dump(doc, -1);
}

Result<PartialRow> partial_from_json(std::string_view text) {
  try {
    const Json doc = Json::parse(text);
    const OrderedJson ordered = OrderedJson::parse(text);
    JsonReader in(JsonWording::kDocument);
    PartialRow row;
    if (!in.is_object(doc, "")) return make_error(ErrorCode::kParse, "partial row: not an object");
    if (const Json* k = in.object(doc, "", "key")) row.key = read_key(in, *k, "key");
    if (const Json* s = in.object(doc, "", "settings")) {
      row.settings = read_settings(in, *s, "settings");
    }
    if (const Json* c = in.object(doc, "", "candidate")) {
      row.candidate = read_candidate(in, *c, ordered_member(&ordered, "candidate"), "candidate");
    }
    if (const auto& f = in.failure()) {
      return make_error(ErrorCode::kParse, fmt::format("partial row: {}: {}", f->path, f->what));
    }
    return row;
  } catch (const Json::exception& e) {
    return make_error(ErrorCode::kParse, fmt::format("partial row: {}", e.what()));
  }
}

std::string record_to_json_text(const TuningRecord& record) {
  return json_dump(record_to_json(record), -1);
}

Result<StoredRecord> record_from_json_text(std::string_view text) {
  try {
    // Parsed twice, as import_json does: the ordered parse keeps the params' order.
    const Json doc = Json::parse(text);
    const OrderedJson ordered = OrderedJson::parse(text);
    JsonReader in(JsonWording::kDocument);
    StoredRecord out;
    if (in.is_object(doc, "record")) {
      out.record = read_record(in, doc, &ordered, "record", out.stored_count);
    }
    if (const auto& f = in.failure()) {
      return make_error(ErrorCode::kParse, fmt::format("{}: {}", f->path, f->what));
    }
    return out;
  } catch (const Json::exception& e) {
    return make_error(ErrorCode::kParse, fmt::format("record: {}", e.what()));
  }
}

Result<std::vector<TuningRecord>> import_json(std::string_view text) {
  // The adapter: nothing from nlohmann escapes as an exception.
  try {
    // Parsed twice: JsonReader reads nlohmann::json, which sorts members; the ordered parse keeps
    // the order of each candidate's params object.
    return read_document(Json::parse(text), OrderedJson::parse(text));
  } catch (const Json::exception& e) {
    return make_error(ErrorCode::kParse, fmt::format("tuning cache JSON: {}", e.what()));
  }
}

}  // namespace ktune
