// Resume: a selection keeps each candidate's outcome in the tuning cache as soon as the candidate
// is measured (TuningCache::store_partial), and a selection under the same key and settings takes
// those back instead of compiling and measuring the candidates again, so that a tuning killed by
// SIGKILL, a crash or Ctrl-C loses at most the candidate it was on. The partial rows are cleared
// once the finished record is stored. Also here: the SIGINT flag the CLI sets and the selection
// checks between candidates.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ktune/cache/tuning_cache.h"
#include "select/select_stages.h"
#include "select/stage_runner.h"

namespace ktune {

// Set from a signal handler (async-signal-safe: it writes a volatile sig_atomic_t), read by the
// selection between candidates. Once set, no candidate starts and no outcome is kept: an outcome
// seen after the interrupt may be the interrupt's doing (a worker killed by the terminal's SIGINT).
void note_interrupt() noexcept;
[[nodiscard]] bool interrupted() noexcept;

class ResumeSession {
 public:
  // Loads the partial rows of `key` measured with `settings` (none with write_cache off or
  // read_cache off: then nothing is kept either way). A row is taken only for a candidate of the
  // selection, same name and key, with an outcome that a finished run gives.
  ResumeSession(const SelectContext& ctx, TuningCache& cache, TuningKey key,
                MeasureSettings settings, bool has_reference);

  // The resumed records in place in `records`; "resuming: N of M candidates already measured"
  // on the progress stream. Per candidate, whether it was resumed: the search (search_loop.h)
  // neither compiles nor runs those, and feeds them to its strategy.
  [[nodiscard]] std::vector<char> resume(std::vector<CandidateRecord>& records);
  // After the search: the compile errors it met are kept. Resumed candidates that may be
  // re-measured by the decide stage or picked (verified again) are compiled now: those stages
  // need them loadable; the others stay uncompiled.
  void settle(const Backend& backend, std::vector<CandidateRecord>& records);

  // Keeps a finished candidate's outcome (a write that fails is a warning: the tuning goes on).
  void keep(const CandidateRecord& record);
  // Candidates measured by this process or an earlier one and kept.
  [[nodiscard]] std::size_t kept() const { return kept_keys_.size(); }
  // The finished record is stored: the partial rows go.
  void finish();

 private:
  const SelectContext& ctx_;
  TuningCache& cache_;
  TuningKey key_;
  MeasureSettings settings_;
  bool enabled_ = false;
  std::vector<std::optional<CandidateRecord>> resumed_;  // by candidate index
  std::set<std::string> kept_keys_;                      // choice keys
};

// The StageRunner the selection runs through: keeps each candidate's outcome as soon as run()
// measured it (through ResumeSession::keep), and starts no candidate after an interrupt.
class KeepingRunner final : public StageRunner {
 public:
  KeepingRunner(StageRunner& inner, ResumeSession& session) : inner_(inner), session_(session) {}
  [[nodiscard]] Status prepare(Choice* reference) override { return inner_.prepare(reference); }
  [[nodiscard]] Status adopt_stand_in(Choice& candidate) override;
  [[nodiscard]] CandidateRun run(Choice& choice, bool measure) override;
  [[nodiscard]] std::size_t devices() const override { return inner_.devices(); }
  // run() on a device, from one of several threads: the rows are kept one at a time.
  [[nodiscard]] CandidateRun run_on(std::size_t device, Choice& choice, bool measure) override;
  [[nodiscard]] Result<std::vector<std::vector<double>>> remeasure(
      const std::vector<Choice*>& choices, int rounds,
      const std::optional<BenchOptions>& round_bench) override {
    return inner_.remeasure(choices, rounds, round_bench);
  }
  [[nodiscard]] std::optional<CpuClock> cpu_clock() override { return inner_.cpu_clock(); }
  [[nodiscard]] int cores() override { return inner_.cores(); }

 private:
  StageRunner& inner_;
  ResumeSession& session_;
  // The row of a measured run, kept in the session (under keep_mu_).
  [[nodiscard]] CandidateRecord keep(const Choice& choice, const CandidateRun& r);

  std::optional<CandidateRecord> last_;  // the last candidate run() kept, until the next run()
  std::mutex keep_mu_;
};

// The error a selection ends with after an interrupt.
[[nodiscard]] Error interrupted_error(const std::string& title, std::size_t kept);

}  // namespace ktune
