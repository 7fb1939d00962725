// The process environment that CPU measurement needs, in one place. Candidates with different
// thread pools otherwise steal cores from each other: idle OpenMP threads spin after each call,
// and OpenBLAS's idle threads spin for 2^28 cycles (the comparison with these undone is in
// docs/benchmarks.md, from bench/cpu_matmul.sh). Each entry is set only where the user has not set
// it:
//   - workers get all of them at spawn (WorkerOptions);
//   - ktune's own process gets them through ensure_benchmark_environment() (bench_env.h);
//   - OpenBLAS, opened with dlopen, gets its entry just before it loads.
#pragma once

#include <string_view>
#include <utility>

namespace ktune {

inline constexpr std::pair<std::string_view, std::string_view> kMeasurementEnvironment[] = {
    {"OMP_WAIT_POLICY", "passive"},    // idle OpenMP threads sleep at once
    {"OPENBLAS_THREAD_TIMEOUT", "4"},  // idle OpenBLAS threads spin 2^4 cycles, not 2^28
};

// The value kMeasurementEnvironment gives `name` ("" when it names none).
[[nodiscard]] constexpr std::string_view measurement_env_value(std::string_view name) {
  for (const auto& [n, v] : kMeasurementEnvironment) {
    if (n == name) return v;
  }
  return {};
}

}  // namespace ktune
