// The candidate stages of a selection: records, compile, run, pick, re-verify the pick (the
// decide stage and the pick's confidence: decide_stage.cpp).
#include "select/select_stages.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <thread>
#include <utility>

#include "core/thread_pool.h"
#include "core/trace.h"
#include "core/utf8.h"
#include "select/progress_line.h"
#include "select/resume.h"

namespace ktune {
namespace {

bool alive(const CandidateRecord& r) { return r.outcome == Outcome::kOk; }

void fail(CandidateRecord& r, Outcome outcome, std::string message) {
  r.outcome = outcome;
  r.message = std::move(message);
}

// The first median, 0 for a candidate not measured.
double median(const CandidateRecord& r) { return r.stats ? r.stats->median_ns : 0.0; }

std::vector<std::size_t> alive_indices(const std::vector<CandidateRecord>& records) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (alive(records[i])) out.push_back(i);
  }
  return out;
}

std::string no_valid_choice_message(const std::vector<CandidateRecord>& records) {
  std::map<std::string, int> counts;
  for (const CandidateRecord& c : records) counts[std::string(outcome_name(c.outcome))]++;
  std::string summary;
  for (const auto& [name, n] : counts)
    summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", n, name);
  std::string first;
  for (const CandidateRecord& c : records) {
    if (c.outcome != Outcome::kOk) {
      // A compiler's message whole (the backends bound it: 20 lines, 8 KiB): when nothing
      // compiled, it is what the user reads, its notes at the end included.
      const std::size_t keep = c.outcome == Outcome::kCompileError ? 8192 : 300;
      first = fmt::format("; first failure: {}: {}: {}", c.name, outcome_name(c.outcome),
                          utf8_prefix(c.message, keep));
      break;
    }
  }
  return fmt::format("no valid choice among {} candidates ({}){}", records.size(), summary, first);
}

// Where the run stage runs the candidates, for its header line.
std::string where_it_runs(const SelectContext& ctx, const StageRunner& runner) {
  if (!ctx.options.isolate) return "";
  if (runner.devices() < 2) return " (generated code in a worker process)";
  std::vector<std::string> names;
  for (const DeviceSlot& d : ctx.options.devices) names.push_back(d.name);
  return fmt::format(" on {} devices at once ({}), one worker each", runner.devices(),
                     fmt::join(names, ", "));
}

}  // namespace

std::vector<CandidateRecord> initial_records(const SelectContext& ctx) {
  std::vector<CandidateRecord> records(ctx.candidates.size());
  for (std::size_t i = 0; i < ctx.candidates.size(); ++i) {
    const Choice& c = *ctx.candidates[i];
    records[i].choice_key = c.hash_key();
    records[i].name = c.name();
    records[i].info = c.info();
    records[i].params = c.params();
    if (Status s = c.supports(ctx.problem); !s)
      fail(records[i], Outcome::kUnsupported, s.error().message);
  }
  return records;
}

bool compile_candidate(const SelectContext& ctx, const Backend& backend, std::size_t i,
                       CandidateRecord& record) {
  if (interrupted()) {  // Ctrl-C: the compiles not started yet are not started
    fail(record, Outcome::kNotEvaluated, "interrupted");
    return false;
  }
  Choice& c = *ctx.candidates[i];
  trace::Span span("compile", "compile", c.name());
  Status s = c.compile(backend);
  if (!s) fail(record, Outcome::kCompileError, s.error().message);
  if (s && c.artifact() != nullptr) record.artifact = c.artifact()->key;
  record.compile_s = c.compile_s();
  return static_cast<bool>(s);
}

Status reference_compile_status(const SelectContext& ctx, const Choice& reference,
                                const Status& compiled) {
  if (compiled) return {};
  return make_error(ErrorCode::kInvalidArgument,
                    fmt::format("{}: reference {} does not compile: {}", ctx.title,
                                reference.name(), compiled.error().message));
}

