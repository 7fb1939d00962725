// Synthetic recorded spaces for the strategy and simulation tests: a smooth bowl with noise on a
// holey (restricted) valid set, and the same with a failing region and library candidates.
#pragma once

#include <cmath>
#include <cstdint>

#include "ktune/search/simulate.h"

namespace ktune::test {

// Deterministic noise in [-1, 1) from a point's coordinates.
inline double hash_noise(std::uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return static_cast<double>(h % 2000) / 1000.0 - 1.0;
}

// 16 x 16 x 8 points minus every one with (a + 2b + c) % 5 == 0 (a fifth of the space, holes
// scattered everywhere, like a restriction). Time: a bowl centred off-grid-centre, +-0.5% noise;
// the optimum is the only point within 2%. `scale` 2: an eighth of the points (fast full runs).
// With `failures`: a corner of the space fails (no time) and two library candidates (no
// coordinates) come first.
inline RecordedSpace bowl(bool failures = false, std::uint32_t scale = 1) {
  RecordedSpace r;
  r.space.names = {"A", "B", "C"};
  r.space.dims = {16 / scale, 16 / scale, 8 / scale};
  if (failures) {
    for (int k = 0; k < 2; ++k) {
      r.space.coords.push_back({});
      r.time_ns.push_back(3000.0 + k);
      r.cost_s.push_back(0.01);
    }
  }
  for (std::uint32_t a = 0; a < 16 / scale; ++a) {
    for (std::uint32_t b = 0; b < 16 / scale; ++b) {
      for (std::uint32_t c = 0; c < 8 / scale; ++c) {
        if ((a + 2 * b + c) % 5 == 0) continue;
        const double da = double(a) - 11, db = double(b) - 4, dc = double(c) - 5;
        const std::uint64_t key = (std::uint64_t{a} << 16) | (std::uint64_t{b} << 8) | c;
        const double t =
            1000.0 * (1.0 + 0.04 * (da * da + db * db + dc * dc)) * (1.0 + 0.005 * hash_noise(key));
        r.space.coords.push_back({a, b, c});
        r.time_ns.push_back(failures && a < 4 / scale && b >= 12 / scale ? std::nullopt
                                                                         : std::optional(t));
        r.cost_s.push_back(t * 1e-9 * 10 + 0.5);
      }
    }
  }
  return r;
}

}  // namespace ktune::test
