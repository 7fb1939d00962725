// The shared bookkeeping of the budgeted strategies (space_index.h).
#include "search/space_index.h"

#include <cstdlib>

namespace ktune::search_detail {

std::size_t SpaceIndex::CoordHash::operator()(const std::vector<std::uint32_t>& c) const {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a over the value indices
  for (std::uint32_t v : c) {
    h ^= v;
    h *= 0x100000001b3ULL;
  }
  return static_cast<std::size_t>(h);
}

SpaceIndex::SpaceIndex(const CandidateSpace& space, std::uint64_t seed)
    : space_(space), rng_(seed), proposed_(space.size(), 0) {
  by_coords_.reserve(space.size());
  for (std::size_t i = 0; i < space.size(); ++i) {
    if (space.coords[i].empty()) {
      library_.push_back(i);
    } else {
      by_coords_.emplace(space.coords[i], i);  // a duplicate point keeps its first candidate
    }
  }
}

void SpaceIndex::take(std::size_t i, std::vector<std::size_t>& out) {
  proposed_[i] = 1;
  ++proposed_count_;
  out.push_back(i);
}

void SpaceIndex::take_library(std::size_t n, std::vector<std::size_t>& out) {
  while (out.size() < n && library_next_ < library_.size()) {
    const std::size_t i = library_[library_next_++];
    if (!proposed(i)) take(i, out);
  }
}

std::optional<std::size_t> SpaceIndex::random_unproposed() {
  if (remaining() == 0) return std::nullopt;
  // Sampling is fast while most candidates are left; a scan from a random start is the bound
  // once few are.
  for (int attempt = 0; attempt < 32; ++attempt) {
    const std::size_t i = rng_.below(size());
    if (!proposed(i)) return i;
  }
  const std::size_t start = rng_.below(size());
  for (std::size_t k = 0; k < size(); ++k) {
    const std::size_t i = (start + k) % size();
    if (!proposed(i)) return i;
  }
  return std::nullopt;
}

std::optional<std::size_t> SpaceIndex::find(const std::vector<std::uint32_t>& coords) const {
  auto it = by_coords_.find(coords);
  if (it == by_coords_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::size_t> SpaceIndex::neighbours(std::size_t i) const {
  std::vector<std::size_t> out;
  const std::vector<std::uint32_t>& c = space_.coords[i];
  if (c.empty()) return out;
  std::vector<std::uint32_t> probe = c;
  auto visit = [&](std::size_t p, std::int64_t v) {
    if (v < 0 || v >= static_cast<std::int64_t>(space_.dims[p])) return;
    probe[p] = static_cast<std::uint32_t>(v);
    if (auto j = find(probe)) out.push_back(*j);
    probe[p] = c[p];
  };
  for (std::size_t p = 0; p < c.size(); ++p) {
    visit(p, std::int64_t{c[p]} - 1);
    visit(p, std::int64_t{c[p]} + 1);
  }
  for (std::size_t p = 0; p < c.size(); ++p) {
    for (std::int64_t d = 2; d < static_cast<std::int64_t>(space_.dims[p]); ++d) {
      visit(p, std::int64_t{c[p]} - d);
      visit(p, std::int64_t{c[p]} + d);
    }
  }
  return out;
}

std::optional<std::size_t> SpaceIndex::nearest_unproposed(
    const std::vector<std::uint32_t>& coords) {
  if (auto j = find(coords); j && !proposed(*j)) return j;
  std::vector<std::uint32_t> probe = coords;
  for (std::size_t p = 0; p < coords.size(); ++p) {
    for (std::uint32_t v = 0; v < space_.dims[p]; ++v) {
      if (v == coords[p]) continue;
      probe[p] = v;
      if (auto j = find(probe); j && !proposed(*j)) return j;
    }
    probe[p] = coords[p];
  }
  std::optional<std::size_t> best;
  std::size_t best_d = coords.size() + 1;
  for (std::size_t i = 0; i < size(); ++i) {
    if (proposed(i) || space_.coords[i].size() != coords.size()) continue;
    std::size_t d = 0;
    for (std::size_t p = 0; p < coords.size(); ++p) d += space_.coords[i][p] != coords[p];
    if (d < best_d) {
      best_d = d;
      best = i;
    }
  }
  if (!best) return random_unproposed();  // only library candidates are left
  return best;
}

}  // namespace ktune::search_detail
