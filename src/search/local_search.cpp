// random, hill_climbing and annealing: the strategies that walk the constrained space one
// neighbour at a time (neighbours: SpaceIndex::neighbours), or not at all (random).
#include <algorithm>
#include <cmath>

#include "search/space_index.h"
#include "search/strategies.h"

namespace ktune::search_detail {
namespace {

// A uniformly random order of the candidates (library calls first): the baseline every other
// strategy has to beat.
class RandomOrder final : public Strategy {
 public:
  RandomOrder(const CandidateSpace& space, std::uint64_t seed) : index_(space, seed) {}
  std::vector<std::size_t> propose(std::size_t n) override {
    std::vector<std::size_t> out;
    index_.take_library(n, out);
    while (out.size() < n) {
      auto i = index_.random_unproposed();
      if (!i) break;
      index_.take(*i, out);
    }
    return out;
  }
  void observe(std::size_t, std::optional<double>) override {}

 private:
  SpaceIndex index_;
};

// Hill climbing with random restarts. A batch holds the current point's unproposed neighbours
// in SpaceIndex order (adjacent values first); when the batch is observed, the best neighbour
// better than the current point becomes current (first improvement for batches of one, best
// improvement within a batch). A point whose neighbours were all proposed is a local optimum:
// the climb restarts from a random unproposed candidate.
class HillClimbing final : public Strategy {
 public:
  HillClimbing(const CandidateSpace& space, std::uint64_t seed)
      : index_(space, seed), time_(space.size(), kUnknown) {}

  std::vector<std::size_t> propose(std::size_t n) override {
    std::vector<std::size_t> out;
    index_.take_library(n, out);
    while (out.size() < n) {
      if (current_) {
        for (std::size_t j : index_.neighbours(*current_)) {
          if (out.size() == n) break;
          if (!index_.proposed(j)) index_.take(j, out);
        }
        if (out.size() == n) break;
      }
      auto r = index_.random_unproposed();  // stuck (or the start): restart
      if (!r) break;
      index_.take(*r, out);
      current_ = *r;
    }
    return out;
  }

  void observe(std::size_t i, std::optional<double> time_ns) override {
    time_[i] = score_of(time_ns);
    if (!current_ || index_.space().coords[i].empty()) return;
    // A pending current point (a restart not observed yet) counts as unknown: a neighbour that
    // arrives first does not replace it, so the climb stays in the restart's basin.
    if (time_[*current_] != kUnknown && time_[i] < time_[*current_]) current_ = i;
  }

 private:
  static constexpr double kUnknown = -1.0;
  SpaceIndex index_;
  std::vector<double> time_;
  std::optional<std::size_t> current_;
};

// Simulated annealing over the same neighbourhood: a random unproposed neighbour of the current
// point is accepted when faster, or when slower with probability exp(-delta / T), delta in log
// time. T is the standard deviation of the log times observed so far, so that a move one spread
// worse is accepted with probability 1/e at the start whatever the kernel's scale, cooled
// logarithmically with the number of observations (the schedule under which annealing converges,
// Hajek 1988); no hand-picked temperature.
class Annealing final : public Strategy {
 public:
  Annealing(const CandidateSpace& space, std::uint64_t seed) : index_(space, seed) {}

  std::vector<std::size_t> propose(std::size_t n) override {
    std::vector<std::size_t> out;
    index_.take_library(n, out);
    while (out.size() < n) {
      if (current_) {
        // Adjacent values first (a random one of them), the farther values of a parameter
        // when every adjacent one was proposed: near moves are the likely improvements.
        std::vector<std::size_t> near, far;
        const auto& c = index_.space().coords[*current_];
        for (std::size_t j : index_.neighbours(*current_)) {
          if (index_.proposed(j)) continue;
          const auto& cj = index_.space().coords[j];
          bool adjacent = false;
          for (std::size_t p = 0; p < c.size(); ++p) {
            adjacent = adjacent || cj[p] + 1 == c[p] || c[p] + 1 == cj[p];
          }
          (adjacent ? near : far).push_back(j);
        }
        for (std::vector<std::size_t>* open : {&near, &far}) {
          while (out.size() < n && !open->empty()) {
            const std::size_t k = index_.rng().below(open->size());
            index_.take((*open)[k], out);
            (*open)[k] = open->back();
            open->pop_back();
          }
        }
        if (out.size() == n) break;
      }
      auto r = index_.random_unproposed();  // frozen in: restart
      if (!r) break;
      index_.take(*r, out);
      current_ = *r;
      current_log_.reset();
    }
    return out;
  }

  void observe(std::size_t i, std::optional<double> time_ns) override {
    if (index_.space().coords[i].empty()) return;
    const double e =
        time_ns && *time_ns > 0 ? std::log(*time_ns) : std::numeric_limits<double>::infinity();
    if (std::isfinite(e)) {
      ++count_;
      const double d = e - mean_;  // Welford: the spread without keeping the times
      mean_ += d / static_cast<double>(count_);
      m2_ += d * (e - mean_);
    }
    if (!current_) return;
    if (i == *current_) {
      current_log_ = e;
      return;
    }
    if (!current_log_) return;  // the current point is pending: keep it
    const double delta = e - *current_log_;
    bool accept = delta < 0;
    if (!accept && std::isfinite(delta) && count_ >= 2) {
      const double spread = std::sqrt(m2_ / static_cast<double>(count_ - 1));
      const double t = spread / std::log(std::exp(1.0) + static_cast<double>(count_));
      accept = t > 0 && index_.rng().unit() < std::exp(-delta / t);
    }
    if (accept) {
      current_ = i;
      current_log_ = e;
    }
  }

 private:
  SpaceIndex index_;
  std::optional<std::size_t> current_;
  std::optional<double> current_log_;
  std::size_t count_ = 0;
  double mean_ = 0, m2_ = 0;
};

}  // namespace

std::unique_ptr<Strategy> make_random(const CandidateSpace& space, std::uint64_t seed) {
  return std::make_unique<RandomOrder>(space, seed);
}
std::unique_ptr<Strategy> make_hill_climbing(const CandidateSpace& space, std::uint64_t seed) {
  return std::make_unique<HillClimbing>(space, seed);
}
std::unique_ptr<Strategy> make_annealing(const CandidateSpace& space, std::uint64_t seed) {
  return std::make_unique<Annealing>(space, seed);
}

}  // namespace ktune::search_detail
