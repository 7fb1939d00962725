// Replaying a strategy against a fully measured space (`ktune simulate`, the tests, the bench):
// the strategy proposes as it would in a selection, and the recorded times answer instead of a
// device, so strategies are scored over many seeds in seconds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ktune/core/status.h"
#include "ktune/search/strategy.h"

namespace ktune {

// A measured space: per candidate its time in ns (nullopt: it failed) and what measuring it cost
// in seconds (the runs of its measurement, plus its compile when recorded).
struct RecordedSpace {
  CandidateSpace space;
  std::vector<std::optional<double>> time_ns;
  std::vector<double> cost_s;
};

// kInvalidArgument when the vectors' sizes differ, a coordinate is out of its dimension, or no
// candidate has a time.
[[nodiscard]] Status check_recorded_space(const RecordedSpace& recorded);

struct SimulateOptions {
  std::size_t batch = 1;                   // candidates proposed at once (>= 1)
  std::optional<std::uint64_t> max_evals;  // default: every candidate
  double within = 0.02;                    // "reached": time <= optimum * (1 + within)
};

// One replay: whether the strategy reached the target, and with how many evaluations and how
// much simulated time (both up to and including the candidate that reached it; counted batch by
// batch, since a batch is measured as a whole).
struct ReplayResult {
  bool reached = false;
  std::uint64_t evals = 0;  // evaluations to reach, or all that were made
  double time_s = 0;
};
[[nodiscard]] ReplayResult replay(Strategy& strategy, const RecordedSpace& recorded,
                                  const SimulateOptions& options);

struct Quartiles {
  double q1 = 0, median = 0, q3 = 0;
};
// Quartiles by linear interpolation; an infinity (a seed that did not reach) sorts last.
[[nodiscard]] Quartiles quartiles(std::vector<double> values);

// A strategy scored over seeds 0..seeds-1: evaluations and simulated time to reach (a seed that
// did not reach counts as infinity, so a median above half the seeds' misses is infinite).
struct StrategyScore {
  std::string strategy;
  Quartiles evals;
  Quartiles time_s;
  double reached_fraction = 0;
};
[[nodiscard]] Result<StrategyScore> score_strategy(const std::string& name,
                                                   const RecordedSpace& recorded,
                                                   const SimulateOptions& options,
                                                   std::uint64_t seeds);

}  // namespace ktune
