// The JSON codec of the measurement types that cross the worker protocol and the tuning-cache
// export (BenchStats, BenchOptions; a Tolerance's is core/json_codec.h's), on the pattern of
// core/json_codec.h: members in the order written here, doubles through json_number (NaN and
// infinities as strings), decoding through a JsonReader that names the bad field's path.
#pragma once

#include <string>

#include "core/json_codec.h"
#include "core/json_reader.h"
#include "ktune/bench/bench_options.h"
#include "ktune/bench/bench_stats.h"

namespace ktune {

// {"median_ns","min_ns","max_ns","mad_ns","runs"}; runs from 0 to INT_MAX.
[[nodiscard]] OrderedJson encode_json(const BenchStats& s);
// {"warmup_runs","budget_ms","min_runs","max_runs","flush_cache","flush_bytes","graph_calls"}.
[[nodiscard]] OrderedJson encode_json(const BenchOptions& b);

void decode_json(JsonReader& r, const Json& j, const std::string& at, BenchStats& s);
void decode_json(JsonReader& r, const Json& j, const std::string& at, BenchOptions& b);

}  // namespace ktune
