// The selection as a script of stages, and the stages around the candidates: lookup, record,
// report.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <ctime>

#include "core/trace.h"
#include "select/device_lock.h"
#include "select/json_log.h"
#include "select/progress_line.h"
#include "select/resume.h"
#include "select/search_loop.h"
#include "select/select_stages.h"

namespace ktune {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The options' metrics at each measured candidate's median (its final one: the decide stage's
// where it ran), in place of what the records held; finite values only.
void apply_metrics(const SelectContext& ctx, std::vector<CandidateRecord>& records) {
  if (!ctx.options.metrics) return;
  const std::vector<Metric> metrics = ctx.options.metrics(ctx.problem);
  if (metrics.empty()) return;
  for (CandidateRecord& r : records) {
    r.metrics.clear();
    if (r.outcome != Outcome::kOk || !r.stats || r.stats->median_ns <= 0) continue;
    for (const Metric& m : metrics) {
      const double v = m.value(r.stats->median_ns / 1e9);
      if (std::isfinite(v)) r.metrics.push_back({m.name, v});
    }
  }
}

// What a cache lookup answers: a selection or an error to return, or nothing (tune).
std::optional<Result<Selection>> answered(Result<std::optional<Selection>> hit) {
  if (!hit) return Result<Selection>(std::unexpected(hit.error()));
  if (*hit) return Result<Selection>(std::move(**hit));
  return std::nullopt;
}

}  // namespace

std::string selection_title(const Problem& problem) {
  return fmt::format("{}({})", problem.op, problem.name);
}

void select_progress(std::FILE* f, const std::string& line) { progress_note(f, line); }

Result<std::optional<Selection>> lookup_stage(TuningCache& cache, const TuningKey& key,
                                              const std::vector<ChoicePtr>& candidates) {
  // The rows must be exactly these candidates and the winner valid in its own row
  // (check_record): a record cut short or edited is tuned again, not served.
  std::vector<CandidateId> ids;
  ids.reserve(candidates.size());
  for (const ChoicePtr& c : candidates) ids.push_back({c->name(), c->hash_key()});
  auto hit = lookup_checked(cache, key, ids);
  if (!hit) return std::unexpected(hit.error());
  if (!*hit) return std::optional<Selection>();
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i]->name() == (*hit)->winner) {
      Selection sel;
      sel.record = std::move(**hit);
      sel.winner_index = i;
      sel.from_cache = true;
      return sel;
    }
  }
  return std::optional<Selection>();  // the winner is gone: tune again
}

Status record_stage(const SelectorOptions& options, TuningCache& cache, Selection& selection) {
  TuningRecord& record = selection.record;
  record.winner = record.candidates[selection.winner_index].name;
  record.created_unix = static_cast<std::int64_t>(std::time(nullptr));
  if (options.write_cache) return cache.store(record);
  return {};
}

void report_stage(const SelectContext& ctx, const Selection& sel, JsonLog& log) {
  if (std::FILE* out = ctx.options.out) {
    std::fputs(format_autotune_table(ctx.title, sel.record, ctx.options.table_rows, sel.from_cache)
                   .c_str(),
               out);
    const std::string line =
        sel.from_cache ? fmt::format(
                             "Selected {} from the tuning cache in {:.4f} s (key {}); "
                             "compiled nothing, measured nothing\n",
                             sel.record.winner, sel.select_s, sel.record.key.digest().substr(0, 12))
                       : fmt::format("Selected {} ({})\n", sel.record.winner,
                                     sel.record.candidates[sel.winner_index].info);
    std::fputs(line.c_str(), out);
    if (sel.record.confidence && !sel.record.confidence->trusted) {
      std::fputs(untrusted_warning(ctx.title, *sel.record.confidence).c_str(), out);
    }
  }
  log.selection(ctx.title, sel.record, sel.from_cache, sel.select_s);
}

namespace {

// `say_why`: a budgeted pick that does not answer is noted (not where the caller only asks).
Result<std::optional<Selection>> cached_selection_since(const SelectContext& ctx,
                                                        TuningCache& cache, const TuningKey& key,
                                                        Clock::time_point t_start, JsonLog& log,
                                                        bool say_why) {
  auto hit = lookup_stage(cache, key, ctx.candidates);
  if (!hit || !*hit) return hit;
  if (!record_answers((*hit)->record, ctx.options.search)) {
    if (!say_why) return std::optional<Selection>();
    select_progress(ctx.options.progress,
                    fmt::format("{}: the tuning cache's pick was made by a budgeted search; "
                                "measuring every candidate as asked",
                                ctx.title));
    return std::optional<Selection>();
  }
  Selection& sel = **hit;
  // The spec's metrics as they are now, over the stored times: a metric edited since the
  // tuning shows its new value without tuning again (metrics are not part of the key).
  apply_metrics(ctx, sel.record.candidates);
  sel.select_s = seconds_since(t_start);
  report_stage(ctx, sel, log);
  return hit;
}

}  // namespace

