// The measurement loop of every device: warm-up, a first timed sample, a sample count from the
// first sample and the budget (runs_for_budget, the one formula), the other samples, robust
// statistics. The device supplies the samples through a SampleSource: each one after a cache
// flush when BenchOptions::flush_cache asks for it, timed by whatever clock the device has (the
// host's steady clock, CUDA events, OpenCL profiling events). A source may enqueue a whole batch
// before it waits (CUDA does), so samples come in counts, not one call per run.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ktune/bench/bench_options.h"
#include "ktune/bench/bench_stats.h"
#include "ktune/core/status.h"

namespace ktune {

class SampleSource {
 public:
  virtual ~SampleSource() = default;
  // `count` untimed runs, finished before it returns.
  [[nodiscard]] virtual Status warm_up(int count) = 0;
  // `count` timed runs (each after a flush when asked for), each's time in ns appended to `ns`.
  [[nodiscard]] virtual Status sample(int count, std::vector<double>* ns) = 0;
  // `count` timed runs as sample() does, with `before` called before each of them (outside its
  // timed span, before the flush). A device that queues its work (CUDA) enqueues what `before`
  // asks for in order with the runs, so that the whole batch still needs one synchronisation.
  // Here: before(), then sample(1), one run at a time.
  [[nodiscard]] virtual Status sample_each(int count, const std::function<Status()>& before,
                                           std::vector<double>* ns);
  // What the reader of the result should know (a CUDA graph that could not be captured, say).
  [[nodiscard]] virtual std::string note() const { return {}; }
};

// Timed runs wanted for a kernel whose first sample took `first_ns`: as many as fit in the
// budget, within [min_runs, max(max_runs, min_runs)].
[[nodiscard]] int runs_for_budget(const BenchOptions& options, double first_ns);

// warm_up(options.warmup_runs), one sample, then runs_for_budget - 1 more; the first error.
[[nodiscard]] Result<BenchStats> measure_samples(const BenchOptions& options, SampleSource& source);

// Early abandonment (issue 19): the timed runs after which a candidate may be abandoned. Three is
// the fewest whose fastest run says something about the candidate rather than about one
// interrupt: the chance that all three of an as-fast candidate land above the bound is the cube
// of one run's (select/abandon_rule.h).
inline constexpr int kAbandonAfterRuns = 3;
// ...or this share of the runs the budget asks for, when that is more: runs of a short kernel
// follow each other within microseconds, so one preemption or clock dip hits all three alike
// and they are not the independent draws the rule counts on (on a loaded 2-core machine, three
// runs of a 3 us kernel were all 25% slow). Spread over a tenth of the measurement they are;
// the other nine tenths are still saved.
inline constexpr double kAbandonBudgetShare = 0.1;

// The timed runs before the abandonment check for a kernel whose first run took `first_ns`:
// kAbandonAfterRuns, or kAbandonBudgetShare of runs_for_budget when more.
[[nodiscard]] int runs_before_abandoning(const BenchOptions& options, double first_ns);

// A measurement that may have stopped early.
struct Measurement {
  BenchStats stats;        // of the runs made (runs_before_abandoning of them when abandoned)
  bool abandoned = false;  // the fastest of the first runs was above the bound
};

// True when the fastest of `ns` (kAbandonAfterRuns samples or more) is above `above_ns`; never
// for `above_ns` <= 0 (no bound) or fewer samples.
[[nodiscard]] bool should_abandon(const std::vector<double>& ns, double above_ns);

// measure_samples, stopping after runs_before_abandoning timed runs when should_abandon(above_ns).
// The runs are sampled in the same batches as measure_samples' when there is no bound.
[[nodiscard]] Result<Measurement> measure_or_abandon(const BenchOptions& options,
                                                     SampleSource& source, double above_ns);

}  // namespace ktune
