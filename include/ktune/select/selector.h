// Selector: Inductor's AlgorithmSelectorCache.__call__ for ktune. Given a problem, its candidates
// and a reference, it looks the answer up in the tuning cache, or compiles every candidate in
// parallel, verifies each against the reference, measures the valid ones, re-measures the
// deciding candidates in alternating rounds, picks the fastest, verifies the pick again, records
// every outcome with the pick's confidence and prints the AUTOTUNE table.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ktune/backend/backend.h"
#include "ktune/bench/cpu_benchmarker.h"
#include "ktune/cache/tuning_cache.h"
#include "ktune/choice/choice.h"
#include "ktune/core/problem.h"
#include "ktune/search/strategy.h"
#include "ktune/tensor/compare.h"
#include "ktune/worker/worker_options.h"

namespace ktune {

class WorkerPool;  // src/worker/worker.h

// A metric of the spec (`metrics:`): its name and its value for a candidate's median time in
// seconds (2*M*N*K / time_s / 1e9 for GFLOP/s), the problem's sizes bound in already; a value
// that is not finite is left out.
struct Metric {
  std::string name;
  std::function<double(double time_s)> value;
};

struct SelectorOptions {
  BenchOptions bench;
  // Which candidates are compiled and measured (spec `search:`, --strategy, --max-evals, ...);
  // the default, auto, measures every candidate of a small space. Candidates left out end as
  // not_evaluated, are never the pick, and a record with any never answers a request for every
  // candidate (exhaustive, no budget).
  SearchOptions search;
  unsigned jobs = 0;        // compile threads; 0: all cores
  bool read_cache = true;   // a hit skips compiling and measuring
  bool write_cache = true;  // store the outcome of a tuning run
  // The deciding candidates: those whose first median, or fastest timed run (a measurement that
  // a stall slowed only in part), is within this fraction of the best median; at most
  // decide_max of them, the fastest first. Before the pick they are measured again in rounds
  // that alternate between them (decide stage), in batches of decide_batch rounds: after each,
  // a candidate significantly slower than the leader (the sign test's interval of its paired
  // round ratios above 1) drops out, and the stage ends once no candidate left may be more than
  // `resolution` faster than the leader. The leader decides: the fastest by its median of round
  // medians, unless another is faster by the median of their paired round ratios. 0: no decide
  // stage (the first medians decide).
  double close_call_band = 0.10;
  int decide_max = 8;
  int decide_batch = 5;
  // Timed runs in a decide round at most (after one warm-up, within a tenth of the budget);
  // 0: bench.max_runs / 8, within 1..25.
  int decide_round_runs = 0;
  double resolution = 0.03;
  // Rounds at most (0: no decide stage; the first medians decide); up to noisy_rounds while the
  // measurements are noisy (busy_load or noise_spread below) and the pick is unresolved.
  int close_call_rounds = 15;
  int noisy_rounds = 30;
  // On devices (measuring overlapped with compiling), the decide stage's rounds start while the
  // search waits on compiles, among the finalists measured so far; the decide stage goes on from
  // them (select/speculative_decide.h). Off: they all run after the search.
  bool decide_ahead = true;
  // Noise: other processes' CPU use, as a fraction of the cores ktune measures on, and the
  // relative spread (1.4826 MAD / median) of repeated measurements, above which measurements
  // count as noisy; a pick made in such noise that is not resolved is reported as untrusted.
  double busy_load = 0.25;
  // 0.20: on a quiet 16-core host the demo's OpenMP kernels alone spread 4-14% between rounds
  // (H200 host, 2026-11-24), so 5% called every quiet tuning noisy and ran it to noisy_rounds.
  double noise_spread = 0.20;
  // When the first measurements were made in noise, more candidates decide: those within
  // noisy_band of the best, at most noisy_decide_max.
  double noisy_band = 0.25;
  int noisy_decide_max = 12;
  // Verifications of the pick after timing, each a fresh request (outputs poisoned anew) in the
  // worker that has just timed it; a pick that fails one is excluded and the next is picked and
  // re-verified alike. Catches candidates that go wrong only on later calls or only sometimes.
  int reverify_runs = 5;
  int table_rows = 10;  // fastest rows in the AUTOTUNE table; failures are always listed
  std::uint64_t seed = 0;
  std::optional<Tolerance> tolerance;  // empty: by dtype
  std::FILE* out = stdout;             // the AUTOTUNE table and the pick; null: silent
  std::FILE* progress = stderr;        // progress lines; null: silent
  bool verbose = false;                // also on `progress`: worker restarts (candidate, why)
  std::filesystem::path json_log;      // JSON lines appended here when set
  // The spec being tuned (Spec::name), stored with each new record as its label
  // (TuningRecord::spec); not part of the key. Empty: none (`ktune gemm`, a C++ caller).
  std::string spec_name;
  // The metrics of a problem, in order: extra columns of the AUTOTUNE table, stored with each
  // measured candidate (CandidateRecord::metrics) and recomputed from the stored times on a
  // cache hit. Unset or empty: none.
  std::function<std::vector<Metric>(const Problem&)> metrics;

