// The strategy registry, `auto`, and the exhaustive strategy. The budgeted strategies live in
// their own files.
#include "ktune/search/strategy.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "search/strategies.h"

namespace ktune {
namespace {

// Every candidate, in the order given (the spec's order: the space's lexicographic order).
class Exhaustive final : public Strategy {
 public:
  explicit Exhaustive(std::size_t size) : size_(size) {}
  std::vector<std::size_t> propose(std::size_t n) override {
    std::vector<std::size_t> out;
    while (out.size() < n && next_ < size_) out.push_back(next_++);
    return out;
  }
  void observe(std::size_t, std::optional<double>) override {}

 private:
  std::size_t size_;
  std::size_t next_ = 0;
};

// Up to this many candidates, `auto` measures every one; above, the default budgeted strategy
// (kAutoStrategy) with a budget of a tenth of the candidates unless the user gave one. Chosen by
// bench/search_strategies.sh (docs/benchmarks.md, "Search strategies on recorded spaces"): two
// real spaces recorded in full on the 2-core VM (bench/search_strategies/recorded/), median over
// 50 seeds of the evaluations to reach within 2% of the optimum, each strategy with a fifth of
// the space as budget:
//   space (configs)            random  hill_climbing  annealing  genetic  model  Kernel Tuner's best
//   CPU matmul 256^3 (540)     84      29             60         70       32     bayes_opt 28
//   CPU conv2d 7x7 (792)       -       -              108        110      44     bayes_opt 76
// The model needs the fewest evaluations on the convolution and is within 3 of the fewest on the
// matmul (where it reaches on 88% of the seeds), and reaches under a budget of a tenth on 74% and
// 80% of the seeds (`auto`): from 500 candidates on, a tenth (>= 50) is enough on three quarters
// of the seeds or more; below, the budget would be too tight to be sure, and measuring every
// candidate costs little more. (Earlier synthetic spaces, two of 1638 and 5568 configs, agreed.)
constexpr std::size_t kAutoExhaustiveUpTo = 500;
constexpr std::string_view kAutoStrategy = "model";
constexpr std::uint64_t kAutoBudgetDivisor = 10;

}  // namespace

std::vector<std::string_view> strategy_names() {
  return {"auto", "exhaustive", "random", "hill_climbing", "annealing", "genetic", "model"};
}

ResolvedStrategy resolve_strategy(const SearchOptions& options, std::size_t candidates) {
  if (options.strategy != "auto") return {options.strategy, options.max_evals};
  if (candidates <= kAutoExhaustiveUpTo) return {"exhaustive", options.max_evals};
  return {std::string(kAutoStrategy),
          options.max_evals.value_or(std::max<std::uint64_t>(
              1, static_cast<std::uint64_t>(candidates) / kAutoBudgetDivisor))};
}

Status check_search_options(const SearchOptions& options) {
  bool known = false;
  for (std::string_view n : strategy_names()) known = known || n == options.strategy;
  if (!known) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("search.strategy: unknown strategy '{}'; expected one of {}",
                                  options.strategy, fmt::join(strategy_names(), ", ")));
  }
  if (options.max_evals && *options.max_evals == 0) {
    return make_error(ErrorCode::kInvalidArgument, "search.max_evals: 0; expected an integer >= 1");
  }
  if (options.time_limit_s &&
      !(std::isfinite(*options.time_limit_s) && *options.time_limit_s > 0)) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("search.time_limit_s: {}; expected a number of seconds > 0",
                                  *options.time_limit_s));
  }
  return {};
}

Result<std::unique_ptr<Strategy>> make_strategy(std::string_view name, const CandidateSpace& space,
                                                std::uint64_t seed) {
  if (name == "exhaustive" || name == "auto") {
    return std::unique_ptr<Strategy>(std::make_unique<Exhaustive>(space.size()));
  }
  if (name == "random") return search_detail::make_random(space, seed);
  if (name == "hill_climbing") return search_detail::make_hill_climbing(space, seed);
  if (name == "annealing") return search_detail::make_annealing(space, seed);
  if (name == "genetic") return search_detail::make_genetic(space, seed);
  if (name == "model") return search_detail::make_model(space, seed);
  return make_error(ErrorCode::kInvalidArgument,
                    fmt::format("unknown search strategy '{}'; expected one of {}", name,
                                fmt::join(strategy_names(), ", ")));
}

}  // namespace ktune
