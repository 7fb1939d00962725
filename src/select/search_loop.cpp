// search_stage (search_loop.h): the strategy's batches compiled, verified and measured, with or
// without overlap.
#include "select/search_loop.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

#include "select/candidate_space.h"
#include "select/progress_line.h"
#include "select/search_batch.h"

namespace ktune {
namespace {

using search_batch::Clock;
using search_batch::Search;
using search_batch::seconds_since;

void report_search(const SelectContext& ctx, const Search& s,
                   const std::vector<CandidateRecord>& records, std::size_t& reported) {
  const std::size_t total = s.run.max_evals ? *s.run.max_evals : s.run.candidates;
  if (total == 0) return;
  const std::size_t tenths = s.run.evaluated * 10 / total;
  if (tenths <= reported) return;
  reported = tenths;
  const CandidateRecord* best = nullptr;
  for (const CandidateRecord& r : records) {
    if (r.outcome != Outcome::kOk || !r.stats || r.stats->median_ns <= 0) continue;
    if (!best || r.stats->median_ns < best->stats->median_ns) best = &r;
  }
  select_progress(ctx.options.progress,
                  fmt::format("{}: evaluated {} of {}{}", ctx.title, s.run.evaluated, total,
                              best ? fmt::format(" (best so far {}, {:.2f} us)", best->name,
                                                 best->stats->median_ns / 1e3)
                                   : std::string()));
}

}  // namespace

std::string not_evaluated_message(const SearchRun& run) {
  return fmt::format("not measured: outside the search budget (strategy {}, {} of {} evaluated{})",
                     run.strategy, run.evaluated, run.candidates,
                     run.out_of_time ? ", time limit reached" : "");
}

bool record_answers(const TuningRecord& record, const SearchOptions& search) {
  const bool sampled =
      std::any_of(record.candidates.begin(), record.candidates.end(),
                  [](const CandidateRecord& c) { return c.outcome == Outcome::kNotEvaluated; });
  if (!sampled) return true;
  const ResolvedStrategy r = resolve_strategy(search, record.candidates.size());
  return !(r.name == "exhaustive" && !r.max_evals && !search.time_limit_s);
}

Result<SearchRun> search_stage(const SelectContext& ctx, const Backend& backend, Choice* reference,
                               StageRunner& runner, std::vector<CandidateRecord>& records,
                               std::optional<std::string>* stand_in, bool overlap,
                               const std::vector<char>& resumed) {
  const SearchOptions& options = ctx.options.search;
  const std::size_t n = ctx.candidates.size();
  const ResolvedStrategy resolved = resolve_strategy(options, n);
  const CandidateSpace space = candidate_space_of(ctx.candidates);
  auto strategy = make_strategy(resolved.name, space, options.seed);
  if (!strategy) return std::unexpected(strategy.error());
  // Exhaustive and unbudgeted: one batch of everything, the selection as it always ran.
  const bool everything =
      resolved.name == "exhaustive" && !resolved.max_evals && !options.time_limit_s;
  // A budgeted search runs hundreds of small batches: their stage lines would drown the output,
  // so the batches run quietly and the search reports every tenth of its budget instead.
  SelectorOptions quiet_options = ctx.options;
  quiet_options.progress = nullptr;
  const SelectContext quiet{ctx.problem, ctx.candidates, quiet_options, ctx.title};
  Search s{.ctx = everything ? ctx : quiet,
           .runner = runner,
           .records = records,
           .stand_in = stand_in,
           .strategy = **strategy,
           .time_limit_s = options.time_limit_s,
           .start = Clock::now(),
           .prepared = false,
           .evaluated = std::vector<char>(n, 0),
           .resumed = resumed,
           .run = {}};
  // Decide rounds in the measuring thread's idle time: with overlap, on one device, and not
  // while a stand-in is chosen (candidates are then taken in order, not as they compile).
  std::optional<SpeculativeDecide> ahead;
  if (overlap && ctx.options.decide_ahead && !stand_in && ctx.candidates.size() > 1) {
    ahead.emplace(ctx, runner, records);
    s.ahead = &*ahead;
  }
  s.run.strategy = resolved.name;
  s.run.max_evals = resolved.max_evals;
  s.run.candidates = n;
  // What an interrupted run evaluated counts against the budget from the start, whether or not
  // the strategy proposes it again.
  for (std::size_t i = 0; i < n; ++i) {
    if (s.is_resumed(i)) {
      s.evaluated[i] = 1;
      s.measured.push_back(i);
      ++s.run.evaluated;
    }
  }
  const std::size_t threads =
      ctx.options.jobs > 0 ? ctx.options.jobs : std::max(1u, std::thread::hardware_concurrency());
  std::size_t reported = 0;  // tenths of the budget reported so far
  if (!everything) {
    select_progress(
        ctx.options.progress,
        fmt::format("{}: searching {} candidates with strategy {}{}{}, in batches of {}", ctx.title,
                    n, resolved.name,
                    resolved.max_evals ? fmt::format(", at most {} measured", *resolved.max_evals)
                                       : std::string(),
                    options.time_limit_s ? fmt::format(", for at most {} s", *options.time_limit_s)
                                         : std::string(),
                    threads));
  }
  for (;;) {
    std::size_t want = everything ? std::max<std::size_t>(n, 1) : threads;
    if (resolved.max_evals) {
      if (s.run.evaluated >= *resolved.max_evals) break;
      want = std::min<std::size_t>(want, *resolved.max_evals - s.run.evaluated);
    }
    if (s.prepared && s.out_of_time()) break;
    const std::vector<std::size_t> batch = s.strategy.propose(want);
    if (batch.empty()) break;
    Status st = overlap ? search_batch::run_batch_overlapped(s, backend, reference, batch)
                        : search_batch::run_batch(s, backend, reference, batch);
    if (!st) return std::unexpected(st.error());
    if (!everything) report_search(ctx, s, records, reported);
  }
  // The quiet batches did not say it: without a reference, who stood in for one.
  if (!everything && stand_in && *stand_in) {
    select_progress(ctx.options.progress,
                    fmt::format("{}: {}", ctx.title, no_reference_note(**stand_in)));
  }
  // A selection with nothing to propose still needs its reference checked, as before.
  if (!s.prepared) {
    if (Status c = compile_subset(ctx, backend, reference, records, {}); !c) {
      return std::unexpected(c.error());
    }
    if (Status p = s.prepare(reference); !p) return std::unexpected(p.error());
  }
  const std::string why = not_evaluated_message(s.run);
  for (std::size_t i = 0; i < n; ++i) {
    if (!s.evaluated[i] && records[i].outcome == Outcome::kOk) {
      records[i].outcome = Outcome::kNotEvaluated;
      records[i].message = why;
    }
  }
  if (ahead) s.run.decided_ahead = ahead->rounds();
  return s.run;
}

}  // namespace ktune
