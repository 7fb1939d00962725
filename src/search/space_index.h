// What every budgeted strategy shares: a seeded random source that gives the same sequence on
// every platform (std::*_distribution does not), the set of proposed candidates, the candidates
// without coordinates (library calls, proposed once and early), and the lookup of a point of the
// parameter space among the existing candidates, which is how neighbours and mutations stay on
// the constrained space.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <unordered_map>
#include <vector>

#include "ktune/search/strategy.h"

namespace ktune::search_detail {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}
  // Uniform in [0, n); n >= 1. The modulo bias is below 2^-40 for any space we can hold.
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(engine_() % n); }
  double unit() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }  // [0, 1)

 private:
  std::mt19937_64 engine_;
};

// A failed candidate's score: worse than any time, so it is never current, elite or best.
inline double score_of(std::optional<double> time_ns) {
  return time_ns ? *time_ns : std::numeric_limits<double>::infinity();
}

class SpaceIndex {
 public:
  SpaceIndex(const CandidateSpace& space, std::uint64_t seed);

  const CandidateSpace& space() const { return space_; }
  std::size_t size() const { return space_.size(); }
  std::size_t dims() const { return space_.dims.size(); }
  bool proposed(std::size_t i) const { return proposed_[i] != 0; }
  std::size_t remaining() const { return space_.size() - proposed_count_; }
  // Marks `i` proposed (it must not be yet) and appends it to `out`.
  void take(std::size_t i, std::vector<std::size_t>& out);
  // Library candidates not proposed yet, into `out` up to `n` in all. Strategies call this first.
  void take_library(std::size_t n, std::vector<std::size_t>& out);
  // A random candidate not proposed yet (with coordinates when one is left), or nullopt when
  // every candidate was proposed.
  std::optional<std::size_t> random_unproposed();
  // The candidate at `coords`, if one exists.
  std::optional<std::size_t> find(const std::vector<std::uint32_t>& coords) const;
  // The existing candidates that differ from `i` in one parameter: first every parameter's
  // adjacent values (index -1 and +1), then every other value of each parameter, nearest first.
  std::vector<std::size_t> neighbours(std::size_t i) const;
  // The existing, unproposed candidate nearest to `coords` by Hamming distance (ties: the first
  // found); distance 0 and 1 by lookup, farther by a scan.
  std::optional<std::size_t> nearest_unproposed(const std::vector<std::uint32_t>& coords);
  Rng& rng() { return rng_; }

 private:
  struct CoordHash {
    std::size_t operator()(const std::vector<std::uint32_t>& c) const;
  };
  const CandidateSpace& space_;
  Rng rng_;
  std::vector<char> proposed_;
  std::size_t proposed_count_ = 0;
  std::vector<std::size_t> library_;  // candidates with empty coordinates, in index order
  std::size_t library_next_ = 0;
  std::unordered_map<std::vector<std::uint32_t>, std::size_t, CoordHash> by_coords_;
};

}  // namespace ktune::search_detail
