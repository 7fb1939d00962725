// Dispatcher::State: the tuned table, the served kernels by shape and the background tunings.
//
// Invariants that keep the call path free of locks:
// - entries (a std::map) never loses a node, so an Entry* stays valid for the Dispatcher's life;
//   `last` points at the entry served last.
// - a Slot never changes once published and is freed only with the State; swapping a pick is an
//   atomic store of another Slot* into the entry.
// - build_mu serialises everything that changes state (new entries, compiling and loading
//   choices, the tuned table, threads); mu is taken shared to find an entry and exclusively only
//   to insert one, always after build_mu.
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
#include <thread>
#include <vector>

#include "ktune/choice/choice.h"
#include "ktune/backend/cpu_backend.h"
#include "ktune/runtime/dispatcher.h"
#include "ktune/spec/spec.h"

namespace ktune::dispatch {

using Shape = std::span<const std::int64_t>;

// What one shape is served with; immutable once published.
struct Slot {
  std::size_t choice = 0;  // index into SpecChoices::candidates
  std::string name;
  Dispatcher::Source source = Dispatcher::Source::kDefault;
  std::vector<std::int64_t> tuned;  // the tuned shape whose pick this is; empty for the default
  KernelFn fn;
};

struct Entry {
  Shape sizes;  // the map's key
  std::atomic<const Slot*> slot{nullptr};
};

struct TunedShape {
  std::vector<std::int64_t> sizes;
  std::size_t choice = 0;
};

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
  Spec spec;
  DispatcherOptions options;
  std::vector<std::string> size_names;
  std::unique_ptr<CpuBackend> backend;

  std::mutex build_mu;
  SpecChoices choices;  // compile() and load() change them
  std::size_t default_choice = 0;
  std::vector<std::optional<KernelFn>> template_fns;   // template choices, loaded once
  std::vector<dispatch::TunedShape> tuned;             // spec problems, then background
  std::vector<std::unique_ptr<dispatch::Slot>> slots;  // every Slot ever published
  std::vector<std::thread> threads;                    // background tunings not joined yet
  std::optional<Error> background_error;               // the first, until wait()
  std::atomic<int> background_count{0};

  std::shared_mutex mu;
  std::map<std::vector<std::int64_t>, dispatch::Entry, dispatch::ShapeLess> entries;
  std::atomic<const dispatch::Entry*> last{nullptr};

  // The entry for these sizes, created (and served, and maybe tuned) on first sight.
  [[nodiscard]] Result<const dispatch::Entry*> entry_for(dispatch::Shape sizes);
  // Sizes by name in size_names order; kInvalidArgument for a missing, unknown or repeated name.
  [[nodiscard]] Result<std::vector<std::int64_t>> ordered(const Sizes& sizes) const;
  [[nodiscard]] Result<Problem> problem_for(dispatch::Shape sizes) const;

  // The rest need build_mu held.
  // A compiled and loaded choice for the problem (template choices load once).
  [[nodiscard]] Result<KernelFn> load(std::size_t choice, const Problem& problem);
  // What `sizes` should be served with now (exact, nearest, default); `current` when unchanged.
  [[nodiscard]] Result<const dispatch::Slot*> serve(dispatch::Shape sizes,
                                                    const dispatch::Slot* current);
  // Starts a background tuning of the entry's shape (dispatcher_background.cpp).
  void start_tuning(dispatch::Entry& entry, Problem problem);
  // Adds a background pick to the tuned table and re-serves every entry not served exactly.
  [[nodiscard]] Status add_tuned(std::vector<std::int64_t> sizes, const std::string& winner);

  // Joins the background threads (without build_mu); the first failure since the last wait.
  [[nodiscard]] Status wait();
};

}  // namespace ktune
