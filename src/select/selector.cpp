// Selector: cache lookup, parallel compile, verify, measure, re-measure close calls, pick, record.
#include "ktune/select/selector.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <map>
#include <mutex>

#include "core/hash.h"
#include "core/thread_pool.h"
#include "select/candidate_runner.h"
#include "worker/worker.h"
#include "select/json_log.h"

namespace ktune {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void progress(std::FILE* f, const std::string& line) {
  if (f) {
    std::fputs(("ktune: " + line + "\n").c_str(), f);
    std::fflush(f);
  }
}

// Prints "what n/total" at most every 10% (and at the end), so long runs show they move.
class ProgressCounter {
 public:
  ProgressCounter(std::FILE* f, std::string what, std::size_t total)
      : f_(f), what_(std::move(what)), total_(total) {}
  void tick() {
    std::lock_guard lock(mu_);
    ++done_;
    const std::size_t step = std::max<std::size_t>(1, total_ / 10);
    if (done_ % step == 0 || done_ == total_) {
      progress(f_, fmt::format("{} {}/{}", what_, done_, total_));
    }
  }

 private:
  std::FILE* f_;
  std::string what_;
  std::size_t total_;
  std::size_t done_ = 0;
  std::mutex mu_;
};

std::string no_valid_choice_message(const TuningRecord& record) {
  std::map<std::string, int> counts;
  for (const CandidateRecord& c : record.candidates) counts[std::string(outcome_name(c.outcome))]++;
  std::string summary;
  for (const auto& [name, n] : counts)
    summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", n, name);
  std::string first;
  for (const CandidateRecord& c : record.candidates) {
    if (c.outcome != Outcome::kOk) {
      first = fmt::format("; first failure: {}: {}: {}", c.name, outcome_name(c.outcome),
                          c.message.substr(0, 300));
      break;
    }
  }
  return fmt::format("no valid choice among {} candidates ({}){}", record.candidates.size(),
                     summary, first);
}

}  // namespace

Selector::Selector(const Backend& backend, TuningCache& cache, SelectorOptions options)
    : backend_(backend), cache_(cache), options_(std::move(options)) {}

Selector::~Selector() = default;

int Selector::worker_restarts() const { return pool_ ? pool_->restarts() : 0; }

TuningKey Selector::key_for(const Problem& problem, const std::vector<ChoicePtr>& candidates,
                            const Choice* reference) const {
  KeyInputs in{problem.op, problem.key(), {}, KeyVerification{}, backend_.device_fingerprint(),
               backend_.toolchain_fingerprint()};
  for (const ChoicePtr& c : candidates) in.candidates.push_back(c->hash_key());
  if (reference) in.verification->reference = reference->hash_key();
  in.verification->tolerance = options_.tolerance;
  in.verification->seed = options_.seed;
  return make_tuning_key(in);
}

