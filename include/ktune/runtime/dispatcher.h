// Dispatcher: serves an operation inside a user's program from picks tuned ahead: by the exact
// tuned shape, else by the nearest tuned shape, else by a default candidate. What it serves comes
// from a DispatchTable (written by `ktune tune --dispatch-table`; the kernels are shared objects
// loaded with dlopen), so that a program linking only ktune::runtime needs no spec, tuning cache,
// compiler or worker. The tuning layer (ktune/tuning/spec_dispatcher.h) opens one from a spec
// instead, with a KernelLoader that also runs library calls and tunes unseen shapes in the
// background, swapping the new pick in when it is ready.
//
// A call for a shape seen before costs an atomic load, a comparison of the sizes and the kernel
// call; the first call of a new shape loads its kernel (no compiler runs).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ktune/choice/choice.h"
#include "ktune/core/status.h"
#include "ktune/runtime/dispatch_table.h"

namespace ktune {

class Dispatcher;

// Where a Dispatcher's kernels come from. Called with the Dispatcher's build lock held, so one call
// at a time.
class KernelLoader {
 public:
  virtual ~KernelLoader() = default;
  // kInvalidArgument for sizes (size_names order, the right count) the operation cannot take.
  [[nodiscard]] virtual Status check(std::span<const std::int64_t> sizes) const = 0;
  // Candidate `choice` (DispatchTable::candidates) ready to run at these sizes.
  [[nodiscard]] virtual Result<KernelFn> load(std::size_t choice,
                                              std::span<const std::int64_t> sizes) = 0;
  // The first lookup of a shape without a tuned record of its own: a loader that tunes starts
  // it here, without blocking, and reports its pick with Dispatcher::add_tuned.
  virtual void unseen(Dispatcher& dispatcher, std::span<const std::int64_t> sizes) {
    (void)dispatcher;
    (void)sizes;
  }
  // Joins what unseen() started; the first failure since the last wait.
  [[nodiscard]] virtual Status wait() { return {}; }
  // Tunings started by unseen().
  [[nodiscard]] virtual int started() const { return 0; }
};

// Loads generated code only: each candidate's shared object, once, with dlopen. kUnavailable for
// a candidate without one (a library call).
[[nodiscard]] std::unique_ptr<KernelLoader> make_shared_object_loader(DispatchTable table);

// Sizes by name, any order, each of the table's size names exactly once: {{"M", 16}, {"N", 32}}.
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

  // Serves `table` with kernels from `loader`; every tuned pick is loaded here. Fails on an empty
  // table, an index out of range or a pick that does not load.
  [[nodiscard]] static Result<std::unique_ptr<Dispatcher>> create(
      DispatchTable table, std::unique_ptr<KernelLoader> loader);
  // read_dispatch_table, then create with make_shared_object_loader.
  [[nodiscard]] static Result<std::unique_ptr<Dispatcher>> open_table(
      const std::filesystem::path& file);
  ~Dispatcher();  // waits for background tunings
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  // The size names in the order that the span overloads take their values (the binding order
  // of the spec's first problem).
  [[nodiscard]] const std::vector<std::string>& size_names() const;

  // The kernel for these sizes: the exact tuned shape, else the nearest tuned shape by
  //   distance(a, b) = sum over size names of |log2(max(a_i, 1)) - log2(max(b_i, 1))|
  // (ties go to the first tuned: the table's order, then background tunings in the order they
  // finished), else the default. kInvalidArgument for sizes the loader rejects. The first lookup
  // or call of a shape without a tuned record of its own is reported to the loader (once, whatever
  // the number of threads asking), which may tune it.
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

  // For loaders that tune: `winner` (a candidate's name) is the pick of `sizes` from now on, and
  // every shape not served exactly is served again (exact, nearest or default).
  [[nodiscard]] Status add_tuned(std::vector<std::int64_t> sizes, const std::string& winner);

  struct State;  // src/runtime/dispatcher_state.h

 private:
  explicit Dispatcher(std::unique_ptr<State> state);
  std::unique_ptr<State> s_;
};

// "exact", "nearest" or "default": for messages and a program's own output.
[[nodiscard]] const char* dispatch_source_name(Dispatcher::Source source);

}  // namespace ktune
