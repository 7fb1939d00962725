// The genetic strategy: a steady-state genetic algorithm on the candidates' coordinates.
#include <algorithm>
#include <cmath>

#include "search/space_index.h"
#include "search/strategies.h"

namespace ktune::search_detail {
namespace {

// The population is the fastest `population_` candidates observed so far (elitist: a good
// candidate is never lost to a generation change, which matters when every evaluation costs a
// compile and a measurement). Until it is full, candidates are drawn at random. Then each child
// takes two parents by binary tournament, each gene from either parent (uniform crossover), and
// each gene mutates with probability 1/dims (one mutation per child on average), half the time
// to an adjacent value; a child that is not an unproposed existing candidate is repaired to the
// nearest one by Hamming distance. The population size follows the space: 4 per parameter, at
// least 8 so that tournaments have a choice, small enough that breeding starts early.
class Genetic final : public Strategy {
 public:
  Genetic(const CandidateSpace& space, std::uint64_t seed)
      : index_(space, seed), population_(std::max<std::size_t>(8, 4 * space.dims.size())) {}

  std::vector<std::size_t> propose(std::size_t n) override {
    std::vector<std::size_t> out;
    index_.take_library(n, out);
    while (out.size() < n && index_.remaining() > 0) {
      std::optional<std::size_t> c;
      if (pool_.empty() || pool_.size() + pending_ < population_) {
        c = index_.random_unproposed();
      } else {
        c = index_.nearest_unproposed(diverse(child()));
      }
      if (!c) break;
      index_.take(*c, out);
      if (!index_.space().coords[*c].empty()) ++pending_;
    }
    return out;
  }

  void observe(std::size_t i, std::optional<double> time_ns) override {
    if (index_.space().coords[i].empty()) return;
    if (pending_ > 0) --pending_;
    // A failed candidate sorts last (+inf): it stays in the pool only while the pool is not full.
    pool_.emplace_back(score_of(time_ns), i);
    std::sort(pool_.begin(), pool_.end());
    if (pool_.size() > population_) pool_.resize(population_);
  }

 private:
  std::size_t tournament() {
    const std::size_t a = index_.rng().below(pool_.size());
    const std::size_t b = index_.rng().below(pool_.size());
    return pool_[std::min(a, b)].second;  // the pool is sorted: the lower rank is the fitter
  }

  std::vector<std::uint32_t> child() {
    const auto& coords = index_.space().coords;
    const std::vector<std::uint32_t>& a = coords[tournament()];
    const std::vector<std::uint32_t>& b = coords[tournament()];
    std::vector<std::uint32_t> c(a.size());
    for (std::size_t p = 0; p < c.size(); ++p) {
      c[p] = index_.rng().below(2) == 0 ? a[p] : b[p];
      const std::size_t dim = index_.space().dims[p];
      if (dim < 2 || index_.rng().below(c.size()) != 0) continue;
      if (index_.rng().below(2) == 0) {
        const bool up = (index_.rng().below(2) == 0 && c[p] + 1 < dim) || c[p] == 0;
        c[p] = up ? c[p] + 1 : c[p] - 1;
      } else {
        c[p] = static_cast<std::uint32_t>(index_.rng().below(dim));
      }
    }
    return c;
  }

  // A converged population breeds children that were measured already; the nearest unproposed
  // candidate would then always be a neighbour of the same few, and the search stalls in one
  // basin. Such a child mutates further, one random gene at a time (up to one per parameter),
  // until it is a new point.
  std::vector<std::uint32_t> diverse(std::vector<std::uint32_t> c) {
    for (std::size_t k = 0; k < c.size(); ++k) {
      const auto j = index_.find(c);
      if (!j || !index_.proposed(*j)) break;
      const std::size_t p = index_.rng().below(c.size());
      c[p] = static_cast<std::uint32_t>(index_.rng().below(index_.space().dims[p]));
    }
    return c;
  }

  SpaceIndex index_;
  std::size_t population_;
  std::size_t pending_ = 0;  // proposed, not observed: counts toward filling the population
  std::vector<std::pair<double, std::size_t>> pool_;  // (time or +inf, candidate), fastest first
};

}  // namespace

std::unique_ptr<Strategy> make_genetic(const CandidateSpace& space, std::uint64_t seed) {
  return std::make_unique<Genetic>(space, seed);
}

}  // namespace ktune::search_detail
