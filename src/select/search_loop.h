// The search stage of a selection: the compile and run stages driven by a search strategy
// (ktune/search/strategy.h) and a budget, in place of compiling and measuring every candidate.
//
// The strategy proposes a batch (about options.jobs candidates; every candidate at once when the
// search is exhaustive and unbudgeted, so that that selection runs exactly as it always did),
// the batch is compiled in parallel and each candidate verified and measured, one at a time, and
// the strategy learns each one's median (or its failure); until the strategy has nothing more
// to propose, max_evals candidates were evaluated (a candidate that failed to compile counts),
// or time_limit_s has passed (checked between candidates: the one running finishes). Candidates
// never evaluated end as kNotEvaluated, and are never the pick.
//
// Overlap: with `overlap`, measuring starts as soon as the first candidate of a batch is
// compiled (compile tasks hand finished candidates to the measuring thread, which takes them in
// completion order; in candidate order when there is no reference, so that the stand-in is the
// same candidate as without overlap), and library choices, which compile in no time, are
// compiled and measured first. The Selector asks for it on devices only: on the CPU backend the
// compilers would share the cores that the measured kernels run on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ktune/core/status.h"
#include "select/select_stages.h"

namespace ktune {

struct SearchRun {
  std::string strategy;                    // as resolved (never "auto")
  std::optional<std::uint64_t> max_evals;  // as resolved
  std::size_t evaluated = 0;  // candidates compiled and, when they compiled, verified/measured
  std::size_t candidates = 0;
  bool out_of_time = false;  // time_limit_s stopped the search
  double compile_s = 0;      // wall time of the compile batches (with overlap: until the last
                             // compile of each batch finished)
  double measure_s = 0;      // wall time of verifying and measuring the batches
  // Decide rounds measured while the search waited on compiles (speculative_decide.h), for the
  // decide stage to go on from; nullopt: none.
  std::optional<DecideRounds> decided_ahead;
};

// Compiles, verifies and measures what the strategy of ctx.options.search proposes (the
// reference compiled with the first batch and prepared before any candidate runs); marks the
// candidates it did not evaluate kNotEvaluated. Fails with the reference's failure, or with
// kInvalidArgument for an unknown strategy.
//
// Resume: `resumed` (per candidate, or empty) flags the candidates an interrupted run of this
// selection evaluated, their records in place. They count against max_evals from the start and
// are neither compiled nor run; when the strategy proposes one, it is told the kept outcome.
// A strategy proposes from its seed and what it was told, so with the same seed and budget it
// walks back to where the interrupted run was without measuring, then goes on (telling it the
// kept outcomes up front instead would not stop it proposing them: observe() does not mark a
// candidate proposed).
[[nodiscard]] Result<SearchRun> search_stage(const SelectContext& ctx, const Backend& backend,
                                             Choice* reference, StageRunner& runner,
                                             std::vector<CandidateRecord>& records,
                                             std::optional<std::string>* stand_in, bool overlap,
                                             const std::vector<char>& resumed = {});

// Whether a stored record answers a request with these search options: a record with candidates
// left unevaluated (a budgeted search) never answers one that asks for every candidate
// (exhaustive, no budget), which would otherwise be served a pick from a sample; any whole
// record answers any request, and a budgeted record answers any budgeted request (the strategy
// that sampled is in its rows' messages, for the table of the hit to show).
[[nodiscard]] bool record_answers(const TuningRecord& record, const SearchOptions& search);

// "not measured: outside the search budget (strategy S, N of M evaluated)".
[[nodiscard]] std::string not_evaluated_message(const SearchRun& run);

}  // namespace ktune
