// Test helper: two cores this process may run on, as a `--devices` list of two one-core CPU
// devices ("0,1"), for the tests that tune on several devices at once; nullopt on a machine (or
// under an affinity) with fewer than two.
#pragma once

#include <fmt/format.h>
#include <sched.h>

#include <optional>
#include <string>
#include <vector>

namespace ktune::test {

inline std::optional<std::string> two_core_devices() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return std::nullopt;
  std::vector<int> cores;
  for (int c = 0; c < CPU_SETSIZE && cores.size() < 2; ++c) {
    if (CPU_ISSET(c, &set)) cores.push_back(c);
  }
  if (cores.size() < 2) return std::nullopt;
  return fmt::format("{},{}", cores[0], cores[1]);
}

}  // namespace ktune::test

// Declares `const std::string var`, two_core_devices()'s list, or skips the calling test.
#define KTUNE_REQUIRE_TWO_CORES(var)                                             \
  const std::optional<std::string> var##_or = ::ktune::test::two_core_devices(); \
  if (!var##_or) GTEST_SKIP() << "needs two cores to make two CPU devices";      \
  const std::string var = *var##_or
