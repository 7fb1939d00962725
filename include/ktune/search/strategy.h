// Search strategies (DESIGN.md's `search` module): which candidates of a selection are compiled
// and measured, and in what order, when measuring all of them costs too much. A strategy proposes
// batches of candidate indices and learns each one's measured time; the selection (select
// module) compiles and measures what it proposes and stops at the budget (max_evals,
// time_limit_s) or when the strategy has nothing more to propose. Strategies work on the
// constrained space: they propose only candidates that exist (valid configs), and neighbours and
// mutations are looked up among them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ktune/core/status.h"

namespace ktune {

// The candidates of one selection as points of a parameter space: dims[p] values of parameter p,
// coords[i][p] the value index of candidate i for parameter p (value lists in their spec order,
// so that neighbouring indices are neighbouring values). Candidates without parameters (library
// calls, or a list without structure) have an empty coordinate vector: strategies still propose
// them (each at most once), but they have no neighbours.
struct CandidateSpace {
  std::vector<std::string> names;  // parameter names (for reports; may be empty)
  std::vector<std::size_t> dims;
  std::vector<std::vector<std::uint32_t>> coords;  // one per candidate, size dims.size() or 0
  [[nodiscard]] std::size_t size() const { return coords.size(); }
};

// What the user asks of the search (spec `search:`, CLI flags).
struct SearchOptions {
  // exhaustive | random | hill_climbing | annealing | genetic | model | auto. auto: exhaustive
  // up to auto_exhaustive_up_to candidates, else the default budgeted strategy.
  std::string strategy = "auto";
  std::optional<std::uint64_t> max_evals;  // candidates measured at most (>= 1)
  std::optional<double> time_limit_s;      // wall time of compiling and measuring (> 0)
  std::uint64_t seed = 0;
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  // Up to `n` (>= 1) candidate indices never proposed before. Empty: the strategy is done (it
  // has converged, or proposed every candidate).
  [[nodiscard]] virtual std::vector<std::size_t> propose(std::size_t n) = 0;
  // The outcome of a proposed candidate: its time in ns, or nullopt when it failed (compile
  // error, wrong result, ...; such a candidate is never good).
  virtual void observe(std::size_t candidate, std::optional<double> time_ns) = 0;
};

// The strategies' names, as accepted by make_strategy and SearchOptions::strategy (auto too).
[[nodiscard]] std::vector<std::string_view> strategy_names();

// kInvalidArgument naming the accepted names when `name` is not one of them. `space` must
// outlive the strategy. `auto` resolves through resolve_strategy first.
[[nodiscard]] Result<std::unique_ptr<Strategy>> make_strategy(std::string_view name,
                                                              const CandidateSpace& space,
                                                              std::uint64_t seed);

// What `auto` becomes for a space of `candidates`, and the budget it brings when the user gave
// none (nullopt: none, every candidate).
struct ResolvedStrategy {
  std::string name;
  std::optional<std::uint64_t> max_evals;
};
[[nodiscard]] ResolvedStrategy resolve_strategy(const SearchOptions& options,
                                                std::size_t candidates);

// kInvalidArgument naming the field and the accepted range: an unknown strategy, max_evals 0,
// a time limit that is not positive and finite.
[[nodiscard]] Status check_search_options(const SearchOptions& options);

}  // namespace ktune
