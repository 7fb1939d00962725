// parallel_for: one sweep over a large range split across the cores this process may use, for
// the checks' memory passes (copying inputs back, comparing inputs and outputs) that would
// otherwise run on one core while the kernels they check use all of them. Threads are started
// and joined within the call: none is left behind (a worker counts its threads after each
// candidate), and a range below `grain` per thread runs inline.
#pragma once

#include <cstdint>
#include <functional>

namespace ktune {

// The cores this process may run on (its affinity mask), at least 1.
[[nodiscard]] int usable_cores();

// Calls body(begin, end) over disjoint chunks covering [0, n), each at least `grain` long (but
// the last), on up to usable_cores() threads (the calling thread one of them); returns when all
// are done. Chunks are contiguous and in order of their index, so a caller can keep one partial
// result per chunk: `chunks` (when not null) receives how many there were, and body's third
// argument is the chunk's index.
void parallel_for(std::int64_t n, std::int64_t grain,
                  const std::function<void(std::int64_t begin, std::int64_t end, int chunk)>& body,
                  int* chunks = nullptr);

// The number of chunks parallel_for(n, grain, ...) uses: to size per-chunk results first.
[[nodiscard]] int parallel_chunks(std::int64_t n, std::int64_t grain);

}  // namespace ktune
