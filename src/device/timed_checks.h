// TimedChecks: the timed runs of a candidate, each starting from poisoned outputs and checked
// after it, so that the timer cannot be cheated by skipping work on a repeated call (a kernel
// that remembers its argument pointers, or counts its calls, and returns at once). Wraps the
// device's SampleSource: before each timed run the outputs are poisoned again (outside the timed
// span: before the device's flush), after it the run is checked by check_run() against the
// reference (or, without one, for poison and NaN); the inputs, which are not reset between
// timed runs, at the last run of each batch.
//
// Which runs are checked: the first `always` timed runs (kAlwaysChecked for a candidate's
// measurement, one for a round of the decide stage, whose many rounds each check their own) and
// the last run of each batch; every other run at random, with a probability that keeps the
// checks' expected time within kCheckShare of the timed runs' (the ratio of a run's time to a
// check's, measured as they go), but one in kMinCheckEvery at least (a check that costs more
// than a tiny kernel's run is still cheap in absolute terms). A candidate cannot tell which runs
// are checked, so one that behaves on the first calls and skips work later is caught on the first
// skipped run drawn, and one wrong with probability p per call survives the two verification calls
// and c checked runs with probability (1 - p)^(2 + c). A check that fails ends the measurement:
// failed() then holds the outcome, with a message that says which timed run changed.
#pragma once

#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "bench/candidate_check.h"
#include "bench/measure_loop.h"

namespace ktune {

class TimedChecks final : public SampleSource {
 public:
  static constexpr int kAlwaysChecked = 10;
  static constexpr double kCheckShare = 0.1;
  static constexpr int kMinCheckEvery = 16;

  // `source` times runs on `buffers`; `reference` (may be null) is what the outputs of a run
  // on `buffers` must match. All three outlive this.
  TimedChecks(SampleSource& source, CheckedBuffers& buffers, const ReferenceOutputs* reference,
              int always = kAlwaysChecked);

  Status warm_up(int count) override { return source_.warm_up(count); }
  // The runs in segments that end at a checked run: each run after reset_outputs() (the
  // source's sample_each), then finish() and check_run() at the segment's end.
  Status sample(int count, std::vector<double>* ns) override;
  std::string note() const override { return source_.note(); }

  // The failed check (outcome not kOk) when a timed run's outputs were wrong.
  [[nodiscard]] const CheckResult& failed() const { return failed_; }
  [[nodiscard]] int runs() const { return runs_; }
  [[nodiscard]] int checked() const { return checked_; }

 private:
  // Whether timed run `run` (0 for the first) is checked; `last`: the batch's last run.
  [[nodiscard]] bool draw_check(int run, bool last);

  SampleSource& source_;
  CheckedBuffers& buffers_;
  const ReferenceOutputs* reference_;
  int always_;
  double run_ns_ = 0;    // the timed runs' time so far
  double check_ns_ = 0;  // the checks' time so far
  std::mt19937_64 draw_;
  CheckResult failed_;
  int runs_ = 0;
  int checked_ = 0;
};

}  // namespace ktune
