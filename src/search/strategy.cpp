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
// bench/search_strategies.sh (docs/benchmarks.md, "Search strategies on recorded spaces"): four
// real spaces recorded in full (bench/search_strategies/recorded/), median over 50 seeds of the
// evaluations to reach within 2% of the optimum, `auto` under its own budget (a tenth):
//   space (configs)        auto (reached)   Kernel Tuner's best (two runs: its bayes_opt varies)
//   cpu_conv2d (792)       44 (80%)         bayes_opt 73-78
//   cpu_matmul (540)       24 (66%)         bayes_opt 26-28
//   cuda_conv2d (816)      - (30%)          firefly_algorithm 51 (56%)
//   cuda_gemm (1122)       24 (100%)        bayes_opt 26-32
// The model needs the fewest evaluations of ktune's strategies on three of the four, and a tenth
// is enough on two thirds of the seeds or more there. cuda_conv2d is the exception: its optimum
// is a needle next to a plateau at 3-6.5%, which the model finds on a third of the seeds
// and hill climbing (with a fifth as budget) on 86%, at 74 evaluations. Of the variants tried
// (a Hamming-radius trust region, climbs restarted from the model's picks, a Hamming kernel,
// other acquisitions), the best there had a median of 38 on these 50 seeds but 56 on 150, and
// cost the other spaces 10-30 evaluations: not kept. Below 500 candidates a tenth would be too
// tight to be sure, and measuring every candidate costs little more.
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
