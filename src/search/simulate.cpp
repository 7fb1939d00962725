// The replay engine of `ktune simulate` (simulate.h).
#include "ktune/search/simulate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace ktune {

Status check_recorded_space(const RecordedSpace& r) {
  const std::size_t n = r.space.size();
  if (r.time_ns.size() != n || r.cost_s.size() != n) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("recorded space: {} candidates, {} times, {} costs", n,
                                  r.time_ns.size(), r.cost_s.size()));
  }
  for (std::size_t i = 0; i < n; ++i) {
    const auto& c = r.space.coords[i];
    if (c.empty()) continue;
    if (c.size() != r.space.dims.size()) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("recorded space: candidate {} has {} coordinates, the space "
                                    "{} parameters",
                                    i, c.size(), r.space.dims.size()));
    }
    for (std::size_t p = 0; p < c.size(); ++p) {
      if (c[p] >= r.space.dims[p]) {
        return make_error(ErrorCode::kInvalidArgument,
                          fmt::format("recorded space: candidate {} parameter {} value index {} "
                                      "outside 0..{}",
                                      i, p, c[p], r.space.dims[p] - 1));
      }
    }
  }
  if (std::none_of(r.time_ns.begin(), r.time_ns.end(),
                   [](const auto& t) { return t.has_value(); })) {
    return make_error(ErrorCode::kInvalidArgument,
                      "recorded space: no candidate has a time (nothing to reach)");
  }
  return {};
}

ReplayResult replay(Strategy& strategy, const RecordedSpace& r, const SimulateOptions& options) {
  double optimum = std::numeric_limits<double>::infinity();
  for (const auto& t : r.time_ns) {
    if (t) optimum = std::min(optimum, *t);
  }
  const double target = optimum * (1.0 + options.within);
  const std::uint64_t max_evals = options.max_evals.value_or(r.space.size());
  ReplayResult out;
  std::vector<char> seen(r.space.size(), 0);
  while (out.evals < max_evals) {
    const std::size_t n =
        static_cast<std::size_t>(std::min<std::uint64_t>(options.batch, max_evals - out.evals));
    const std::vector<std::size_t> batch = strategy.propose(std::max<std::size_t>(1, n));
    if (batch.empty()) break;
    // A batch is measured as a whole: its time counts in full, and reaching counts from the
    // evaluation that reached (a selection sees the batch's results together).
    double batch_time = 0;
    std::optional<std::uint64_t> reached_at;
    for (std::size_t i : batch) {
      if (i >= r.space.size() || seen[i]) continue;  // a broken strategy: the tests catch it
      seen[i] = 1;
      ++out.evals;
      batch_time += r.cost_s[i];
      if (!reached_at && r.time_ns[i] && *r.time_ns[i] <= target) reached_at = out.evals;
    }
    out.time_s += batch_time;
    for (std::size_t i : batch) {
      if (i < r.space.size()) strategy.observe(i, r.time_ns[i]);
    }
    if (reached_at) {
      out.reached = true;
      out.evals = *reached_at;
      return out;
    }
  }
  return out;
}

Quartiles quartiles(std::vector<double> v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    const double pos = q * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const std::size_t hi = std::min(lo + 1, v.size() - 1);
    if (std::isinf(v[hi]) || lo == hi) return pos == static_cast<double>(lo) ? v[lo] : v[hi];
    return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
  };
  return {at(0.25), at(0.5), at(0.75)};
}

Result<StrategyScore> score_strategy(const std::string& name, const RecordedSpace& recorded,
                                     const SimulateOptions& options, std::uint64_t seeds) {
  if (auto s = check_recorded_space(recorded); !s) return std::unexpected(s.error());
  SearchOptions search;
  search.strategy = name;
  const ResolvedStrategy resolved = resolve_strategy(search, recorded.space.size());
  SimulateOptions opts = options;
  if (!opts.max_evals) opts.max_evals = resolved.max_evals;
  StrategyScore score;
  score.strategy = name;
  std::vector<double> evals, times;
  std::uint64_t reached = 0;
  for (std::uint64_t seed = 0; seed < seeds; ++seed) {
    auto strategy = make_strategy(resolved.name, recorded.space, seed);
    if (!strategy) return std::unexpected(strategy.error());
    const ReplayResult r = replay(**strategy, recorded, opts);
    const double inf = std::numeric_limits<double>::infinity();
    evals.push_back(r.reached ? static_cast<double>(r.evals) : inf);
    times.push_back(r.reached ? r.time_s : inf);
    reached += r.reached ? 1 : 0;
  }
  score.evals = quartiles(std::move(evals));
  score.time_s = quartiles(std::move(times));
  score.reached_fraction = seeds ? static_cast<double>(reached) / static_cast<double>(seeds) : 0;
  return score;
}

}  // namespace ktune
