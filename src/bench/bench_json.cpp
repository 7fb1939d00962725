// The JSON codec of the measurement types (bench_json.h).
#include "bench/bench_json.h"

#include <cstdint>
#include <limits>

namespace ktune {

OrderedJson encode_json(const BenchStats& s) {
  return {{"median_ns", json_number(s.median_ns)},
          {"min_ns", json_number(s.min_ns)},
          {"max_ns", json_number(s.max_ns)},
          {"mad_ns", json_number(s.mad_ns)},
          {"runs", s.runs}};
}

void decode_json(JsonReader& r, const Json& j, const std::string& at, BenchStats& s) {
  s.median_ns = r.f64(j, at, "median_ns");
  s.min_ns = r.f64(j, at, "min_ns");
  s.max_ns = r.f64(j, at, "max_ns");
  s.mad_ns = r.f64(j, at, "mad_ns");
  s.runs = static_cast<int>(r.integer(j, at, "runs", 0, std::numeric_limits<int>::max()));
}

OrderedJson encode_json(const BenchOptions& b) {
  return {{"warmup_runs", b.warmup_runs}, {"budget_ms", json_number(b.budget_ms)},
          {"min_runs", b.min_runs},       {"max_runs", b.max_runs},
          {"flush_cache", b.flush_cache}, {"flush_bytes", std::uint64_t(b.flush_bytes)},
          {"graph_calls", b.graph_calls}};
}

void decode_json(JsonReader& r, const Json& j, const std::string& at, BenchOptions& b) {
  b.warmup_runs = r.i32(j, at, "warmup_runs");
  b.budget_ms = r.f64(j, at, "budget_ms");
  b.min_runs = r.i32(j, at, "min_runs");
  b.max_runs = r.i32(j, at, "max_runs");
  b.flush_cache = r.boolean(j, at, "flush_cache");
  b.flush_bytes = static_cast<std::size_t>(r.u64(j, at, "flush_bytes"));
  b.graph_calls = r.i32(j, at, "graph_calls");
}

}  // namespace ktune
