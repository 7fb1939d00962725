// parallel_for (parallel_for.h).
#include "core/parallel_for.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <system_error>
#include <thread>
#include <vector>

namespace ktune {

int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
}

int parallel_chunks(std::int64_t n, std::int64_t grain) {
  if (n <= 0) return 0;
  const std::int64_t by_size = std::max<std::int64_t>(1, n / std::max<std::int64_t>(grain, 1));
  return static_cast<int>(std::min<std::int64_t>(by_size, usable_cores()));
}

void parallel_for(std::int64_t n, std::int64_t grain,
                  const std::function<void(std::int64_t, std::int64_t, int)>& body, int* chunks) {
  const int k = parallel_chunks(n, grain);
  if (chunks) *chunks = k;
  if (k == 0) return;
  const auto begin = [&](int c) { return n * c / k; };
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(k - 1));
  int started = 1;
  try {
    for (; started < k; ++started)
      threads.emplace_back(body, begin(started), begin(started + 1), started);
  } catch (const std::system_error&) {
    // No more threads to be had (a limit on them): the calling thread does the rest.
  }
  body(0, begin(1), 0);
  for (int c = started; c < k; ++c) body(begin(c), begin(c + 1), c);
  for (std::thread& t : threads) t.join();
}

}  // namespace ktune
