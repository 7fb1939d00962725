// search_stage (search_loop.h): the strategy's batches compiled, verified and measured, with or
// without overlap.
#include "select/search_loop.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

#include "core/thread_pool.h"
#include "select/candidate_space.h"
#include "select/progress_line.h"

namespace ktune {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The state of one search: what the strategy was told, what counts against the budget.
struct Search {
  const SelectContext& ctx;
  StageRunner& runner;
  std::vector<CandidateRecord>& records;
  std::optional<std::string>* stand_in;
  Strategy& strategy;
  std::optional<double> time_limit_s;
  Clock::time_point start = Clock::now();
  bool prepared = false;
  std::vector<char> evaluated;       // per candidate
  const std::vector<char>& resumed;  // per candidate, or empty
  SearchRun run;

  [[nodiscard]] bool out_of_time() {
    if (time_limit_s && seconds_since(start) >= *time_limit_s) run.out_of_time = true;
    return run.out_of_time;
  }
  // The runner prepared with the reference, once, before the first candidate runs.
  [[nodiscard]] Status prepare(Choice* reference) {
    if (prepared) return {};
    prepared = true;
    if (Status s = runner.prepare(reference); !s) {
      return make_error(s.error().code, fmt::format("{}: {}", ctx.title, s.error().message));
    }
    return {};
  }
  // Candidate i, compiled (or failed to): run unless it failed, and tell the strategy.
  void finish(RunOne& one, std::size_t i) {
    const bool ok = records[i].outcome == Outcome::kOk && one.run(i);
    evaluated[i] = 1;
    ++run.evaluated;
    tell(i, ok);
  }
  [[nodiscard]] bool is_resumed(std::size_t i) const { return i < resumed.size() && resumed[i]; }
  // A candidate an interrupted run evaluated, proposed again: the strategy learns its kept
  // outcome, nothing runs, and the budget was charged for it at the start.
  void replay(std::size_t i) { tell(i, records[i].outcome == Outcome::kOk); }
  void tell(std::size_t i, bool ok) {
    const CandidateRecord& r = records[i];
    strategy.observe(i, ok && r.stats ? std::optional<double>(r.stats->median_ns) : std::nullopt);
  }
};

std::size_t alive_count(const std::vector<CandidateRecord>& records,
                        const std::vector<std::size_t>& batch) {
  return static_cast<std::size_t>(std::count_if(batch.begin(), batch.end(), [&](std::size_t i) {
    return records[i].outcome == Outcome::kOk;
  }));
}

// Without overlap: the batch compiled, then run in the order proposed.
Status run_batch(Search& s, const Backend& backend, Choice* reference,
                 const std::vector<std::size_t>& batch) {
  // todo: supported or resumed, in the order proposed (the unsupported cost nothing and do not
  // count); fresh: the batch less the resumed, to compile.
  std::vector<std::size_t> todo, fresh;
  for (std::size_t i : batch) {
    if (s.is_resumed(i)) {
      todo.push_back(i);
      continue;
    }
    fresh.push_back(i);
    if (s.records[i].outcome == Outcome::kOk) {
      todo.push_back(i);
    } else {
      s.strategy.observe(i, std::nullopt);
    }
  }
  const auto t0 = Clock::now();
  if (Status c = compile_subset(s.ctx, backend, s.prepared ? nullptr : reference, s.records, fresh);
      !c) {
    return c;
  }
  s.run.compile_s += seconds_since(t0);
  const auto t1 = Clock::now();
  if (Status p = s.prepare(reference); !p) return p;
  // A batch of resumed candidates only has nothing to verify or measure, and no line saying so.
  std::optional<RunOne> one;
  if (std::any_of(todo.begin(), todo.end(), [&](std::size_t i) { return !s.is_resumed(i); })) {
    one.emplace(s.ctx, s.runner, /*measure=*/true, s.records, s.stand_in,
                alive_count(s.records, fresh));
  }
  for (std::size_t i : todo) {
    if (s.is_resumed(i)) {
      s.replay(i);
    } else {
      if (s.out_of_time()) break;
      s.finish(*one, i);
    }
  }
  s.run.measure_s += seconds_since(t1);
  return {};
}

// With overlap: compile tasks hand finished candidates to this thread, which measures them as
// they come; library choices (nothing to compile) first.
Status run_batch_overlapped(Search& s, const Backend& backend, Choice* reference,
                            const std::vector<std::size_t>& batch) {
  const auto t0 = Clock::now();
  const SelectContext& ctx = s.ctx;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::size_t> ready;  // compiled, in completion order
  std::vector<char> compiled(s.records.size(), 0);
  std::optional<Status> ref_status;
  std::atomic<bool> stop{false};
  // Library choices (cuBLAS, cuBLASLt) first: they compile in no time (or one small pass), so
  // they are measured while the templates compile. Without a reference the first candidate to
  // pass stands in for it, and is taken in the order proposed, so that it is the same one as
  // without overlap.
  const bool in_order = s.stand_in != nullptr;
  std::vector<std::size_t> order, templates;
  for (std::size_t i : batch) {
    if (s.is_resumed(i)) {
      s.replay(i);  // nothing to compile or measure
    } else if (s.records[i].outcome != Outcome::kOk) {
      s.strategy.observe(i, std::nullopt);  // unsupported: nothing evaluated, nothing counted
    } else {
      const bool library = !in_order && ctx.candidates[i]->kind() == Choice::Kind::kExtern;
      (library ? order : templates).push_back(i);
    }
  }
  order.insert(order.end(), templates.begin(), templates.end());
  Status result;
  {
    ThreadPool pool(ctx.options.jobs);
    // A terminal has one live line, and the measuring line below would end this one at once
    // ("compiled 0/N"): there, measuring's line is the one shown. Plain lines interleave.
    std::FILE* progress_to = ctx.options.progress;
    if (progress_to && ProgressDisplay::detect(progress_to).tty) progress_to = nullptr;
    ProgressLine progress(
        progress_to, {.title = ctx.title,
                      .header = fmt::format("{}: compiling {} candidates on {} threads", ctx.title,
                                            order.size(), pool.size()),
                      .doing = fmt::format("compiling on {} threads", pool.size()),
                      .done_word = "compiled",
                      .total = order.size()});
    const bool with_reference = reference && !s.prepared;
    if (with_reference) {
      pool.submit([&] {
        Status st = reference->compile(backend);
        const std::lock_guard lock(mu);
        ref_status = std::move(st);
        cv.notify_all();
      });
    }
    for (std::size_t i : order) {
      pool.submit([&, i] {
        // Past the time limit, what is still queued is left uncompiled (not evaluated).
        if (!stop) progress.step(!compile_candidate(ctx, backend, i, s.records[i]));
        const std::lock_guard lock(mu);
        ready.push_back(i);
        compiled[i] = 1;
        cv.notify_all();
      });
    }
    if (with_reference) {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return ref_status.has_value(); });
      result = reference_compile_status(ctx, *reference, *ref_status);
    }
    const auto t1 = Clock::now();
    if (result) result = s.prepare(reference);
    if (result && !order.empty()) {  // empty: resumed candidates only, nothing to measure
      RunOne one(ctx, s.runner, /*measure=*/true, s.records, s.stand_in, order.size());
      for (std::size_t k = 0; k < order.size() && !s.out_of_time(); ++k) {
        std::size_t i = 0;
        {
          std::unique_lock lock(mu);
          if (in_order) {
            i = order[k];
            cv.wait(lock, [&] { return compiled[i] != 0; });
          } else {
            cv.wait(lock, [&] { return !ready.empty(); });
            i = ready.front();
            ready.pop_front();
          }
        }
        s.finish(one, i);
      }
    }
    s.run.measure_s += seconds_since(t1);
    stop = true;
    pool.wait_idle();
  }
  s.run.compile_s += seconds_since(t0);  // the batch's wall time: its compiles end within it
  return result;
}

// "T: evaluated k of N (best so far NAME, TIME)" each time the search passes another tenth of
// its budget (of the candidates without one).
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
  s.run.strategy = resolved.name;
  s.run.max_evals = resolved.max_evals;
  s.run.candidates = n;
  // What an interrupted run evaluated counts against the budget from the start, whether or not
  // the strategy proposes it again.
  for (std::size_t i = 0; i < n; ++i) {
    if (s.is_resumed(i)) {
      s.evaluated[i] = 1;
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
    Status st = overlap ? run_batch_overlapped(s, backend, reference, batch)
                        : run_batch(s, backend, reference, batch);
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
  return s.run;
}

}  // namespace ktune
