// BenchmarkRequest and BenchmarkResponse: what one run of a candidate is asked to do and what it
// answered, in a worker or in ktune's own process alike. The worker protocol carries them as
// JSON (worker/worker_protocol.h); the request flow (device/serve.h) answers them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "ktune/bench/bench_options.h"
#include "ktune/bench/bench_stats.h"
#include "ktune/core/launch_spec.h"
#include "ktune/core/outcome.h"
#include "ktune/core/problem.h"
#include "ktune/tensor/compare.h"

namespace ktune {

struct BenchmarkRequest {
  std::uint64_t id = 0;
  std::string candidate;  // the choice's name, for messages
  LaunchSpec launch;      // what to run
  Problem problem;
  std::uint64_t seed = 0;
  // The reference's outputs, by one of two routes: a launch the worker runs itself before the
  // first candidate of a problem (every reference that has a LaunchSpec, on every device: the
  // parent never runs it when candidates are isolated), or a file written by the parent
  // (write_reference_file, in a private directory) for a reference that has none (an extern
  // followed by the host epilogue pass), which verifies on the uniform data set only.
  // Neither: outputs are checked only for poison, NaN, redzones and modified inputs.
  std::filesystem::path expected;
  std::optional<LaunchSpec> reference;
  std::optional<Tolerance> tolerance;  // empty: default_tolerance() per output dtype
  BenchOptions bench;
  bool measure = true;  // false: verify only
  // false: measure without verifying first, for a candidate that already passed on this
  // problem (re-measuring close calls); a failing run is still a launch_error.
  bool verify = true;
  // Early abandonment (issue 19): above 0, measuring stops after the first few timed runs
  // (runs_before_abandoning) when the fastest of them is above this many ns (measure_loop.h); the
  // answer is kAbandoned with those runs' statistics. The parent derives it from the best
  // candidate so far (select/abandon_rule.h); 0: measured to the full budget.
  double abandon_above_ns = 0;
};

struct BenchmarkResponse {
  std::uint64_t id = 0;
  Outcome outcome = Outcome::kOk;
  std::string message;
  std::optional<BenchStats> stats;  // when measured and ok, or abandoned (the runs it made)
  std::string output_tail;          // the worker's stdout/stderr tail (filled in by the parent)
  // The worker cannot serve another request (a sticky device error such as a CUDA illegal
  // address poisons its context): it exits after this response and the pool starts a fresh one.
  bool restart = false;
  // One run of the reference in ns, when this request prepared the problem with a reference
  // launch; 0 otherwise. What the parent derives deadlines from.
  double reference_ns = 0;
};

}  // namespace ktune
