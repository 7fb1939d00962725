// SpaceWalk: backtracking with pruning and block counting (space_walk.h).
#include "space_walk.h"

#include <fmt/format.h>

namespace ktune::space_detail {

std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return std::numeric_limits<std::uint64_t>::max();
  return out;
}

SpaceWalk::SpaceWalk(const std::vector<Param>& params, RestrictionSet& eval)
    : params_(params), eval_(eval), numeric_(eval.values()) {
  const std::size_t n = params.size();
  at_depth_.resize(n);
  rest_.assign(n + 1, 1);
  for (std::size_t d = n; d > 0; --d) {
    rest_[d - 1] = saturating_mul(rest_[d], params[d - 1].values.size());
  }
  const auto& uses = eval.uses();
  for (std::size_t r = 0; r < uses.size(); ++r) {
    if (uses[r].empty()) {
      constant_.push_back(r);
    } else {
      at_depth_[uses[r].back()].push_back(r);
      free_from_ = std::max(free_from_, uses[r].back() + 1);
    }
  }
  index_.assign(n, 0);
}

Status SpaceWalk::run(std::uint64_t max_evaluations, Visitor& visitor) {
  max_evaluations_ = max_evaluations;
  evaluations_ = 0;
  over_budget_ = false;
  bool finished = true;
  if (!constant_.empty()) {
    ++evaluations_;
    if (const int r = eval_.first_failing(constant_); r >= 0) {
      visitor.rejected(static_cast<std::size_t>(r), rest_[0]);
      return {};
    }
  }
  if (free_from_ == 0) {
    finished = visitor.valid_block(index_, -1, rest_[0]);
  } else {
    finished = descend(0, visitor);
  }
  if (over_budget_) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("search space: more than {} restriction evaluations to walk {} "
                                  "configs; expected restrictions that prune earlier (a "
                                  "restriction on the first parameters prunes most) or fewer "
                                  "values",
                                  max_evaluations_, rest_[0]));
  }
  if (!finished) {
    return make_error(ErrorCode::kInvalidArgument, "search space: the walk was stopped");
  }
  return {};
}

bool SpaceWalk::descend(std::size_t depth, Visitor& visitor) {
  const std::vector<double>& values = numeric_[depth];
  const std::vector<std::size_t>& checks = at_depth_[depth];
  for (std::size_t v = 0; v < values.size(); ++v) {
    index_[depth] = v;
    eval_.set(depth, values[v]);
    if (!checks.empty()) {
      if (++evaluations_ > max_evaluations_) {
        over_budget_ = true;
        return false;
      }
      if (const int r = eval_.first_failing(checks); r >= 0) {
        visitor.rejected(static_cast<std::size_t>(r), rest_[depth + 1]);
        continue;
      }
    }
    const bool more = depth + 1 < free_from_
                          ? descend(depth + 1, visitor)
                          : visitor.valid_block(index_, static_cast<int>(depth), rest_[depth + 1]);
    if (!more) return false;
  }
  return true;
}

}  // namespace ktune::space_detail
