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
// `ktune simulate` (50 seeds, batch 1): median evaluations to reach within 2% of the optimum
// [q3 in brackets], on T4 files of three measured spaces:
//   space (candidates)               random  hill_climbing  annealing  genetic     model
//   bowl, 3 params, holey (1638)     614     27 [34]        52 [75]    99 [123]    15 [16]
//   two basins, 5 params (5568)      3012    65 [97]        126 [202]  164 [2599]  27 [45]
//   CPU matmul 256^3, 7 params (540) 53      41 [68]        34 [81]    53 [85]     34 [52]
// The first two are synthetic, one candidate within 2% (the bowl is test/unit/search's
// recorded_spaces.h with other noise; the two basins: two quadratic bowls, a ripple, holes and a
// failing corner), made by a one-off script that is not in the repository, and the matmul's T4
// file is not either: these numbers are not reproducible from the repo yet. The benchmark that
// records real spaces and decides this default is bench/search_strategies.sh, still to be written
// (issue 19); until then the numbers are indications. The matmul is examples/matmul_cpu's kernel tuned on the 2-core VM under load
// (VEC 8 16, MR 2 4 6 8, NV 1-4, KC 128 256 512, UNROLL 2 4, LOOP_ORDER and PACK_B 0 1; the
// restrictions but the second), templates only, 8 candidates within 2%. The model needs the
// fewest evaluations or ties for it on each (batches of 8: 18, 33, 38), and its q3 stays near
// 50: from 500 candidates on, a tenth (>= 50) reaches the target on three quarters of the seeds
// or more (78% on the matmul); below, the budget would be too tight to be sure, and measuring
// every candidate costs little more.
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
