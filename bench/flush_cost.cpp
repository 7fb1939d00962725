// What one cache flush before a timed run costs (docs/benchmarks.md, bench/flush_cost.sh):
//   BM_FlushTargeted    CpuBenchmarker with the problem's buffers as flush ranges (clflushopt
//                       over them, clflush without it): 64 MiB, the skinny GEMM's B
//   BM_FlushWholeCache  CpuBenchmarker without ranges: writes twice the last-level cache
// Each iteration is one measure() of an empty kernel with one timed run and no warm-up, so it is
// one flush plus a negligible run.
#include <benchmark/benchmark.h>

#include <vector>

#include "ktune/bench/cpu_benchmarker.h"

namespace {

using namespace ktune;

BenchOptions one_run() {
  BenchOptions o;
  o.warmup_runs = 0;
  o.min_runs = 1;
  o.max_runs = 1;
  o.budget_ms = 0;
  return o;
}

void BM_FlushTargeted(benchmark::State& state) {
  std::vector<unsigned char> data(64u << 20, 1);
  CpuBenchmarker bench(one_run());
  bench.set_flush_ranges({{data.data(), data.size()}});
  for (auto _ : state) {
    state.PauseTiming();
    for (std::size_t i = 0; i < data.size(); i += 64) data[i]++;  // back into the caches, dirty
    state.ResumeTiming();
    benchmark::DoNotOptimize(bench.measure([] { return Status{}; }));
  }
  state.counters["bytes"] = static_cast<double>(data.size());
}
BENCHMARK(BM_FlushTargeted)->Unit(benchmark::kMillisecond);

void BM_FlushWholeCache(benchmark::State& state) {
  CpuBenchmarker bench(one_run());
  benchmark::DoNotOptimize(bench.measure([] { return Status{}; }));  // allocates the buffer
  for (auto _ : state) {
    benchmark::DoNotOptimize(bench.measure([] { return Status{}; }));
  }
  state.counters["llc_bytes"] = static_cast<double>(last_level_cache_bytes());
}
BENCHMARK(BM_FlushWholeCache)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
