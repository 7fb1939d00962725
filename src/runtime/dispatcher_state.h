// Dispatcher::State: the tuned table, the served kernels by shape and the loader.
//
// Invariants that keep the call path free of locks:
// - entries (a std::map) never loses a node, so an Entry* stays valid for the Dispatcher's life;
//   `last` points at the entry served last.
// - a Slot never changes once published and is freed only with the State; swapping a pick is an
//   atomic store of another Slot* into the entry.
// - build_mu serialises everything that changes state (new entries, the loader's calls, the
//   tuned table); mu is taken shared to find an entry and exclusively only to insert one, always
//   after build_mu.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <vector>

#include "ktune/runtime/dispatcher.h"

namespace ktune::dispatch {

using Shape = std::span<const std::int64_t>;

// What one shape is served with; immutable once published.
struct Slot {
  std::size_t choice = 0;  // index into DispatchTable::candidates
  std::string name;
  Dispatcher::Source source = Dispatcher::Source::kDefault;
  std::vector<std::int64_t> tuned;  // the tuned shape whose pick this is; empty for the default
  KernelFn fn;
};

struct Entry {
  Shape sizes;  // the map's key
  std::atomic<const Slot*> slot{nullptr};
};

using TunedShape = DispatchTable::Tuned;

// Transparent, so that a span finds a vector key without allocating.
struct ShapeLess {
  using is_transparent = void;
  bool operator()(Shape a, Shape b) const { return std::ranges::lexicographical_compare(a, b); }
};

// sum over i of |log2(max(a_i, 1)) - log2(max(b_i, 1))|.
[[nodiscard]] double shape_distance(Shape a, Shape b);
// Index into `tuned` of the exact shape, else of the nearest (first on ties); none when empty.
[[nodiscard]] std::optional<std::size_t> nearest_tuned(const std::vector<TunedShape>& tuned,
                                                       Shape sizes);

}  // namespace ktune::dispatch

namespace ktune {

struct Dispatcher::State {
  DispatchTable table;  // its tuned list is the tuned table: the table's, then background picks
  std::unique_ptr<KernelLoader> loader;

  std::mutex build_mu;
  std::vector<std::unique_ptr<dispatch::Slot>> slots;  // every Slot ever published

  std::shared_mutex mu;
  std::map<std::vector<std::int64_t>, dispatch::Entry, dispatch::ShapeLess> entries;
  std::atomic<const dispatch::Entry*> last{nullptr};

  // The entry for these sizes, created (and served, and maybe reported unseen) on first sight.
  [[nodiscard]] Result<const dispatch::Entry*> entry_for(Dispatcher& self, dispatch::Shape sizes);
  // Sizes by name in size_names order; kInvalidArgument for a missing, unknown or repeated name.
  [[nodiscard]] Result<std::vector<std::int64_t>> ordered(const Sizes& sizes) const;
  // kInvalidArgument for the wrong count of sizes, or sizes the loader rejects.
  [[nodiscard]] Status check(dispatch::Shape sizes) const;

  // The rest need build_mu held.
  // What `sizes` should be served with now (exact, nearest, default); `current` when unchanged.
  [[nodiscard]] Result<const dispatch::Slot*> serve(dispatch::Shape sizes,
                                                    const dispatch::Slot* current);
  // Publishes the slot of a new entry.
  void insert(dispatch::Shape sizes, const dispatch::Slot* slot);
};

}  // namespace ktune
