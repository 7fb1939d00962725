// Google Benchmark figures for a call through MultiKernel after the pick (docs/benchmarks.md):
//   BM_DirectCall                   a trivial kernel (one float add) called directly, not inlined
//   BM_MultiKernelCall              the same kernel as the pick of a MultiKernel: bucket, atomic
//                                   load, compare, indirect call
//   BM_MultiKernelAlternateBuckets  two buckets in turn, so every call misses the last-used entry
//                                   and takes the shared lock and the map
//   BM_RowSumDirect / BM_RowSumMultiKernel  a 64x256 row sum, to set the overhead against a
//                                   small real kernel
#include <benchmark/benchmark.h>

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "ktune/ops/row_reduce.h"
#include "ktune/runtime/multi_kernel.h"

namespace {

using namespace ktune;

using Trivial = MultiKernel<float*, std::int64_t>;

__attribute__((noinline)) void add_one(float* x, std::int64_t n) {
  x[0] += static_cast<float>(n);
  benchmark::ClobberMemory();
}

__attribute__((noinline)) void add_two(float* x, std::int64_t n) {
  x[0] += static_cast<float>(2 * n);
  benchmark::ClobberMemory();
}

ShapeKey trivial_bucket(float* const&, const std::int64_t& n) {
  return {static_cast<std::int64_t>(std::bit_ceil(static_cast<std::uint64_t>(n))), 0, 0, 0};
}

Trivial make_trivial() {
  MultiKernelOptions o;
  o.name = "bench_trivial";
  o.force_pick = "add_one";  // the pick is not what is measured here
  auto mk = Trivial::create(o, {{"add_one", &add_one}, {"add_two", &add_two}}, &trivial_bucket);
  if (!mk) std::abort();
  return std::move(*mk);
}

void BM_DirectCall(benchmark::State& state) {
  float x = 0;
  std::int64_t n = 1;
  for (auto _ : state) {
    benchmark::DoNotOptimize(n);
    add_one(&x, n);
  }
  benchmark::DoNotOptimize(x);
}
BENCHMARK(BM_DirectCall);

void BM_MultiKernelCall(benchmark::State& state) {
  Trivial mk = make_trivial();
  float x = 0;
  std::int64_t n = 1;
  mk(&x, n);  // the pick
  for (auto _ : state) {
    benchmark::DoNotOptimize(n);
    mk(&x, n);
  }
  benchmark::DoNotOptimize(x);
}
BENCHMARK(BM_MultiKernelCall);

void BM_MultiKernelAlternateBuckets(benchmark::State& state) {
  Trivial mk = make_trivial();
  float x = 0;
  std::int64_t n[2] = {1, 1000};
  mk(&x, n[0]);
  mk(&x, n[1]);
  std::size_t i = 0;
  for (auto _ : state) {
    mk(&x, n[i++ & 1]);
  }
  benchmark::DoNotOptimize(x);
}
BENCHMARK(BM_MultiKernelAlternateBuckets);

constexpr std::int64_t kRows = 64, kCols = 256;

// One MultiKernel for both row-sum figures, so that both run the same pick.
struct RowSumFixture {
  std::vector<float> in = std::vector<float>(kRows * kCols, 0.5f);
  std::vector<float> out = std::vector<float>(kRows);
  RowReduceKernel mk = [] {
    auto made = make_row_sum();
    if (!made) std::abort();
    return std::move(*made);
  }();
  std::string picked;
  RowReduceKernel::Fn fn = nullptr;

  static RowSumFixture& get() {
    static RowSumFixture f = [] {
      RowSumFixture f;
      f.mk(f.out.data(), f.in.data(), kRows, kCols);
      f.picked = *f.mk.picked(row_reduce_bucket(nullptr, nullptr, kRows, kCols));
      for (const auto& v : f.mk.variants()) {
        if (v.name == f.picked) f.fn = v.fn;
      }
      return f;
    }();
    return f;
  }
};

void BM_RowSumDirect(benchmark::State& state) {
  RowSumFixture& f = RowSumFixture::get();
  for (auto _ : state) {
    f.fn(f.out.data(), f.in.data(), kRows, kCols);
    benchmark::ClobberMemory();
  }
  state.SetLabel(f.picked);
}
BENCHMARK(BM_RowSumDirect);

void BM_RowSumMultiKernel(benchmark::State& state) {
  RowSumFixture& f = RowSumFixture::get();
  for (auto _ : state) {
    f.mk(f.out.data(), f.in.data(), kRows, kCols);
    benchmark::ClobberMemory();
  }
  state.SetLabel(f.picked);
}
BENCHMARK(BM_RowSumMultiKernel);

}  // namespace

BENCHMARK_MAIN();