Status compile_stage(const SelectContext& ctx, const Backend& backend, Choice* reference,
                     std::vector<CandidateRecord>& records) {
  std::vector<std::size_t> all(ctx.candidates.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  return compile_subset(ctx, backend, reference, records, all);
}

Status compile_subset(const SelectContext& ctx, const Backend& backend, Choice* reference,
                      std::vector<CandidateRecord>& records,
                      const std::vector<std::size_t>& subset) {
  ThreadPool pool(ctx.options.jobs);
  ProgressLine progress(ctx.options.progress,
                        {.title = ctx.title,
                         .header = fmt::format("{}: compiling {} candidates on {} threads",
                                               ctx.title, subset.size(), pool.size()),
                         .doing = fmt::format("compiling on {} threads", pool.size()),
                         .done_word = "compiled",
                         .total = subset.size()});
  // Task i writes records[i] only, and this thread reads no record until the pool is idle: the
  // records are separate objects, so no two threads touch one memory location (the bits of a
  // std::vector<bool> would share words).
  for (std::size_t i : subset) {
    if (!alive(records[i])) {
      progress.step(/*failed=*/true);  // unsupported: counted, so that the count reaches total
      continue;
    }
    pool.submit(
        [&, i] { progress.step(/*failed=*/!compile_candidate(ctx, backend, i, records[i])); });
  }
  Status ref_status;
  if (reference) pool.submit([&] { ref_status = reference->compile(backend); });
  pool.wait_idle();
  if (reference) return reference_compile_status(ctx, *reference, ref_status);
  return {};
}

RunOne::RunOne(const SelectContext& ctx, StageRunner& runner, bool measure,
               std::vector<CandidateRecord>& records, std::optional<std::string>* stand_in,
               std::size_t total)
    : ctx_(ctx),
      runner_(runner),
      measure_(measure),
      records_(records),
      stand_in_(stand_in),
      progress_(ctx.options.progress,
                {.title = ctx.title,
                 .header = fmt::format("{}: verifying and measuring {} candidates{}", ctx.title,
                                       total, where_it_runs(ctx, runner)),
                 .doing = measure ? "verifying and measuring" : "verifying",
                 .done_word = "measured",
                 .total = total}) {}

bool RunOne::run(std::size_t i) {
  Choice& c = *ctx_.candidates[i];
  CandidateRun r = runner_.run(c, measure_);
  // Candidates run in candidate order, so every one before the stand-in has failed already
  // and every one after it is compared with it: none goes unchecked.
  if (r.outcome == Outcome::kOk && stand_in_ && !*stand_in_) {
    if (Status s = runner_.adopt_stand_in(c); s) {
      *stand_in_ = c.name();
      select_progress(ctx_.options.progress,
                      fmt::format("{}: {}", ctx_.title, no_reference_note(c.name())));
    } else {
      r = {Outcome::kUnsupported,
           fmt::format("cannot stand in for the missing reference: {}", s.error().message),
           std::nullopt};
    }
  }
  const std::lock_guard lock(mu_);
  return finish(i, std::move(r));
}

bool RunOne::run_on(std::size_t device, std::size_t i) {
  CandidateRun r = runner_.run_on(device, *ctx_.candidates[i], measure_);
  const std::lock_guard lock(mu_);
  return finish(i, std::move(r));
}

bool RunOne::finish(std::size_t i, CandidateRun r) {
  const Choice& c = *ctx_.candidates[i];
  records_[i].info = c.info();  // may say more once loaded (a library's variant)
  const bool ok = r.outcome == Outcome::kOk;
  if (!ok) {
    fail(records_[i], r.outcome, std::move(r.message));
    // Abandoned: its partial statistics stay in the record (the table shows its median); it is
    // not alive, so no later stage picks, re-measures or re-verifies it.
    if (r.outcome == Outcome::kAbandoned) records_[i].stats = r.stats;
  } else {
    records_[i].stats = r.stats;
    const double ns = median(records_[i]);
    if (ns > 0 && (best_ns_ == 0 || ns < best_ns_)) {
      best_ns_ = ns;
      progress_.best(c.name(), ns);
    }
  }
  progress_.step(/*failed=*/!ok);
  return ok;
}

std::vector<std::size_t> spread_over_devices(
    RunOne& one, std::size_t devices, const std::function<std::optional<std::size_t>()>& next,
    const std::function<bool()>& stop) {
  std::vector<std::size_t> taken;
  std::mutex mu;  // next, stop and taken
  // Without a reference, the stand-in is the first candidate to pass in the order handed out,
  // as on one device; it runs here, alone, and is adopted by every device before any other runs.
  while (one.needs_stand_in()) {
    if (stop()) return taken;
    const std::optional<std::size_t> i = next();
    if (!i) return taken;
    taken.push_back(*i);
    one.run(*i);
  }
  const auto serve = [&](std::size_t device) {
    for (;;) {
      std::optional<std::size_t> i;
      {
        const std::lock_guard lock(mu);
        if (stop()) return;
        i = next();
        if (!i) return;
        taken.push_back(*i);
      }
      one.run_on(device, *i);
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(devices);
  for (std::size_t d = 1; d < devices; ++d) threads.emplace_back(serve, d);
  serve(0);
  for (std::thread& t : threads) t.join();
  return taken;
}

void run_stage(const SelectContext& ctx, StageRunner& runner, bool measure,
               std::vector<CandidateRecord>& records, std::optional<std::string>* stand_in) {
  const std::vector<std::size_t> todo = alive_indices(records);
  if (todo.empty()) return;
  RunOne one(ctx, runner, measure, records, stand_in, todo.size());
  if (runner.devices() > 1) {
    std::size_t k = 0;
    (void)spread_over_devices(
        one, runner.devices(),
        [&]() -> std::optional<std::size_t> {
          if (k == todo.size()) return std::nullopt;
          return todo[k++];
        },
        [] { return false; });
    return;
  }
  for (std::size_t i : todo) one.run(i);
}

Result<std::size_t> pick_stage(const std::vector<CandidateRecord>& records,
                               const Decision* decision) {
  const std::vector<std::size_t> ok = alive_indices(records);
  if (ok.empty()) return make_error(ErrorCode::kNoValidChoice, no_valid_choice_message(records));
  const auto rank = [&](std::size_t i) {
    return std::pair(decision ? decision->tier(i) : 0, median(records[i]));
  };
  // min_element keeps the first of equal elements: ties go to the earlier candidate.
  return *std::min_element(ok.begin(), ok.end(),
                           [&](std::size_t a, std::size_t b) { return rank(a) < rank(b); });
}

Result<std::size_t> reverify_stage(const SelectContext& ctx, StageRunner& runner,
                                   std::vector<CandidateRecord>& records,
                                   const Decision& decision) {
  const int runs = std::max(ctx.options.reverify_runs, 0);
  for (;;) {
    auto pick = pick_stage(records, &decision);
    if (!pick || runs == 0) return pick;
    Choice& c = *ctx.candidates[*pick];
    // Plain mode says nothing here unless the pick fails (as it always did).
    ProgressLine progress(ctx.options.progress, {.title = ctx.title,
                                                 .doing = "re-verifying " + c.name(),
                                                 .done_word = "re-verified " + c.name(),
                                                 .plain_steps = false,
                                                 .total = static_cast<std::size_t>(runs)});
    bool passed = true;
    for (int k = 1; k <= runs && passed; ++k) {
      CandidateRun r = runner.run(c, /*measure=*/false);
      progress.step(/*failed=*/r.outcome != Outcome::kOk);
      if (r.outcome == Outcome::kOk) continue;
      passed = false;
      select_progress(ctx.options.progress,
                      fmt::format("{}: the pick {} failed verification {} of {} after timing "
                                  "({}); picking the next",
                                  ctx.title, c.name(), k, runs, outcome_name(r.outcome)));
      fail(records[*pick], r.outcome,
           fmt::format("failed re-verification {} of {} after timing: {}", k, runs, r.message));
    }
    if (passed) return pick;
  }
}

}  // namespace ktune
