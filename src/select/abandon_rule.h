// BestSoFar: what the selection knows about the fastest candidates measured so far, and the two
// limits it derives for every later candidate (issue 19): the abandonment bound (a candidate whose
// first timed runs are all above it stops being measured, bench/measure_loop.h) and the deadline
// of its request (a hang costs a small multiple of the best candidate's whole request, not the
// reference-based 10 s floor).
#pragma once

#include <chrono>
#include <optional>
#include <vector>

#include "ktune/bench/bench_stats.h"

namespace ktune {

// How many robust standard deviations (BenchStats' relative spread times the median) above the
// best median the fastest of a candidate's first kAbandonAfterRuns runs must be to abandon it.
// For a candidate as fast as the best, one run lands above median + 3 sigma with probability
// 0.135% for normal data, so all three of them with about 2.5e-9; timing noise has a right tail
// (interrupts, other processes), and even if one run in ten landed that high the three would
// together with 1e-3. A candidate abandoned by mistake costs regret only when it was faster than
// the pick, so the false-abandon rate on the pick is lower still.
inline constexpr double kAbandonSigmas = 3;
// The margin never goes below the decide stage's band (SelectorOptions::close_call_band's
// default, 10%): the spread within one candidate's measurement does not see the drift between two
// candidates' (clock changes, load: on a shared 2-core machine two identical kernels measured one
// after the other differ by more than 2%), and a candidate that close to the best is for the
// alternating rounds to decide, not for a few runs to drop. Above it, abandonment still cuts the
// many candidates that are clearly slower.
inline constexpr double kAbandonMinMargin = 0.10;
// The spread is the largest among this many fastest candidates: one quiet measurement of the
// best must not narrow the bound for everyone after it.
inline constexpr int kSpreadOver = 3;
// A later request may take this many times the best candidate's whole request (verification,
// warm-up, timed runs) before it is stopped as timed_out: a candidate slower than that per run is
// abandoned after its first runs anyway, so only one that hangs or is far slower reaches it.
inline constexpr double kDeadlineFactor = 4;
// Plus what a fresh worker needs before the candidate's first call when the last one was killed:
// start its device, load the shared object (preparing the problem comes on top: deadline()).
inline constexpr std::chrono::milliseconds kDeadlineStartup{2000};

class BestSoFar {
 public:
  // A candidate measured to its full budget (not abandoned): its stats and how long its whole
  // request took in ms.
  void observe(const BenchStats& stats, double request_ms);
  [[nodiscard]] bool empty() const { return fastest_.empty(); }
  // The abandonment bound in ns for the next request: best median * (1 + max(kAbandonSigmas *
  // spread, kAbandonMinMargin)); 0 (none) before a candidate with kAbandonAfterRuns runs or more
  // has been seen, as its spread is unknown.
  [[nodiscard]] double abandon_bound_ns() const;
  // The deadline of the next request: kDeadlineStartup + `prepare_ms` (what a fresh worker
  // spends preparing the problem before the candidate's first call: the reference on both data
  // sets) + kDeadlineFactor times the best candidate's request; nullopt before any candidate has
  // been seen.
  [[nodiscard]] std::optional<std::chrono::milliseconds> deadline(double prepare_ms) const;

 private:
  struct Seen {
    double median_ns = 0;
    double spread = 0;  // relative_spread; 0 when measured with too few runs to tell
    bool spread_known = false;
    double request_ms = 0;
  };
  std::vector<Seen> fastest_;  // at most kSpreadOver, by median
};

}  // namespace ktune
