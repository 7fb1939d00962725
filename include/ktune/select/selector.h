// Selector: Inductor's AlgorithmSelectorCache.__call__ for ktune. Given a problem, its candidates
// and a reference, it looks the answer up in the tuning cache, or compiles every candidate in
// parallel, verifies each against the reference, measures the valid ones, re-measures close
// calls, picks the fastest, records every outcome and prints the AUTOTUNE table.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ktune/backend/backend.h"
#include "ktune/bench/cpu_benchmarker.h"
#include "ktune/cache/tuning_cache.h"
#include "ktune/choice/choice.h"
#include "ktune/core/problem.h"
#include "ktune/tensor/compare.h"
#include "ktune/worker/worker_options.h"

namespace ktune {

class WorkerPool;  // src/worker/worker.h

struct SelectorOptions {
  BenchOptions bench;
  unsigned jobs = 0;        // compile threads; 0: all cores
  bool read_cache = true;   // a hit skips compiling and measuring
  bool write_cache = true;  // store the outcome of a tuning run
  // Candidates whose first median is within this fraction of the best are measured again,
  // interleaved, before the pick.
  double close_call_band = 0.05;
  int close_call_rounds = 15;
  int table_rows = 10;  // fastest rows in the AUTOTUNE table; failures are always listed
  std::uint64_t seed = 0;
  std::optional<Tolerance> tolerance;  // empty: by dtype
  std::FILE* out = stdout;             // the AUTOTUNE table and the pick; null: silent
  std::FILE* progress = stderr;        // progress lines; null: silent
  std::filesystem::path json_log;      // JSON lines appended here when set

  // Isolation: generated code (template choices) runs in ktune-worker processes, so that a crash,
  // a hang or a memory fault costs one candidate. Off: everything runs in this process.
  bool isolate = true;
  WorkerOptions worker;
  // Deadline of one worker request: run_timeout when set, else run_timeout_floor plus room for a
  // candidate slow_factor times slower than the reference through its warm-up, verification and
  // minimum runs, plus the budget.
  std::chrono::milliseconds run_timeout{0};
  std::chrono::milliseconds run_timeout_floor{10'000};
  double slow_factor = 50;
};

struct Selection {
  std::size_t winner_index = 0;  // into the candidates passed to select()
  TuningRecord record;
  bool from_cache = false;
  double select_s = 0;  // wall time of select()
};

class Selector {
 public:
  Selector(const Backend& backend, TuningCache& cache, SelectorOptions options);
  ~Selector();
  // Workers started over the selector's life (0 without isolation).
  [[nodiscard]] int worker_restarts() const;

  // kNoValidChoice (with a summary of the outcomes) when nothing compiled, ran and verified;
  // kInvalidArgument when the reference itself fails.
  [[nodiscard]] Result<Selection> select(const Problem& problem, std::vector<ChoicePtr>& candidates,
                                         Choice* reference);

  // Measures candidates of `problem` again after select() has compiled and verified them:
  // `rounds` rounds, each measuring every candidate once with `round_bench`, alternating, so
  // that drift hits them alike; the statistics of the round medians, in the order given. For
  // reports (a pick's regret against the fastest candidate), not for picking.
  [[nodiscard]] Result<std::vector<BenchStats>> measure_again(const Problem& problem,
                                                              const std::vector<Choice*>& choices,
                                                              Choice* reference,
                                                              const BenchOptions& round_bench,
                                                              int rounds);

  // The tuning-cache key select() uses for these candidates.
  [[nodiscard]] TuningKey key_for(const Problem& problem, const std::vector<ChoicePtr>& candidates,
                                  const Choice* reference) const;

 private:
  // The pool of isolated runs, made on first use; null without isolation.
  [[nodiscard]] WorkerPool* worker_pool();

  const Backend& backend_;
  TuningCache& cache_;
  SelectorOptions options_;
  std::unique_ptr<WorkerPool> pool_;  // started on first use, kept across problems
};

// The AUTOTUNE table: a title line, the fastest `rows` valid candidates (time, % of best, info),
// every failure with its outcome and message, and a summary line.
[[nodiscard]] std::string format_autotune_table(const std::string& title,
                                                const TuningRecord& record, int rows,
                                                bool from_cache);

}  // namespace ktune
