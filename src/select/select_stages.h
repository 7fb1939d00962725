// The stages of Selector::select, each a function over one selection's state: lookup, compile,
// run, decide (re-measure the deciding candidates), pick, re-verify the pick, record, report.
// select_with() is the script that chains them; Selector::select calls it with the real runner, the
// unit tests with a fake one.
//
// Bookkeeping: the records are in candidate order, and a candidate is alive while its record's
// outcome is ok. A candidate that fails a stage keeps that stage's outcome and message, and later
// stages skip it.
#pragma once

#include <cstddef>
#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ktune/backend/backend.h"
#include "ktune/cache/tuning_cache.h"
#include "ktune/choice/choice.h"
#include "ktune/core/problem.h"
#include "ktune/core/status.h"
#include "ktune/select/selector.h"
#include "select/progress_line.h"
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

// compile_stage over the candidates `subset` only (the batch a search strategy proposed): its
// progress counts those.
[[nodiscard]] Status compile_subset(const SelectContext& ctx, const Backend& backend,
                                    Choice* reference, std::vector<CandidateRecord>& records,
                                    const std::vector<std::size_t>& subset);

// One compile task: candidate i compiled, kCompileError and the message into `record` when it
// fails; false then. Writes only `record`.
bool compile_candidate(const SelectContext& ctx, const Backend& backend, std::size_t i,
                       CandidateRecord& record);

// ok, or the kInvalidArgument that ends a selection whose reference does not compile.
[[nodiscard]] Status reference_compile_status(const SelectContext& ctx, const Choice& reference,
                                              const Status& compiled);

// The run stage one candidate at a time, with one progress line over `total` candidates: what
// run_stage does for each, for callers that pick the order themselves (the search loop).
class RunOne {
 public:
  RunOne(const SelectContext& ctx, StageRunner& runner, bool measure,
         std::vector<CandidateRecord>& records, std::optional<std::string>* stand_in,
         std::size_t total);
  // Verifies (and measures) alive candidate i on the first device; false when it failed (its
  // record says how). Without a reference, the first candidate to pass stands in for it. One
  // thread at a time, and not while run_on() is under way.
  bool run(std::size_t i);
  // run(i) on device `device` of the runner, for spread_over_devices: thread-safe across
  // devices; a stand-in must have been found already (or there is a reference).
  bool run_on(std::size_t device, std::size_t i);
  // Whether a candidate must still stand in for the missing reference (run() finds it).
  [[nodiscard]] bool needs_stand_in() const { return stand_in_ && !*stand_in_; }

 private:
  bool finish(std::size_t i, CandidateRun r);  // the record and the progress line; lock held

  const SelectContext& ctx_;
  StageRunner& runner_;
  bool measure_;
  std::vector<CandidateRecord>& records_;
  std::optional<std::string>* stand_in_;
  ProgressLine progress_;
  double best_ns_ = 0;
  std::mutex mu_;  // records_, best_ns_ and progress_ under run_on() from several threads
};

// Candidates run on every device of `one`'s runner at once (StageRunner::devices()), each device
// taking the next one `next` hands out (nullopt: none left) as soon as it is idle; those it
// takes while a stand-in for a missing reference is still needed run first, in turn, on the
// first device. `stop` (checked before each candidate is taken, under the handing out's lock)
// ends it early. The indices run, in the order they were taken.
[[nodiscard]] std::vector<std::size_t> spread_over_devices(
    RunOne& one, std::size_t devices, const std::function<std::optional<std::size_t>()>& next,
    const std::function<bool()>& stop);

// run: verifies each alive candidate, one at a time (they share the machine), and with
// `measure` measures it. `stand_in` non-null: there is no reference, and the first candidate
// that passes (the checks that need none) becomes the stand-in (StageRunner::adopt_stand_in),
// its name into *stand_in; every later candidate is compared with its outputs.
void run_stage(const SelectContext& ctx, StageRunner& runner, bool measure,
               std::vector<CandidateRecord>& records,
               std::optional<std::string>* stand_in = nullptr);

// The deciding candidates (SelectorOptions::close_call_band): alive ones whose first median or
// fastest run is within `band` of the best median, the fastest `max` by median; empty when fewer
// than two are.
[[nodiscard]] std::vector<std::size_t> deciding_candidates(
    const std::vector<CandidateRecord>& records, double band, int max);
// The same among the candidates `among` only (the others' records are not read).
[[nodiscard]] std::vector<std::size_t> deciding_among(const std::vector<CandidateRecord>& records,
                                                      const std::vector<std::size_t>& among,
                                                      double band, int max);

// Other processes' CPU use from the start of measuring (StageRunner::cpu_clock).
struct LoadWatch {
  std::optional<CpuClock> start;
  int cores = 1;
  // Cores' worth used by others since `start`; -1 when unknown (no clock, or under half a
  // second since `start`).
  [[nodiscard]] double others(StageRunner& runner) const;
};

