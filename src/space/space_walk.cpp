// SpaceWalk: backtracking with pruning and block counting (space_walk.h).
#include "space_walk.h"

#include <fmt/format.h>

#include <algorithm>

namespace ktune::space_detail {

std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return std::numeric_limits<std::uint64_t>::max();
  return out;
}

SpaceWalk::SpaceWalk(const std::vector<Param>& params, RestrictionSet& eval)
    : params_(params), eval_(eval), numeric_(eval.values()) {
  const std::size_t n = params.size();
  levels_.resize(n);
  rest_.assign(n + 1, 1);
  for (std::size_t d = n; d > 0; --d) {
    rest_[d - 1] = saturating_mul(rest_[d], params[d - 1].values.size());
  }
  const auto& uses = eval.uses();
  for (std::size_t r = 0; r < uses.size(); ++r) {
    if (uses[r].empty()) {
      constant_.push_back(r);
    } else {
      levels_[uses[r].back()].checks.push_back(r);
      free_from_ = std::max(free_from_, uses[r].back() + 1);
    }
  }
  index_.assign(n, 0);
  for (std::size_t d = 0; d < n; ++d) tabulate(d);
}

namespace {
// A level is tabulated when its table has at most this many entries (combinations of the other
// parameters its restrictions name, times its own values): building it costs that many
// evaluations of each restriction, a millisecond at most, whatever the walk then visits.
constexpr std::uint64_t kMaxTable = 1 << 14;
}  // namespace

void SpaceWalk::tabulate(std::size_t depth) {
  Level& level = levels_[depth];
  const std::size_t n = numeric_[depth].size();
  if (level.checks.empty() || n > 64) return;
  const auto& uses = eval_.uses();
  for (std::size_t r : level.checks) {
    for (std::size_t p : uses[r]) {
      if (p != depth) level.keyed.push_back(p);
    }
  }
  std::sort(level.keyed.begin(), level.keyed.end());
  level.keyed.erase(std::unique(level.keyed.begin(), level.keyed.end()), level.keyed.end());
  std::uint64_t keys = 1;
  for (std::size_t p : level.keyed) {
    level.strides.push_back(keys);
    keys = saturating_mul(keys, numeric_[p].size());
  }
  if (saturating_mul(keys, n) > kMaxTable) {
    level.keyed.clear();
    level.strides.clear();
    return;
  }
  const std::size_t k = level.checks.size();
  level.masks.assign(keys * k, 0);
  level.accepted.assign(keys, 0);
  for (std::uint64_t key = 0; key < keys; ++key) {
    for (std::size_t i = 0; i < level.keyed.size(); ++i) {
      const std::size_t p = level.keyed[i];
      eval_.set(p, numeric_[p][(key / level.strides[i]) % numeric_[p].size()]);
    }
    std::uint64_t all = (n == 64 ? 0 : std::uint64_t{1} << n) - 1;
    for (std::size_t v = 0; v < n; ++v) {
      eval_.set(depth, numeric_[depth][v]);
      for (std::size_t i = 0; i < k; ++i) {
        if (eval_.accepts(level.checks[i])) level.masks[key * k + i] |= std::uint64_t{1} << v;
      }
    }
    for (std::size_t i = 0; i < k; ++i) all &= level.masks[key * k + i];
    level.accepted[key] = all;
  }
  level.tabled = true;
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
  const Level& level = levels_[depth];
  const std::vector<std::size_t>& checks = level.checks;
  std::uint64_t key = 0;
  if (level.tabled) {
    for (std::size_t i = 0; i < level.keyed.size(); ++i) {
      key += index_[level.keyed[i]] * level.strides[i];
    }
  }
  const std::uint64_t accepted = level.tabled ? level.accepted[key] : 0;
  if (level.tabled && !visitor.wants_rejections())
    return descend_accepted(depth, accepted, visitor);
  for (std::size_t v = 0; v < values.size(); ++v) {
    index_[depth] = v;
    eval_.set(depth, values[v]);
    if (!checks.empty()) {
      if (++evaluations_ > max_evaluations_) {
        over_budget_ = true;
        return false;
      }
      int r = -1;
      if (!level.tabled) {
        r = eval_.first_failing(checks);
      } else if (((accepted >> v) & 1) == 0) {
        const std::uint64_t* masks = &level.masks[key * checks.size()];
        for (std::size_t i = 0; r < 0; ++i) {
          if (((masks[i] >> v) & 1) == 0) r = static_cast<int>(checks[i]);
        }
      }
      if (r >= 0) {
        visitor.rejected(static_cast<std::size_t>(r), rest_[depth + 1]);
        continue;
      }
    }
    if (!next(depth, visitor)) return false;
  }
  return true;
}

bool SpaceWalk::descend_accepted(std::size_t depth, std::uint64_t accepted, Visitor& visitor) {
  const std::vector<double>& values = numeric_[depth];
  // Evaluations are counted up to each visited value, so that the budget stops the walk where
  // descend() would: between two visits only rejections happen, which this visitor ignores.
  std::uint64_t counted = 0;
  const auto count_to = [&](std::uint64_t to) {
    evaluations_ += to - counted;
    counted = to;
    if (evaluations_ <= max_evaluations_) return true;
    over_budget_ = true;
    return false;
  };
  for (std::uint64_t bits = accepted; bits != 0; bits &= bits - 1) {
    const auto v = static_cast<std::size_t>(__builtin_ctzll(bits));
    if (!count_to(v + 1)) return false;
    index_[depth] = v;
    eval_.set(depth, values[v]);
    if (!next(depth, visitor)) return false;
  }
  return count_to(values.size());
}

}  // namespace ktune::space_detail
