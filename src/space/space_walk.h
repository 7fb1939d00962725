// The backtracking walk over a SearchSpace's value indices: parameters are bound in their order,
// each restriction is evaluated as soon as its last parameter is bound, and a rejection prunes
// every completion of that prefix. Constants are bound from the start: a restriction that names
// only constants is evaluated once, before any parameter is bound. Below the deepest parameter any
// restriction names, every completion is valid: the walk hands that block to the visitor whole
// instead of visiting it. Where the restrictions bound at a parameter name few values in all, they
// are tabulated before the walk: for each combination of the other parameters they name, a bit
// mask of the values of this one that each accepts, so that the walk looks a bit up instead of
// evaluating. Private to the space module.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "ktune/core/status.h"
#include "ktune/space/search_space.h"
#include "restriction_set.h"

namespace ktune::space_detail {

// a * b, saturating at the largest uint64.
[[nodiscard]] std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b);

class SpaceWalk {
 public:
  // What the walk reports. `index` holds the bound prefix's value indices (index[0..depth]).
  struct Visitor {
    virtual ~Visitor() = default;
    // Restriction r rejected the prefix: `removed` configs (saturating) are gone.
    virtual void rejected(std::size_t r, std::uint64_t removed) = 0;
    // false: rejected() does nothing, so the walk may skip rejected values without naming the
    // restriction (where a table gives the accepted values at once).
    [[nodiscard]] virtual bool wants_rejections() const { return true; }
    // Every completion of index[0..depth] is valid: `count` of them (saturating), the
    // parameters after `depth` free. depth is -1 when no parameter is bound (the whole space).
    // Returns false to stop the walk (a limit was reached).
    virtual bool valid_block(const std::vector<std::size_t>& index, int depth,
                             std::uint64_t count) = 0;
  };

  // The parameters' values are eval.values().
  SpaceWalk(const std::vector<Param>& params, RestrictionSet& eval);

  // kInvalidArgument when the walk needs more than `max_evaluations` restriction evaluations;
  // also fails when the visitor stops it (the visitor's `stop_reason` says why).
  [[nodiscard]] Status run(std::uint64_t max_evaluations, Visitor& visitor);
  [[nodiscard]] std::uint64_t evaluations() const { return evaluations_; }
  [[nodiscard]] std::uint64_t total() const { return rest_[0]; }

 private:
  // false: stopped (limit or visitor).
  bool descend(std::size_t depth, Visitor& visitor);
  // descend() at a tabulated level for a visitor that does not want rejections: only the
  // accepted values are visited (the others are counted as evaluations all the same).
  bool descend_accepted(std::size_t depth, std::uint64_t accepted, Visitor& visitor);
  bool next(std::size_t depth, Visitor& visitor) {
    return depth + 1 < free_from_
               ? descend(depth + 1, visitor)
               : visitor.valid_block(index_, static_cast<int>(depth), rest_[depth + 1]);
  }

  const std::vector<Param>& params_;
  RestrictionSet& eval_;
  // The restrictions bound at one parameter, and their table where they have one.
  struct Level {
    std::vector<std::size_t> checks;  // restrictions whose last parameter is this one, in order
    bool tabled = false;
    std::vector<std::size_t> keyed;       // the other parameters they name
    std::vector<std::uint64_t> strides;   // of keyed, in the table's key
    std::vector<std::uint64_t> masks;     // [key * checks.size() + i]: values check i accepts
    std::vector<std::uint64_t> accepted;  // [key]: values all accept
  };
  void tabulate(std::size_t depth);

  const std::vector<std::vector<double>>& numeric_;
  std::vector<Level> levels_;
  std::vector<std::size_t> constant_;  // restrictions that name no parameter (constants only)
  std::vector<std::uint64_t> rest_;    // rest_[d]: product of sizes d..n-1
  std::size_t free_from_ = 0;          // parameters from here on appear in no restriction
  std::vector<std::size_t> index_;
  std::uint64_t evaluations_ = 0;
  std::uint64_t max_evaluations_ = 0;
  bool over_budget_ = false;
};

}  // namespace ktune::space_detail
