// ResumeSession, KeepingRunner and the interrupt flag (select/resume.h).
#include "select/resume.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <set>
#include <utility>

namespace ktune {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;

// A row a finished run could have written: not "not evaluated", and a measured time where the
// candidate is valid (the same rule check_record applies to a stored pick).
bool finished(const CandidateRecord& r) {
  if (r.outcome == Outcome::kNotEvaluated) return false;
  if (r.outcome != Outcome::kOk) return true;
  return r.stats && std::isfinite(r.stats->median_ns) && r.stats->median_ns > 0 &&
         r.stats->runs >= 1;
}

double median_of(const CandidateRecord& r) { return r.stats ? r.stats->median_ns : 0.0; }

}  // namespace

void note_interrupt() noexcept { g_interrupted = 1; }
bool interrupted() noexcept { return g_interrupted != 0; }

Error interrupted_error(const std::string& title, std::size_t kept) {
  return Error{ErrorCode::kUnavailable,
               fmt::format("{}: interrupted: {} candidates measured are kept; rerun the same "
                           "command to resume",
                           title, kept)};
}

ResumeSession::ResumeSession(const SelectContext& ctx, TuningCache& cache, TuningKey key,
                             MeasureSettings settings, bool has_reference)
    : ctx_(ctx),
      cache_(cache),
      key_(std::move(key)),
      settings_(settings),
      enabled_(ctx.options.read_cache && ctx.options.write_cache),
      resumed_(ctx.candidates.size()) {
  if (!enabled_) return;
  auto rows = cache_.partials(key_, settings_);
  if (!rows) {
    cache_.warn(fmt::format("{}: partial records not read ({}); measuring every candidate",
                            ctx.title, rows.error().message));
    return;
  }
  // Without a reference, the first valid candidate is what the others were compared with: it is
  // run again, so that it stands in again for the candidates still to measure.
  bool stand_in_left = !has_reference;
  for (std::size_t i = 0; i < ctx.candidates.size(); ++i) {
    const Choice& c = *ctx.candidates[i];
    const auto row = std::find_if(rows->begin(), rows->end(), [&](const CandidateRecord& r) {
      return r.choice_key == c.hash_key() && r.name == c.name();
    });
    if (row == rows->end() || !finished(*row)) continue;
    if (row->outcome == Outcome::kOk && stand_in_left) {
      stand_in_left = false;
      continue;
    }
    resumed_[i] = *row;
    resumed_[i]->metrics.clear();  // recomputed from the times at the end (apply_metrics)
  }
}

std::vector<char> ResumeSession::resume(std::vector<CandidateRecord>& records) {
  std::vector<char> flags(records.size(), 0);
  std::size_t resumed = 0;
  for (std::size_t i = 0; i < records.size(); ++i) {
    // A candidate that cannot take the problem is settled by initial_records, resumed or not.
    if (resumed_[i] && records[i].outcome == Outcome::kOk) {
      records[i] = *resumed_[i];
      flags[i] = 1;
      ++resumed;
    } else {
      resumed_[i].reset();
    }
  }
  for (const auto& r : resumed_) {
    if (r) kept_keys_.insert(r->choice_key);
  }
  if (resumed > 0) {
    select_progress(ctx_.options.progress,
                    fmt::format("{}: resuming: {} of {} candidates already measured", ctx_.title,
                                resumed, records.size()));
  }
  return flags;
}

void ResumeSession::settle(const Backend& backend, std::vector<CandidateRecord>& records) {
  for (std::size_t i = 0; i < records.size(); ++i) {
    // A compile error is settled as a measurement is; one seen after Ctrl-C may be the
    // interrupt's (the compiler got the terminal's SIGINT), and is not kept.
    if (!resumed_[i] && records[i].outcome == Outcome::kCompileError) keep(records[i]);
  }
  if (std::none_of(resumed_.begin(), resumed_.end(), [](const auto& r) { return r.has_value(); })) {
    return;
  }
  // The decide stage re-measures the close calls and re-verification runs the pick: a resumed
  // candidate among them is compiled (a code-cache hit when its artifact is still there). The
  // widest band and count the decide stage may use, so that a noisy start finds them compiled.
  const SelectorOptions& o = ctx_.options;
  std::vector<std::size_t> needed =
      deciding_candidates(records, std::max(o.close_call_band, o.noisy_band),
                          std::max(o.decide_max, o.noisy_decide_max));
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (records[i].outcome != Outcome::kOk || median_of(records[i]) <= 0) continue;
    if (!best || median_of(records[i]) < median_of(records[*best])) best = i;
  }
  if (best) needed.push_back(*best);
  std::sort(needed.begin(), needed.end());
  needed.erase(std::unique(needed.begin(), needed.end()), needed.end());
  for (std::size_t i : needed) {
    if (!resumed_[i]) continue;
    Choice& c = *ctx_.candidates[i];
    if (Status s = c.compile(backend); !s) {
      records[i].outcome = Outcome::kCompileError;
      records[i].message = s.error().message;
    }
  }
}

void ResumeSession::keep(const CandidateRecord& record) {
  if (!enabled_ || interrupted()) return;
  if (Status s = cache_.store_partial(key_, settings_, record); !s) {
    cache_.warn(fmt::format("{}: {} not kept for a resume: {}", ctx_.title, record.name,
                            s.error().message));
    return;
  }
  kept_keys_.insert(record.choice_key);
}

void ResumeSession::finish() {
  if (!enabled_) return;
  if (Status s = cache_.clear_partials(key_); !s) {
    cache_.warn(fmt::format("{}: partial records not cleared: {}", ctx_.title, s.error().message));
  }
}

CandidateRun KeepingRunner::run(Choice& choice, bool measure) {
  last_.reset();
  if (interrupted()) return {Outcome::kNotEvaluated, "interrupted", std::nullopt};
  CandidateRun r = inner_.run(choice, measure);
  // Only the run stage measures; re-verification (measure false) is part of the pick.
  if (measure) last_ = keep(choice, r);
  return r;
}

CandidateRun KeepingRunner::run_on(std::size_t device, Choice& choice, bool measure) {
  if (interrupted()) return {Outcome::kNotEvaluated, "interrupted", std::nullopt};
  CandidateRun r = inner_.run_on(device, choice, measure);
  if (measure) (void)keep(choice, r);
  return r;
}

CandidateRecord KeepingRunner::keep(const Choice& choice, const CandidateRun& r) {
  CandidateRecord kept{choice.hash_key(), choice.name(), choice.info(),     r.outcome,
                       r.message,         r.stats,       choice.compile_s()};
  const std::lock_guard lock(keep_mu_);
  session_.keep(kept);
  return kept;
}

Status KeepingRunner::adopt_stand_in(Choice& candidate) {
  Status s = inner_.adopt_stand_in(candidate);
  // run_stage fails a candidate that cannot stand in; the row kept says the same.
  if (!s && last_ && last_->name == candidate.name()) {
    last_->outcome = Outcome::kUnsupported;
    last_->message =
        fmt::format("cannot stand in for the missing reference: {}", s.error().message);
    last_->stats.reset();
    session_.keep(*last_);
  }
  return s;
}

}  // namespace ktune
