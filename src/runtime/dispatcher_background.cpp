// Dispatcher's background tuning: one thread per unseen shape runs a Selector over a fresh copy of
// the spec's choices (candidates in a ktune-worker), which stores the outcome in the tuning cache;
// the pick then joins the tuned table and every shape not served exactly is served again.
#include <fmt/format.h>

#include <utility>

#include "ktune/select/selector.h"
#include "ktune/cache/tuning_cache.h"
#include "runtime/dispatcher_state.h"

namespace ktune {
namespace {

// The winner's name. Choices of its own, since Selector::select compiles the candidates it is
// given while the Dispatcher loads its own; its own cache connection too (SQLite, WAL).
Result<std::string> tune_winner(const Spec& spec, const Backend& backend,
                                const DispatcherOptions& options, const Problem& problem) {
  Result<SpecChoices> choices = make_spec_choices(spec);
  if (!choices) return std::unexpected(choices.error());
  Result<std::unique_ptr<TuningCache>> cache = open_sqlite_cache(options.cache_dir);
  if (!cache) return std::unexpected(cache.error());
  Selector selector(backend, **cache, options.selector);
  Result<Selection> selection =
      selector.select(problem, choices->candidates, choices->reference.get());
  if (!selection) return std::unexpected(selection.error());
  return choices->candidates[selection->winner_index]->name();
}

}  // namespace

using dispatch::Entry;
using dispatch::Slot;

void Dispatcher::State::start_tuning(Entry& entry, Problem problem) {
  background_count.fetch_add(1);
  std::vector<std::int64_t> sizes(entry.sizes.begin(), entry.sizes.end());
  threads.emplace_back([this, sizes = std::move(sizes), problem = std::move(problem)]() mutable {
    Result<std::string> winner = tune_winner(spec, *backend, options, problem);
    std::lock_guard lock(build_mu);
    Status added = winner ? add_tuned(std::move(sizes), *winner) : std::unexpected(winner.error());
    if (!added && !background_error) {
      background_error =
          Error{added.error().code, fmt::format("dispatcher {}: background tuning of {}: {}",
                                                spec.name, problem.name, added.error().message)};
    }
  });
}

Status Dispatcher::State::add_tuned(std::vector<std::int64_t> sizes, const std::string& winner) {
  const auto& candidates = choices.candidates;
  std::size_t choice = 0;
  while (choice < candidates.size() && candidates[choice]->name() != winner) ++choice;
  if (choice == candidates.size()) {
    return make_error(ErrorCode::kInternal,
                      fmt::format("the winner '{}' is not among the candidates", winner));
  }
  tuned.push_back({std::move(sizes), choice});
  Status first;
  for (auto& [key, entry] : entries) {
    const Slot* current = entry.slot.load(std::memory_order_relaxed);
    if (current->source == Source::kExact) continue;
    Result<const Slot*> slot = serve(entry.sizes, current);
    if (!slot) {
      if (first) first = std::unexpected(slot.error());
      continue;  // keeps serving what it served
    }
    entry.slot.store(*slot, std::memory_order_release);
  }
  return first;
}

Status Dispatcher::State::wait() {
  for (;;) {
    std::vector<std::thread> batch;
    {
      std::lock_guard lock(build_mu);
      batch.swap(threads);
    }
    if (batch.empty()) break;
    for (std::thread& t : batch) t.join();
  }
  std::lock_guard lock(build_mu);
  std::optional<Error> error = std::exchange(background_error, std::nullopt);
  if (error) return std::unexpected(std::move(*error));
  return {};
}

}  // namespace ktune
