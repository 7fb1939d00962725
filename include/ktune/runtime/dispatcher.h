// Dispatcher: serves a spec's operation inside a user's program from the picks that tuning left in
// the tuning cache (tuned ahead with `ktune tune` or a Selector): by the exact tuned shape, else by
// the nearest tuned shape, else by a default candidate. It can tune an unseen shape in the
// background (candidates in a ktune-worker) and swaps the new pick in when it is ready.
//
// The tuning cache is read in open() and when a background tuning ends, never on the call path. A
// call for a shape seen before costs an atomic load, a comparison of the sizes and the kernel
// call; the first call of a new shape loads its kernel (no compiler runs: the picks are compiled,
// or found in the code cache, in open()).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ktune/select/selector.h"
#include "ktune/core/status.h"

namespace ktune {

struct DispatcherOptions {
  // Code cache and tuning cache (tuning.sqlite3); empty: default_cache_dir(), as the CLI.
  std::filesystem::path cache_dir;
  // The candidate served when no shape is tuned; empty: the spec's first template config (the
  // first candidate).
  std::optional<std::string> default_choice;
  // Tune a shape with no tuned record in the background (one std::thread running a Selector,
  // candidates isolated in a ktune-worker) while serving the nearest or default pick. A shape
  // tuned in an earlier run is found by that Selector in the tuning cache without measuring.
  bool tune_unseen = false;
  // For background tuning. Its seed and tolerance are replaced by the spec's, as the CLI does by
  // default, so that the tuning-cache keys match `ktune tune`'s.
  SelectorOptions selector = [] {
    SelectorOptions o;
    o.out = nullptr;
    o.progress = nullptr;
    return o;
  }();
};

// Sizes by name, any order, each of the spec's size names exactly once: {{"M", 16}, {"N", 32}}.
using Sizes = std::vector<std::pair<std::string, std::int64_t>>;

class Dispatcher {
 public:
  enum class Source { kExact, kNearest, kDefault };
  struct Served {
    const std::string* name;  // the candidate's name; valid as long as the Dispatcher
    Source source;
    // The tuned shape whose pick is served (size_names() order); empty for kDefault.
    std::span<const std::int64_t> tuned;
  };

  // Loads the spec and, for each of its problems, the pick that `ktune tune` stored with the
  // default options (same compiler flags, the spec's seed and tolerance); a problem without a
  // record is untuned. Every pick and the default are compiled (code-cache hits when tuned) and
  // loaded here. Fails on a bad spec, an unknown default_choice or a pick that does not load.
  [[nodiscard]] static Result<std::unique_ptr<Dispatcher>> open(const std::filesystem::path& spec,
                                                                DispatcherOptions options = {});
  ~Dispatcher();  // waits for background tunings
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  // The spec's size names in the order that the span overloads take their values
  // (the binding order of the spec's first problem).
  [[nodiscard]] const std::vector<std::string>& size_names() const;

  // The kernel for these sizes: the exact tuned shape, else the nearest tuned shape by
  //   distance(a, b) = sum over size names of |log2(max(a_i, 1)) - log2(max(b_i, 1))|
  // (ties go to the first tuned: the spec's problem order, then background tunings in the order
  // they finished), else the default. kInvalidArgument for sizes the spec's shapes reject.
  // With tune_unseen, the first lookup or call of a shape without a tuned record starts its
  // tuning (once, whatever the number of threads asking).
  [[nodiscard]] Result<Served> lookup(std::span<const std::int64_t> sizes);
  [[nodiscard]] Result<Served> lookup(const Sizes& sizes);

  // Calls the served kernel; args as Module::launch takes them (one pointer per spec argument:
  // a buffer's first element, or a pointer to a scalar of the argument's dtype). Thread-safe.
  [[nodiscard]] Status call(std::span<const std::int64_t> sizes, void* const* args);
  [[nodiscard]] Status call(const Sizes& sizes, void* const* args);

  // Joins the background tunings started so far; returns the first failure among them (a
  // failed tuning leaves the shape served by its nearest or default pick).
  [[nodiscard]] Status wait_for_background();
  // Background tunings started over the Dispatcher's life.
  [[nodiscard]] int background_tunings() const;

  struct State;  // src/runtime/dispatcher_state.h

 private:
  explicit Dispatcher(std::unique_ptr<State> state);
  std::unique_ptr<State> s_;
};

}  // namespace ktune
