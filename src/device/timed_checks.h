// TimedChecks: the timed runs of a candidate, each starting from poisoned outputs and checked
// after it, so that the timer cannot be cheated by skipping work on a repeated call (a kernel
// that remembers its argument pointers, or counts its calls, and returns at once). Wraps the
// device's SampleSource: before each timed run the outputs are poisoned again (outside the timed
// span: before the device's flush), after it the run is checked by check_run() against the
// reference (or, without one, for poison and NaN); the inputs, which are not reset between
// timed runs, at the last run of each batch.
//
// The first kAlwaysChecked timed runs are checked, and every later one while the time spent
// checking stays within a quarter of the timed runs' budget (BenchOptions::budget_ms); past
// both, the last run of each batch still is. So a result wrong on a call with probability p
// survives the two verification calls and the checked timed runs with probability
// (1 - p)^(2 + checked), and checking costs at most kAlwaysChecked checks plus a quarter of the
// budget. A check that fails ends the measurement: failed() then holds the outcome, with a
// message that says which timed run changed.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "bench/candidate_check.h"
#include "bench/measure_loop.h"

namespace ktune {

class TimedChecks final : public SampleSource {
 public:
  static constexpr int kAlwaysChecked = 10;

  // `source` times runs on `buffers`; `reference` (may be null) is what the outputs of a run
  // on `buffers` must match. All three outlive this.
  TimedChecks(SampleSource& source, CheckedBuffers& buffers, const ReferenceOutputs* reference,
              double budget_ms);

  Status warm_up(int count) override { return source_.warm_up(count); }
  // One run at a time: reset_outputs(), the source's sample, finish(), check_run().
  Status sample(int count, std::vector<double>* ns) override;
  std::string note() const override { return source_.note(); }

  // The failed check (outcome not kOk) when a timed run's outputs were wrong.
  [[nodiscard]] const CheckResult& failed() const { return failed_; }
  [[nodiscard]] int runs() const { return runs_; }
  [[nodiscard]] int checked() const { return checked_; }

 private:
  SampleSource& source_;
  CheckedBuffers& buffers_;
  const ReferenceOutputs* reference_;
  std::chrono::nanoseconds check_budget_;
  std::chrono::nanoseconds spent_{0};
  CheckResult failed_;
  int runs_ = 0;
  int checked_ = 0;
};

}  // namespace ktune