  // Isolation: generated code (template choices) runs in ktune-worker processes, so that a crash,
  // a hang or a memory fault costs one candidate. Off: everything runs in this process.
  bool isolate = true;
  WorkerOptions worker;
  // Several devices at once (`--devices`; Inductor's TuningProcessPool): one worker per slot,
  // started from `worker` with the slot's environment and cores (worker_options_for). The
  // candidates of a batch go to the first idle device; each device runs the reference itself and
  // compares with its own outputs; a crash or hang costs one candidate and that device's worker.
  // The first device (devices[0]) alone re-measures the deciding candidates and re-verifies the
  // pick, so that devices of slightly different speed do not decide it. Empty or one slot: one
  // device, as `worker` says. Needs isolation: without it everything runs in this process.
  std::vector<DeviceSlot> devices;
  // Deadline of one worker request: run_timeout when set, else run_timeout_floor plus room for a
  // candidate slow_factor times slower than the reference through its warm-up, verification and
  // minimum runs, plus the budget; once a candidate has been measured, at most a small multiple
  // of the best candidate's whole request plus a startup allowance (select/abandon_rule.h).
  std::chrono::milliseconds run_timeout{0};
  std::chrono::milliseconds run_timeout_floor{10'000};
  double slow_factor = 50;
  // One tuner per device: the folder of the per-device lock files (<dir>/cpu.lock, ...) that a
  // selection holds from compiling to storing its pick; another ktune waits for it, then is
  // served the pick from the cache if it tuned the same problem. Empty: no lock (the CLI sets
  // <cache dir>/locks).
  std::filesystem::path lock_dir;
  // Early abandonment: a candidate whose first timed runs are all clearly slower than the best so
  // far stops being measured and is recorded abandoned with its partial statistics.
  bool abandon = true;
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
  // The same with other options for this problem (a problem's own measurement settings: a
  // graph's GEMMs, each with its own), on this selector's workers, which keep what they loaded
  // (the device's context, libraries, checking kernels) from one problem to the next. The
  // settings the workers were started with stay the selector's: `options` must isolate as it
  // does and name the same devices (kInvalidArgument otherwise).
  [[nodiscard]] Result<Selection> select(const Problem& problem, std::vector<ChoicePtr>& candidates,
                                         Choice* reference, const SelectorOptions& options);

  // What select() would answer from the tuning cache, reported as it reports a hit, or nothing
  // (no record that answers, or options.read_cache off): compiles, runs and locks nothing, so
  // that a backend made without the driver (CudaBackend::for_device) can ask it.
  [[nodiscard]] Result<std::optional<Selection>> cached(const Problem& problem,
                                                        std::vector<ChoicePtr>& candidates,
                                                        const Choice* reference);

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
  [[nodiscard]] TuningKey key_for(const Problem& problem, const std::vector<ChoicePtr>& candidates,
                                  const Choice* reference, const SelectorOptions& options) const;

 private:
  // The pools of isolated runs, one per device (SelectorOptions::devices), made on first use;
  // empty without isolation.
  [[nodiscard]] std::vector<WorkerPool*> worker_pools();

  const Backend& backend_;
  TuningCache& cache_;
  SelectorOptions options_;
  std::vector<std::unique_ptr<WorkerPool>> pools_;  // made on first use, kept across problems
};

// The settings of `options` that a tuning's measurements depend on, as stored with its record.
[[nodiscard]] MeasureSettings measure_settings(const SelectorOptions& options);

// What the AUTOTUNE table, the summary and the progress lines say when there is no reference:
// "no reference: candidates compared with each other (against the first valid candidate,
// <stand_in>)".
[[nodiscard]] std::string no_reference_note(const std::string& stand_in);

// The AUTOTUNE table: a title line, the fastest `rows` valid candidates (time, % of best, info),
// every failure with its outcome and message, and a summary line.
[[nodiscard]] std::string format_autotune_table(const std::string& title,
                                                const TuningRecord& record, int rows,
                                                bool from_cache);

}  // namespace ktune