Result<std::optional<Selection>> cached_selection(const SelectContext& ctx, TuningCache& cache,
                                                  const TuningKey& key) {
  const auto t_start = Clock::now();
  JsonLog log(ctx.options.json_log);
  return cached_selection_since(ctx, cache, key, t_start, log, /*say_why=*/false);
}

Result<Selection> select_with(const SelectContext& ctx, const Backend& backend, TuningCache& cache,
                              const TuningKey& key, Choice* reference, StageRunner& inner) {
  const auto t_start = Clock::now();
  JsonLog log(ctx.options.json_log);

  const auto cached = [&] {
    return cached_selection_since(ctx, cache, key, t_start, log, /*say_why=*/true);
  };
  if (ctx.options.read_cache) {
    if (auto done = answered(cached())) return std::move(*done);
  }
  // One tuner per device (device_lock.h); one that waited is answered by the cache when the
  // holder tuned this same problem.
  auto device =
      DeviceLock::acquire(ctx.options.lock_dir, device_lock_name(backend), ctx.options.progress);
  if (!device) return std::unexpected(device.error());
  if (device->waited() && ctx.options.read_cache) {
    if (auto done = answered(cached())) return std::move(*done);
  }

  Selection sel;
  sel.record.key = key;
  sel.record.spec = ctx.options.spec_name;
  sel.record.problem_name = ctx.problem.name;
  sel.record.settings = measure_settings(ctx.options);
  std::vector<CandidateRecord>& records = sel.record.candidates;
  records = initial_records(ctx);
  // Candidates measured before a kill or crash are taken from their partial rows (resume.h);
  // the search measures only the others, and each outcome is kept as it finishes.
  ResumeSession resume(ctx, cache, key, *sel.record.settings, reference != nullptr);
  const std::vector<char> resumed = resume.resume(records);
  KeepingRunner runner(inner, resume);

  // A single candidate is measured too, though nothing competes with it (Inductor skips it):
  // whoever tunes asks for its time, in the table, the JSON log and the record, and a cache hit
  // later serves that time. Only the decide stage, which compares, is left out.
  const bool single = ctx.candidates.size() == 1;
  const LoadWatch load{runner.cpu_clock(), runner.cores()};
  // Without a reference, the first valid candidate stands in for one (run_stage), loudly.
  std::optional<std::string> stand_in;
  // Compile and measure what the search strategy proposes (every candidate unless budgeted),
  // overlapped on devices (search_loop.h). A resumed run's strategy is fed what was measured
  // before, so that it goes on where it was, within what is left of the budget.
  trace::Span search_span("search", "select", ctx.title);
  auto searched =
      search_stage(ctx, backend, reference, runner, records, reference ? nullptr : &stand_in,
                   /*overlap=*/backend.kind() != DeviceKind::kCpu, resumed);
  if (!searched) return std::unexpected(searched.error());
  sel.record.compile_s = searched->compile_s;
  search_span.end();
  const auto t_bench = Clock::now();
  resume.settle(backend, records);
  if (interrupted()) return std::unexpected(interrupted_error(ctx.title, resume.kept()));
  sel.record.stand_in = stand_in;
  Decision decision;
  if (!single) {
    trace::Span span("decide", "select", ctx.title);
    decision = decide_stage(ctx, runner, records, load,
                            searched->decided_ahead ? &*searched->decided_ahead : nullptr);
  }
  trace::Span reverify_span("reverify", "select", ctx.title);
  auto winner = reverify_stage(ctx, runner, records, decision);
  reverify_span.end();
  if (interrupted()) return std::unexpected(interrupted_error(ctx.title, resume.kept()));
  apply_metrics(ctx, records);
  for (const CandidateRecord& r : records) log.candidate(ctx.title, r);  // final statistics
  sel.record.bench_s = searched->measure_s + seconds_since(t_bench);
  if (!winner) {
    return make_error(winner.error().code,
                      fmt::format("{}: {}", ctx.title, winner.error().message));
  }
  sel.winner_index = *winner;
  sel.record.confidence =
      pick_confidence(ctx, records, decision, *winner, load.others(runner), load.cores);
  if (Status s = record_stage(ctx.options, cache, sel); !s) return std::unexpected(s.error());
  resume.finish();
  sel.select_s = seconds_since(t_start);
  report_stage(ctx, sel, log);
  return sel;
}

}  // namespace ktune
