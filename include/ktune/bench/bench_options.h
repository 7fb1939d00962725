// BenchOptions: how a benchmarker times one candidate, on any device kind: warm-up, a time
// budget, run counts, cache flushing.
#pragma once

#include <cstddef>

namespace ktune {

struct BenchOptions {
  int warmup_runs = 1;     // untimed runs first (page faults, lazy binding, caches)
  double budget_ms = 100;  // target total timed time per candidate
  int min_runs = 3;        // timed runs even when one run exceeds the budget
  int max_runs = 200;      // timed runs at most, however fast the kernel
  // Before each timed run, evict the kernel's data from every cache level, so that each run
  // starts cold and earlier runs cannot warm later ones. With flush ranges set, their cache
  // lines are flushed (clflush on x86: cost proportional to the data, not to the cache); without,
  // a buffer of flush_bytes is written.
  bool flush_cache = true;
  std::size_t flush_bytes = 0;  // 0: twice the last-level cache from sysfs, else 64 MiB (CPU);
                                // 0: twice the device's L2 (CUDA)
  // CUDA: each timed sample is one replay of a CUDA graph of this many back-to-back calls,
  // divided by the count, which hides launch cost from kernels shorter than a launch; 0: one
  // call per sample between events (with the L2 flushed before each).
  int graph_calls = 0;
};

}  // namespace ktune
