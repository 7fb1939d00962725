// The decide stage and the pick's confidence: the deciding candidates re-measured in alternating
// rounds until the pick is resolved (or the rounds run out), and what the rounds say about how
// far the pick can be trusted.
//
// Why rounds and paired ratios: a busy machine slows whatever runs while it is busy. Rounds
// measure every contender back to back, so a burst of load lands on one round of all of them
// rather than on one candidate's whole measurement; the ratio of two candidates within a round
// cancels the load both saw, and the median of those ratios (with the sign test's interval)
// ignores the few rounds a stall hit.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "select/progress_line.h"
#include "select/select_stages.h"

namespace ktune {
namespace {

bool alive(const CandidateRecord& r) { return r.outcome == Outcome::kOk; }

double median(const CandidateRecord& r) { return r.stats ? r.stats->median_ns : 0.0; }

double median_of(std::vector<double> v) { return compute_stats(std::move(v)).median_ns; }

// The round medians of the rounds a finalist took part in (one it sat out holds 0).
std::vector<double> taken(const std::vector<double>& rounds) {
  std::vector<double> out;
  for (double r : rounds) {
    if (r > 0) out.push_back(r);
  }
  return out;
}

// The leader among the contenders (indices into d.finalists): the fastest by the median of its
// rounds, unless another's paired round ratios to it have a median below 1 (then the smallest
// such): the load a round saw cancels in a ratio, not in a median of times. The earlier on ties.
std::size_t leader_of(const Decision& d, const std::vector<std::size_t>& contenders) {
  const std::size_t first =
      *std::min_element(contenders.begin(), contenders.end(), [&](std::size_t a, std::size_t b) {
        return median_of(taken(d.rounds_ns[a])) < median_of(taken(d.rounds_ns[b]));
      });
  std::size_t leader = first;
  double best = 1;
  for (std::size_t j : contenders) {
    if (j == first) continue;
    const std::vector<double> r = d.ratios(d.finalists[j], d.finalists[first]);
    if (r.empty()) continue;
    const double ratio = median_of(r);
    if (ratio < best) {
      best = ratio;
      leader = j;
    }
  }
  return leader;
}

// The median relative spread of the finalists' round medians (those with 3 rounds or more);
// without rounds, of the alive candidates' first measurements.
double measured_spread(const std::vector<CandidateRecord>& records, const Decision& d) {
  std::vector<double> spreads;
  for (const std::vector<double>& rounds : d.rounds_ns) {
    std::vector<double> r = taken(rounds);
    if (r.size() >= 3) spreads.push_back(relative_spread(compute_stats(std::move(r))));
  }
  if (spreads.empty()) {
    for (const CandidateRecord& r : records) {
      if (alive(r) && r.stats && r.stats->runs >= 3) spreads.push_back(relative_spread(*r.stats));
    }
  }
  return spreads.empty() ? 0 : median_of(std::move(spreads));
}

}  // namespace

std::vector<std::size_t> deciding_candidates(const std::vector<CandidateRecord>& records,
                                             double band, int max) {
  std::vector<std::size_t> all(records.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  return deciding_among(records, all, band, max);
}

std::vector<std::size_t> deciding_among(const std::vector<CandidateRecord>& records,
                                        const std::vector<std::size_t>& among, double band,
                                        int max) {
  std::vector<std::size_t> ok;
  for (std::size_t i : among) {
    if (alive(records[i]) && records[i].stats) ok.push_back(i);
  }
  if (ok.size() < 2) return {};
  double best = median(records[ok.front()]);
  for (std::size_t i : ok) best = std::min(best, median(records[i]));
  std::vector<std::size_t> close;
  for (std::size_t i : ok) {
    const BenchStats& s = *records[i].stats;
    if (s.median_ns <= best * (1 + band) || s.min_ns <= best * (1 + band)) close.push_back(i);
  }
  // In candidate order before the sort, whatever the order of `among`, so that the same
  // candidates give the same finalists in the same order.
  std::sort(close.begin(), close.end());
  std::stable_sort(close.begin(), close.end(), [&](std::size_t a, std::size_t b) {
    return median(records[a]) < median(records[b]);
  });
  if (close.size() > static_cast<std::size_t>(std::max(max, 0))) close.resize(std::max(max, 0));
  if (close.size() < 2) close.clear();
  return close;
}

BenchOptions decide_round_bench(const SelectorOptions& o) {
  // One warm-up, then timed runs for a tenth of the budget (one for a kernel slower than that).
  // Robustness comes from the many rounds and their pairing, not from runs within a round, so a
  // long kernel costs two calls a round rather than four.
  BenchOptions round = o.bench;
  round.warmup_runs = 1;
  round.budget_ms = o.bench.budget_ms / 10;
  round.min_runs = 1;
  round.max_runs =
      o.decide_round_runs > 0 ? o.decide_round_runs : std::clamp(o.bench.max_runs / 8, 1, 25);
  return round;
}

int decide_batch_rounds(const SelectorOptions& o) {
  return std::clamp(o.decide_batch, 1, std::max(o.close_call_rounds, 1));
}

DecideRounds::DecideRounds(std::vector<std::size_t> finalists) {
  d.finalists = std::move(finalists);
  d.rounds_ns.resize(d.finalists.size());
  d.dropped.assign(d.finalists.size(), false);
  contenders.resize(d.finalists.size());
  for (std::size_t j = 0; j < contenders.size(); ++j) contenders[j] = j;
}

std::size_t DecideRounds::judge(double resolution) {
  // Out: the contenders significantly slower than the leader. Unresolved: one that may still be
  // more than `resolution` faster than it.
  const std::size_t leader = leader_of(d, contenders);
  bool unresolved = false;
  std::vector<std::size_t> kept;
  for (std::size_t j : contenders) {
    if (j == leader) {
      kept.push_back(j);
      continue;
    }
    const MedianInterval ci = median_interval(d.ratios(d.finalists[j], d.finalists[leader]));
    if (ci.low > 1) {
      d.dropped[j] = true;
      continue;
    }
    kept.push_back(j);
    if (ci.low < 1 - resolution) unresolved = true;
  }
  contenders = std::move(kept);
  resolved = !unresolved;
  return leader;
}

int DecideRounds::least_rounds() const {
  int least = d.rounds;
  for (std::size_t j : contenders) {
    least = std::min(least, static_cast<int>(taken(d.rounds_ns[j]).size()));
  }
  return least;
}

void DecideRounds::add(const std::vector<std::vector<double>>& medians) {
  const std::size_t n = medians.empty() ? 0 : medians.front().size();
  for (std::size_t k = 0; k < contenders.size(); ++k) {
    std::vector<double>& to = d.rounds_ns[contenders[k]];
    to.insert(to.end(), medians[k].begin(), medians[k].end());
  }
  d.rounds += static_cast<int>(n);
}

DecideRounds DecideRounds::carried_to(const std::vector<std::size_t>& finalists) const {
  if (finalists == d.finalists) return *this;
  DecideRounds out(finalists);
  out.contenders.clear();
  out.d.rounds = d.rounds;
  out.d.noisy = d.noisy;
  bool newcomer = false;
  for (std::size_t j = 0; j < finalists.size(); ++j) {
    const auto was = std::find(d.finalists.begin(), d.finalists.end(), finalists[j]);
    if (was == d.finalists.end()) {
      out.d.rounds_ns[j].assign(static_cast<std::size_t>(d.rounds), 0.0);  // sat them out
      out.contenders.push_back(j);
      newcomer = true;
      continue;
    }
    const std::size_t from = static_cast<std::size_t>(was - d.finalists.begin());
    out.d.rounds_ns[j] = d.rounds_ns[from];
    out.d.dropped[j] = d.dropped[from];
    if (!d.dropped[from]) out.contenders.push_back(j);
  }
  // The same finalists in another order are still resolved.
  out.resolved = resolved && !newcomer && finalists.size() == d.finalists.size();
  return out;
}

double LoadWatch::others(StageRunner& runner) const {
  if (!start) return -1;
  const std::optional<CpuClock> now = runner.cpu_clock();
  // CPU time comes in 10 ms ticks per CPU: over less than half a second the reading could be off
  // by a tenth of a core or more, so it says nothing (the spread of the rounds still does).
  if (!now || now->wall_s - start->wall_s < 0.5) return -1;
  return others_load(*start, *now);
}

int Decision::tier(std::size_t record) const {
  if (leader && *leader == record) return 0;
  for (std::size_t j = 0; j < finalists.size(); ++j) {
    if (finalists[j] == record) return dropped[j] ? 2 : 1;
  }
  return 3;
}

std::vector<double> Decision::ratios(std::size_t a, std::size_t b) const {
  const auto ja = std::find(finalists.begin(), finalists.end(), a);
  const auto jb = std::find(finalists.begin(), finalists.end(), b);
  if (ja == finalists.end() || jb == finalists.end()) return {};
  const std::vector<double>& ra = rounds_ns[ja - finalists.begin()];
  const std::vector<double>& rb = rounds_ns[jb - finalists.begin()];
  std::vector<double> out;
  for (std::size_t r = 0; r < std::min(ra.size(), rb.size()); ++r) {
    if (ra[r] > 0 && rb[r] > 0) out.push_back(ra[r] / rb[r]);
  }
  return out;
}

Decision decide_stage(const SelectContext& ctx, StageRunner& runner,
                      std::vector<CandidateRecord>& records, const LoadWatch& load,
                      const DecideRounds* seed) {
  const SelectorOptions& o = ctx.options;
  if (o.close_call_rounds <= 0 || o.close_call_band <= 0) return Decision{};
  // Noise in the first measurements (other processes busy, or a wide spread) can push the
  // fastest candidate out of the band: then a wider band decides.
  const bool noisy_start = load.others(runner) >= o.busy_load * load.cores ||
                           measured_spread(records, Decision{}) > o.noise_spread;
  std::vector<std::size_t> finalists =
      noisy_start ? deciding_candidates(records, std::max(o.close_call_band, o.noisy_band),
                                        std::max(o.decide_max, o.noisy_decide_max))
                  : deciding_candidates(records, o.close_call_band, o.decide_max);
  if (finalists.empty()) return Decision{};
  // Rounds the search measured while it waited on compiles (SpeculativeDecide) carry over: a
  // finalist measured there keeps its rounds (and stays out if it dropped out), a new one sat
  // them out and takes part from here; rounds pair only where both took part.
  DecideRounds st = seed ? seed->carried_to(finalists) : DecideRounds(finalists);
  if (st.contenders.empty()) st = DecideRounds(finalists);  // nothing carried can decide
  Decision& d = st.d;
  const int ahead = d.rounds;  // rounds measured before this stage
  ProgressLine progress(
      o.progress,
      {.title = ctx.title,
       .header = fmt::format(
           "{}: deciding between {} candidates in alternating rounds{}{}", ctx.title,
           d.finalists.size(), noisy_start ? " (noisy: a wider band)" : "",
           ahead > 0 ? fmt::format(" ({} rounds measured while compiling)", ahead) : std::string()),
       .doing = fmt::format("deciding between {}{}, rounds", d.finalists.size(),
                            noisy_start ? " (noisy)" : ""),
       .done_word = fmt::format("decided between {}, rounds", d.finalists.size()),
       .plain_steps = false,
       .total = static_cast<std::size_t>(o.close_call_rounds)});
  const int batch = decide_batch_rounds(o);
  const BenchOptions round = decide_round_bench(o);
  int cap = o.close_call_rounds;  // rounds of the least measured contender
  // Noise: spend more rounds, up to noisy_rounds, on a pick the noise leaves open.
  const auto more_if_noisy = [&] {
    const bool busy = load.others(runner) >= o.busy_load * load.cores;
    if ((busy || measured_spread(records, d) > o.noise_spread) && cap < o.noisy_rounds) {
      cap = o.noisy_rounds;
      d.noisy = true;
      progress.set_total(static_cast<std::size_t>(cap));
    }
  };
  const auto show = [&](std::size_t leader, int rounds) {
    progress.best(ctx.candidates[d.finalists[leader]]->name(),
                  median_of(taken(d.rounds_ns[leader])));
    for (int k = 0; k < rounds; ++k) progress.step();
  };
  if (st.resolved) show(leader_of(d, st.contenders), st.least_rounds());
  if (!st.resolved && ahead > 0 && st.least_rounds() >= cap) more_if_noisy();
  while (!st.resolved && st.least_rounds() < cap && st.contenders.size() > 1) {
    std::vector<Choice*> choices;
    for (std::size_t j : st.contenders) choices.push_back(ctx.candidates[d.finalists[j]].get());
    // Judged every `batch` rounds of the least measured contender.
    const int least = st.least_rounds();
    const int n = std::min(batch - least % batch, cap - least);
    auto again = runner.remeasure(choices, n, round);
    if (!again || again->size() != choices.size()) {
      select_progress(o.progress,
                      fmt::format("{}: re-measuring stopped: {}", ctx.title,
                                  again ? "wrong number of statistics" : again.error().message));
      break;
    }
    st.add(*again);
    show(st.judge(o.resolution), n);
    if (!st.resolved) more_if_noisy();
  }
  progress.set_total(static_cast<std::size_t>(d.rounds - ahead));  // the rounds it took
  progress.finish();
  for (std::size_t j = 0; j < d.finalists.size(); ++j) {
    std::vector<double> r = taken(d.rounds_ns[j]);
    if (!r.empty()) records[d.finalists[j]].stats = compute_stats(std::move(r));
  }
  if (d.rounds == 0) return Decision{};  // the first measurements stand
  d.leader = d.finalists[leader_of(d, st.contenders)];
  return d;
}

PickConfidence pick_confidence(const SelectContext& ctx,
                               const std::vector<CandidateRecord>& records,
                               const Decision& decision, std::size_t winner, double others_load,
                               int cores) {
  const SelectorOptions& o = ctx.options;
  PickConfidence c;
  c.others_load = others_load;
  c.cores = cores;
  c.reverified = o.reverify_runs;
  c.spread = measured_spread(records, decision);
  // The runner-up: the next pick were the winner gone.
  std::optional<std::size_t> second;
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (i == winner || !alive(records[i]) || !records[i].stats) continue;
    const auto rank = [&](std::size_t k) {
      return std::pair(decision.tier(k), median(records[k]));
    };
    if (!second || rank(i) < rank(*second)) second = i;
  }
  bool resolved = true;
  if (second && median(records[winner]) > 0) {
    c.runner_up = records[*second].name;
    const std::vector<double> ratios = decision.ratios(*second, winner);
    if (!ratios.empty()) {
      const MedianInterval ci = median_interval(ratios);
      c.runner_up_ratio = median_of(ratios);
      c.ratio_low = ci.low;
      c.ratio_high = ci.high;
      c.ratio_rounds = static_cast<int>(ratios.size());
      resolved = ci.low >= 1 - o.resolution;
    } else {
      c.runner_up_ratio = median(records[*second]) / median(records[winner]);
      c.ratio_low = c.ratio_high = c.runner_up_ratio;
      resolved = c.runner_up_ratio > 1 + o.close_call_band;
    }
  }
  // A pick without a runner-up is what it is, however busy the machine.
  const bool busy = second && others_load >= o.busy_load * cores;
  const bool noisy = c.spread > o.noise_spread;
  c.trusted = !busy && (resolved || !noisy);
  return c;
}

std::string untrusted_warning(const std::string& title, const PickConfidence& c) {
  std::string why = c.others_load >= 0
                        ? fmt::format("other processes used {:.2f} of {} cores while measuring; ",
                                      c.others_load, c.cores)
                        : std::string();
  why += fmt::format("repeated measurements spread {:.1f}%", 100 * c.spread);
  if (!c.runner_up.empty()) {
    why +=
        c.ratio_rounds > 0
            ? fmt::format("; runner-up {} at {:.3f}x [{:.3f}, {:.3f}] over {} rounds", c.runner_up,
                          c.runner_up_ratio, c.ratio_low, c.ratio_high, c.ratio_rounds)
            : fmt::format("; runner-up {} at {:.3f}x", c.runner_up, c.runner_up_ratio);
  }
  return fmt::format(
      "Warning: {}: the machine was too noisy to trust this pick ({}); tune again "
      "on a quieter machine (--retune)\n",
      title, why);
}

}  // namespace ktune