Result<Selection> Selector::select(const Problem& problem, std::vector<ChoicePtr>& candidates,
                                   Choice* reference) {
  const auto t_start = Clock::now();
  const std::string title = fmt::format("{}({})", problem.op, problem.name);
  Selection sel;
  sel.record.key = key_for(problem, candidates, reference);
  JsonLog log(options_.json_log);

  auto find_index = [&](const std::string& name) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (candidates[i]->name() == name) return i;
    }
    return std::nullopt;
  };

  if (options_.read_cache) {
    auto hit = cache_.lookup(sel.record.key);
    if (!hit) return std::unexpected(hit.error());
    if (*hit) {
      if (auto index = find_index((*hit)->winner)) {
        sel.record = std::move(**hit);
        sel.winner_index = *index;
        sel.from_cache = true;
        sel.select_s = seconds_since(t_start);
        if (options_.out) {
          std::fputs(format_autotune_table(title, sel.record, options_.table_rows, true).c_str(),
                     options_.out);
          std::fputs(
              fmt::format("Selected {} from the tuning cache in {:.4f} s (key {}); "
                          "compiled nothing, measured nothing\n",
                          sel.record.winner, sel.select_s, sel.record.key.digest().substr(0, 12))
                  .c_str(),
              options_.out);
        }
        log.selection(title, sel.record, true, sel.select_s);
        return sel;
      }
    }
  }

  // Records in candidate order; a candidate that fails a stage keeps that stage's outcome.
  std::vector<CandidateRecord>& recs = sel.record.candidates;
  recs.resize(candidates.size());
  std::vector<bool> alive(candidates.size(), true);
  auto fail = [&](std::size_t i, Outcome outcome, std::string message) {
    recs[i].outcome = outcome;
    recs[i].message = std::move(message);
    alive[i] = false;
  };
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    recs[i].choice_key = candidates[i]->hash_key();
    recs[i].name = candidates[i]->name();
    recs[i].info = candidates[i]->info();
    if (Status s = candidates[i]->supports(problem); !s)
      fail(i, Outcome::kUnsupported, s.error().message);
  }

  // Compile: every candidate and the reference, in parallel.
  const auto t_compile = Clock::now();
  {
    ThreadPool pool(options_.jobs);
    progress(options_.progress, fmt::format("{}: compiling {} candidates on {} threads", title,
                                            candidates.size(), pool.size()));
    ProgressCounter counter(options_.progress, "compiled", candidates.size());
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (!alive[i]) continue;
      pool.submit([&, i] {
        if (Status s = candidates[i]->compile(backend_); !s) {
          fail(i, Outcome::kCompileError, s.error().message);
        }
        recs[i].compile_s = candidates[i]->compile_s();
        counter.tick();
      });
    }
    Status ref_status;
    if (reference) pool.submit([&] { ref_status = reference->compile(backend_); });
    pool.wait_idle();
    if (!ref_status) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("{}: reference {} does not compile: {}", title,
                                    reference->name(), ref_status.error().message));
    }
  }
  sel.record.compile_s = seconds_since(t_compile);

  // Verify and measure, one candidate at a time (they share the machine's cores).
  const auto t_bench = Clock::now();
  if (options_.isolate && !pool_) pool_ = std::make_unique<WorkerPool>(options_.worker);
  CandidateRunner runner(backend_, problem, options_, options_.isolate ? pool_.get() : nullptr);
  if (Status s = runner.prepare(reference); !s) {
    return make_error(s.error().code, fmt::format("{}: {}", title, s.error().message));
  }
  const std::size_t n_alive = std::count(alive.begin(), alive.end(), true);
  const bool single = candidates.size() == 1;  // Inductor's shortcut: nothing to compare with
  ProgressCounter counter(options_.progress, "measured", n_alive);
  if (n_alive) {
    progress(options_.progress,
             fmt::format("{}: verifying and measuring {} candidates{}", title, n_alive,
                         options_.isolate ? " (generated code in a worker process)" : ""));
  }
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (!alive[i]) continue;
    RunResult r = runner.run(*candidates[i], !single);
    recs[i].info = candidates[i]->info();  // may say more once loaded (a library's variant)
    if (r.outcome != Outcome::kOk) {
      fail(i, r.outcome, r.message);
    } else {
      recs[i].stats = r.stats;
    }
    counter.tick();
  }

  // Close calls: measured again, alternating, so that a drift of the machine cannot decide.
  auto median = [&](std::size_t i) { return recs[i].stats ? recs[i].stats->median_ns : 0.0; };
  std::vector<std::size_t> ok;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (alive[i]) ok.push_back(i);
  }
  if (ok.empty()) {
    sel.record.bench_s = seconds_since(t_bench);
    for (const CandidateRecord& r : recs) log.candidate(title, r);
    return make_error(ErrorCode::kNoValidChoice,
                      fmt::format("{}: {}", title, no_valid_choice_message(sel.record)));
  }
  if (!single && ok.size() > 1) {
    const double best = median(*std::min_element(
        ok.begin(), ok.end(), [&](auto a, auto b) { return median(a) < median(b); }));
    std::vector<std::size_t> close;
    for (std::size_t i : ok) {
      if (median(i) <= best * (1 + options_.close_call_band)) close.push_back(i);
    }
    if (close.size() > 1) {
      progress(options_.progress,
               fmt::format("{}: re-measuring {} close calls", title, close.size()));
      std::vector<Choice*> choices;
      for (std::size_t i : close) choices.push_back(candidates[i].get());
      if (auto again = runner.remeasure(choices, options_.close_call_rounds)) {
        for (std::size_t j = 0; j < close.size(); ++j) recs[close[j]].stats = (*again)[j];
      } else {
        progress(options_.progress, fmt::format("{}: keeping the first measurements: {}", title,
                                                again.error().message));
      }
    }
  }
  // Ties on the median go to the earlier candidate: deterministic for a given candidate list.
  sel.winner_index = *std::min_element(ok.begin(), ok.end(),
                                       [&](auto a, auto b) { return median(a) < median(b); });
  sel.record.winner = recs[sel.winner_index].name;
  for (const CandidateRecord& r : recs) log.candidate(title, r);  // final statistics
  sel.record.bench_s = seconds_since(t_bench);
  sel.record.created_unix = static_cast<std::int64_t>(std::time(nullptr));
  if (options_.write_cache) {
    if (Status s = cache_.store(sel.record); !s) return std::unexpected(s.error());
  }
  sel.select_s = seconds_since(t_start);
  if (options_.out) {
    std::fputs(format_autotune_table(title, sel.record, options_.table_rows, false).c_str(),
               options_.out);
    std::fputs(
        fmt::format("Selected {} ({})\n", sel.record.winner, recs[sel.winner_index].info).c_str(),
        options_.out);
  }
  log.selection(title, sel.record, false, sel.select_s);
  return sel;
}

Result<std::vector<BenchStats>> Selector::measure_again(const Problem& problem,
                                                        const std::vector<Choice*>& choices,
                                                        Choice* reference,
                                                        const BenchOptions& round_bench,
                                                        int rounds) {
  if (options_.isolate && !pool_) pool_ = std::make_unique<WorkerPool>(options_.worker);
  CandidateRunner runner(backend_, problem, options_, options_.isolate ? pool_.get() : nullptr);
  if (Status s = runner.prepare(reference); !s) return std::unexpected(s.error());
  return runner.remeasure(choices, rounds, round_bench);
}

}  // namespace ktune
