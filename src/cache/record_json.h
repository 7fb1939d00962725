// The tuning record's JSON layout (docs/json.md), in one place: `ktune cache export` and import,
// the partial rows of the stores, and the CLI's --json documents (`ktune tune --json`, `ktune
// gemm --json`, `ktune cache list|show --json`) all encode records here. Private to ktune.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/json_reader.h"
#include "ktune/cache/tuning_cache.h"

namespace ktune {

// The document format and version of export_json; --json documents that embed records carry
// this version as "record_version".
inline constexpr std::string_view kRecordFormat = "ktune-tuning-cache";
inline constexpr std::int64_t kRecordVersion = 2;

// Every field of the record: "digest", "key", "spec", "problem_name", "winner", "created_unix",
// "compile_s", "bench_s", "candidate_count", "confidence", "settings", "candidates" (each with
// "params" as an object), "stand_in" when set.
[[nodiscard]] OrderedJson record_to_json(const TuningRecord& r);
// What `ktune cache list --json` lists: the same fields and layout without "compile_s",
// "bench_s", "confidence", "settings" and "candidates".
[[nodiscard]] OrderedJson record_summary_json(const TuningRecord& r);

// A candidate's parameters as an object in the space's order, each value a JSON number where
// the text is one exactly as JSON writes it back ("128", "0.5", "-3"), else the text ("007",
// "1e3", "true" stay strings), so that reading it back gives the same text.
[[nodiscard]] OrderedJson params_to_json(const std::vector<std::pair<std::string, std::string>>& p);
// A parameter value of such an object back to the text it was written from.
[[nodiscard]] std::string param_text(const Json& value);

}  // namespace ktune