// What the decide stage measured: each finalist's round medians (round order; one dropped early
// has fewer), and which dropped out as significantly slower than the leader.
struct Decision {
  std::vector<std::size_t> finalists;  // record indices
  std::vector<std::vector<double>> rounds_ns;
  std::vector<bool> dropped;
  int rounds = 0;
  bool noisy = false;                 // the rounds went past close_call_rounds because of noise
  std::optional<std::size_t> leader;  // the record the rounds decided for
  // 0: the leader, 1: another finalist still in contention, 2: one that dropped out, 3: any
  // other candidate. The pick takes the lowest tier first, so that the rounds' decision stands
  // and first medians never compete with re-measured ones.
  [[nodiscard]] int tier(std::size_t record) const;
  // Paired round ratios a/b (their common rounds); empty unless both are finalists.
  [[nodiscard]] std::vector<double> ratios(std::size_t a, std::size_t b) const;
};

// The decide stage's rounds: what it carries from one batch of rounds to the next, and what
// rounds measured before it (SpeculativeDecide) hand to it. A finalist's entry for a round it sat
// out (it dropped out before, or joined after) is 0; rounds pair only where both took part.
struct DecideRounds {
  Decision d;                           // d.rounds: rounds measured, by anyone
  std::vector<std::size_t> contenders;  // into d.finalists: those not dropped
  bool resolved = false;                // the last judgement left no contender that may be faster
  explicit DecideRounds(std::vector<std::size_t> finalists = {});
  // After a batch of rounds: a contender significantly slower than the leader (the sign test's
  // interval of its paired round ratios above 1) drops out; resolved once none left may be more
  // than `resolution` faster than the leader. The leader, an index into d.finalists.
  std::size_t judge(double resolution);
  // Rounds the least measured contender took part in.
  [[nodiscard]] int least_rounds() const;
  // Rounds of the contenders appended: medians[k] for contenders[k], the same count for each.
  void add(const std::vector<std::vector<double>>& medians);
  // These rounds for other finalists: one measured here keeps its rounds (and stays out if it
  // dropped out), a new one sat them out, and those no longer finalists are left. Resolved as
  // these were when the finalists are the same (in any order); else only after the next
  // judgement.
  [[nodiscard]] DecideRounds carried_to(const std::vector<std::size_t>& finalists) const;
};

// How each decide round measures a candidate (SelectorOptions::decide_round_runs).
[[nodiscard]] BenchOptions decide_round_bench(const SelectorOptions& o);
// Rounds between two judgements (SelectorOptions::decide_batch, within 1..close_call_rounds).
[[nodiscard]] int decide_batch_rounds(const SelectorOptions& o);

// decide: the deciding candidates measured again in alternating rounds (SelectorOptions says
// how many and when it stops), so that neither a drift of the machine nor a stall in one
// measurement can decide; their statistics replaced by those of their round medians. When
// re-measuring fails before the first batch, the first measurements stand.
//
// `seed`: rounds measured before the stage (SpeculativeDecide, while the search waited on
// compiles), carried to the finalists the stage finds (DecideRounds::carried_to); the stage goes
// on from them. Rounds are counted for the least measured contender.
Decision decide_stage(const SelectContext& ctx, StageRunner& runner,
                      std::vector<CandidateRecord>& records, const LoadWatch& load,
                      const DecideRounds* seed = nullptr);

// pick: the alive candidate of the lowest tier (decision null: all one tier) with the smallest
// median; ties go to the earlier candidate, so the pick is deterministic for a given candidate
// list. kNoValidChoice, with a summary of the outcomes and the first failure, when none is alive.
[[nodiscard]] Result<std::size_t> pick_stage(const std::vector<CandidateRecord>& records,
                                             const Decision* decision = nullptr);

// reverify: the pick verified again options.reverify_runs times (verify-only requests); a pick
// that fails is marked with that outcome and the next pick is verified alike. The pick that
// passed, or kNoValidChoice.
[[nodiscard]] Result<std::size_t> reverify_stage(const SelectContext& ctx, StageRunner& runner,
                                                 std::vector<CandidateRecord>& records,
                                                 const Decision& decision);

// The pick's confidence (ktune/cache/tuning_cache.h): runner-up and ratio, spread, load, and
// whether it can be trusted under the options' thresholds.
[[nodiscard]] PickConfidence pick_confidence(const SelectContext& ctx,
                                             const std::vector<CandidateRecord>& records,
                                             const Decision& decision, std::size_t winner,
                                             double others_load, int cores);

// The warning printed for an untrusted pick: the numbers that make it so.
[[nodiscard]] std::string untrusted_warning(const std::string& title, const PickConfidence& c);

// record: the winner and the time into the record, stored in the cache with options.write_cache.
[[nodiscard]] Status record_stage(const SelectorOptions& options, TuningCache& cache,
                                  Selection& selection);

// report: the AUTOTUNE table and the pick on options.out, the selection in the JSON log.
void report_stage(const SelectContext& ctx, const Selection& selection, JsonLog& log);

// What the tuning cache answers for `key`, reported as select_with reports a hit (the table, the
// pick, the JSON log), or nothing: no record, a record cut short or edited (lookup_stage), or a
// budgeted search's pick where every candidate is asked for (record_answers; not said here: the
// caller that tunes next says it).
[[nodiscard]] Result<std::optional<Selection>> cached_selection(const SelectContext& ctx,
                                                                TuningCache& cache,
                                                                const TuningKey& key);

// The whole selection: lookup, then compile, run, decide, pick, re-verify, record and report, the
// candidates reached through `runner` once compiled.
[[nodiscard]] Result<Selection> select_with(const SelectContext& ctx, const Backend& backend,
                                            TuningCache& cache, const TuningKey& key,
                                            Choice* reference, StageRunner& runner);

}  // namespace ktune
