// The T4 results schema (the "Open Autotuning Results Schema" that Kernel Tuner and KTT write
// and read, schema_version 1.0.0): one tuning record's candidates as results, so that a space
// measured by ktune can be replayed by other tuners' simulation modes, and theirs by
// `ktune simulate`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ktune/cache/tuning_cache.h"
#include "ktune/core/status.h"

namespace ktune {

// One result per candidate: configuration (the params; numbers where the text is a number),
// times (runtimes in ms: the median, as samples are not stored; compilation_time in ms),
// invalidity (correct, compile, runtime, timeout, correctness, constraints from the outcome),
// correctness, objectives ["time"], and measurements (ktune's name, runs, min and max). Candidates
// never evaluated are left out.
[[nodiscard]] std::string export_t4(const TuningRecord& record);

// The results of a T4 document as candidate records (name, params, outcome, stats, compile_s);
// kParse naming the JSON path of what is not T4. A result without measurements of ktune's gets
// its configuration as name and its runtimes' median as time.
[[nodiscard]] Result<std::vector<CandidateRecord>> import_t4(std::string_view text);

}  // namespace ktune
