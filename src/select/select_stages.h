// The stages of Selector::select, each a function over one selection's state: lookup, compile,
// run, settle close calls, pick, record, report. select_with() is the script that chains them;
// Selector::select calls it with the real runner, the unit tests with a fake one.
//
// Bookkeeping: the records are in candidate order, and a candidate is alive while its record's
// outcome is ok. A candidate that fails a stage keeps that stage's outcome and message, and later
// stages skip it.
#pragma once

#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "ktune/backend/backend.h"
#include "ktune/cache/tuning_cache.h"
#include "ktune/choice/choice.h"
#include "ktune/core/problem.h"
#include "ktune/core/status.h"
#include "ktune/select/selector.h"
#include "select/stage_runner.h"

namespace ktune {

class JsonLog;  // select/json_log.h

// What every stage of one selection reads.
struct SelectContext {
  const Problem& problem;
  std::vector<ChoicePtr>& candidates;
  const SelectorOptions& options;
  std::string title;  // "op(problem)": the table's title and the prefix of progress lines
};

[[nodiscard]] std::string selection_title(const Problem& problem);

// "ktune: <line>" on `f` (null: nothing).
void select_progress(std::FILE* f, const std::string& line);

// lookup: the cached selection under `key`, when its winner is still among the candidates (a
// record whose winner is gone is ignored, and tuning runs).
[[nodiscard]] Result<std::optional<Selection>> lookup_stage(
    TuningCache& cache, const TuningKey& key, const std::vector<ChoicePtr>& candidates);

// The candidates' records before compiling: identity filled in, kUnsupported for a candidate
// that cannot take the problem.
[[nodiscard]] std::vector<CandidateRecord> initial_records(const SelectContext& ctx);

// compile: every alive candidate and the reference, in parallel on options.jobs threads. A
// candidate that fails gets kCompileError; a reference that fails ends the selection
// (kInvalidArgument). Each task writes only its own record, read after the pool is idle.
[[nodiscard]] Status compile_stage(const SelectContext& ctx, const Backend& backend,
                                   Choice* reference, std::vector<CandidateRecord>& records);

// run: verifies each alive candidate, one at a time (they share the machine), and with
// `measure` measures it.
void run_stage(const SelectContext& ctx, StageRunner& runner, bool measure,
               std::vector<CandidateRecord>& records);

// The alive candidates whose median is within options.close_call_band of the best; empty when
// fewer than two are.
[[nodiscard]] std::vector<std::size_t> close_calls(const std::vector<CandidateRecord>& records,
                                                   double band);

// settle close calls: the close calls measured again, alternating, so that a drift of the
// machine cannot decide; their statistics replaced by the re-measured ones. When re-measuring
// fails, the first measurements stand. Returns the indices re-measured.
std::vector<std::size_t> settle_stage(const SelectContext& ctx, StageRunner& runner,
                                      std::vector<CandidateRecord>& records);

// pick: the alive candidate with the smallest median; ties go to the earlier candidate, so the
// pick is deterministic for a given candidate list. kNoValidChoice, with a summary of the
// outcomes and the first failure, when none is alive.
[[nodiscard]] Result<std::size_t> pick_stage(const std::vector<CandidateRecord>& records);

// record: the winner and the time into the record, stored in the cache with options.write_cache.
[[nodiscard]] Status record_stage(const SelectorOptions& options, TuningCache& cache,
                                  Selection& selection);

// report: the AUTOTUNE table and the pick on options.out, the selection in the JSON log.
void report_stage(const SelectContext& ctx, const Selection& selection, JsonLog& log);

// The whole selection: lookup, then compile, run, settle, pick, record and report, the
// candidates reached through `runner` once compiled.
[[nodiscard]] Result<Selection> select_with(const SelectContext& ctx, const Backend& backend,
                                            TuningCache& cache, const TuningKey& key,
                                            Choice* reference, StageRunner& runner);

}  // namespace ktune
