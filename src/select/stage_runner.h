// StageRunner: how the stages of Selector::select reach the candidates once they are compiled.
// The selector runs them through CandidateStageRunner (in process or in a worker); the unit tests
// of test/unit/select/ through a fake with fixed times and outcomes, so that the pick, the close
// calls and the bookkeeping can be checked without a compiler or a clock.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "ktune/bench/bench_options.h"
#include "ktune/bench/bench_stats.h"
#include "ktune/choice/choice.h"
#include "ktune/core/outcome.h"
#include "ktune/core/status.h"
#include "select/machine_load.h"

namespace ktune {

// What running one candidate gave.
struct CandidateRun {
  Outcome outcome = Outcome::kOk;
  std::string message;              // why, when not ok
  std::optional<BenchStats> stats;  // when measured and ok
};

class StageRunner {
 public:
  virtual ~StageRunner() = default;
  // Runs the reference (null: none) before any candidate. A failure ends the selection: nothing
  // can be verified against a reference that does not run soundly.
  [[nodiscard]] virtual Status prepare(Choice* reference) = 0;
  // Without a reference: `candidate`, which has just passed run() (checked for NaN, unwritten
  // outputs, redzones and modified inputs only), becomes the stand-in reference, and every later
  // run() compares with its outputs as with a reference's. A failure leaves no reference.
  [[nodiscard]] virtual Status adopt_stand_in(Choice& candidate) = 0;
  // Verifies the candidate against the reference and, with `measure`, measures it, on the
  // first device.
  [[nodiscard]] virtual CandidateRun run(Choice& choice, bool measure) = 0;
  // Devices the candidates can be spread over (SelectorOptions::devices); 1 unless several.
  [[nodiscard]] virtual std::size_t devices() const { return 1; }
  // run() on device `device` (< devices()). Calls for different devices may run at once, from
  // different threads; calls for one device come from one thread at a time. Everything else
  // (prepare, adopt_stand_in, run, remeasure) is called while no run_on is under way.
  [[nodiscard]] virtual CandidateRun run_on(std::size_t device, Choice& choice, bool measure) {
    (void)device;
    return run(choice, measure);
  }
  // Whether `choice` must run alone (it runs in this process, on the cores the other devices'
  // workers measure on): a multi-device batch runs such candidates before the others, one at a
  // time, on the first device.
  [[nodiscard]] virtual bool runs_alone(const Choice& choice) const {
    (void)choice;
    return false;
  }
  // Measures candidates that passed run() again, `rounds` rounds alternating between them; each
  // one's round medians, in round order, in the order given. `round_bench`: how each round
  // measures; empty: the runner's short default.
  [[nodiscard]] virtual Result<std::vector<std::vector<double>>> remeasure(
      const std::vector<Choice*>& choices, int rounds,
      const std::optional<BenchOptions>& round_bench) = 0;
  // The machine's and ktune's CPU time now (select/machine_load.h), for the load of other
  // processes while measuring; nullopt: unknown.
  [[nodiscard]] virtual std::optional<CpuClock> cpu_clock() { return read_cpu_clock(); }
  // Cores the candidates are measured on.
  [[nodiscard]] virtual int cores() { return usable_cores(); }
};

}  // namespace ktune
