// Dispatcher: open (the tuned table from the tuning cache), lookup and call (the served kernel by
// shape: exact, nearest, default).
#include "ktune/runtime/dispatcher.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "core/file_util.h"
#include "ktune/cache/tuning_cache.h"
#include "runtime/dispatcher_state.h"

namespace ktune {
namespace dispatch {

double shape_distance(Shape a, Shape b) {
  double d = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    d += std::fabs(std::log2(static_cast<double>(std::max<std::int64_t>(a[i], 1))) -
                   std::log2(static_cast<double>(std::max<std::int64_t>(b[i], 1))));
  }
  return d;
}

std::optional<std::size_t> nearest_tuned(const std::vector<TunedShape>& tuned, Shape sizes) {
  std::optional<std::size_t> best;
  double best_d = 0;
  for (std::size_t i = 0; i < tuned.size(); ++i) {
    if (std::ranges::equal(tuned[i].sizes, sizes)) return i;
    const double d = shape_distance(tuned[i].sizes, sizes);
    if (!best || d < best_d) {
      best = i;
      best_d = d;
    }
  }
  return best;
}

}  // namespace dispatch

using dispatch::Entry;
using dispatch::Shape;
using dispatch::Slot;

Result<std::vector<std::int64_t>> Dispatcher::State::ordered(const Sizes& sizes) const {
  std::vector<std::int64_t> out(size_names.size());
  std::vector<bool> seen(size_names.size());
  for (const auto& [name, value] : sizes) {
    auto it = std::ranges::find(size_names, name);
    if (it == size_names.end() || seen[it - size_names.begin()]) {
      return make_error(
          ErrorCode::kInvalidArgument,
          fmt::format("dispatcher {}: size '{}' is {}; expected each of {} once", spec.name, name,
                      it == size_names.end() ? "unknown" : "repeated",
                      fmt::join(size_names, ", ")));
    }
    seen[it - size_names.begin()] = true;
    out[it - size_names.begin()] = value;
  }
  for (std::size_t i = 0; i < size_names.size(); ++i) {
    if (!seen[i]) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("dispatcher {}: size '{}' is missing; expected each of {} once",
                                    spec.name, size_names[i], fmt::join(size_names, ", ")));
    }
  }
  return out;
}

Result<Problem> Dispatcher::State::problem_for(Shape sizes) const {
  if (sizes.size() != size_names.size()) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("dispatcher {}: {} sizes given; expected {} ({})", spec.name,
                                  sizes.size(), size_names.size(), fmt::join(size_names, ", ")));
  }
  ProblemDecl decl;
  for (std::size_t i = 0; i < sizes.size(); ++i) decl.sizes.emplace_back(size_names[i], sizes[i]);
  return make_problem(spec, decl);
}

Result<KernelFn> Dispatcher::State::load(std::size_t choice, const Problem& problem) {
  Choice& c = *choices.candidates[choice];
  // Library calls bind the problem's sizes when loaded; generated code does not.
  const bool per_problem = c.kind() != Choice::Kind::kTemplate;
  if (!per_problem && template_fns[choice]) {
    if (Status s = c.supports(problem); !s) return std::unexpected(s.error());
    return *template_fns[choice];
  }
  if (c.artifact() == nullptr) {
    if (Status s = c.compile(*backend); !s) return std::unexpected(s.error());
  }
  Result<KernelFn> fn = c.load(*backend, problem);
  if (fn && !per_problem) template_fns[choice] = *fn;
  return fn;
}

Result<const Slot*> Dispatcher::State::serve(Shape sizes, const Slot* current) {
  auto slot = std::make_unique<Slot>();
  if (auto i = dispatch::nearest_tuned(tuned, sizes)) {
    slot->choice = tuned[*i].choice;
    slot->tuned = tuned[*i].sizes;
    slot->source = std::ranges::equal(tuned[*i].sizes, sizes) ? Source::kExact : Source::kNearest;
  } else {
    slot->choice = default_choice;
  }
  if (current != nullptr && current->choice == slot->choice && current->source == slot->source &&
      current->tuned == slot->tuned) {
    return current;
  }
  Result<Problem> problem = problem_for(sizes);
  if (!problem) return std::unexpected(problem.error());
  Result<KernelFn> fn = load(slot->choice, *problem);
  if (!fn) return std::unexpected(fn.error());
  slot->fn = std::move(*fn);
  slot->name = choices.candidates[slot->choice]->name();
  slots.push_back(std::move(slot));
  return slots.back().get();
}

Result<const Entry*> Dispatcher::State::entry_for(Shape sizes) {
  {
    std::shared_lock lock(mu);
    if (auto it = entries.find(sizes); it != entries.end()) {
      last.store(&it->second, std::memory_order_release);
      return &it->second;
    }
  }
  std::lock_guard build(build_mu);
  auto it = entries.find(sizes);  // writers hold build_mu: no shared lock needed to read
  if (it == entries.end()) {
    Result<Problem> problem = problem_for(sizes);  // rejects bad sizes before anything is kept
    if (!problem) return std::unexpected(problem.error());
    Result<const Slot*> slot = serve(sizes, nullptr);
    if (!slot) return std::unexpected(slot.error());
    {
      // Complete before the lock is released: readers find entries under the shared lock.
      std::unique_lock lock(mu);
      it = entries.try_emplace(std::vector<std::int64_t>(sizes.begin(), sizes.end())).first;
      it->second.sizes = it->first;
      it->second.slot.store(*slot, std::memory_order_release);
    }
    if (options.tune_unseen && (*slot)->source != Source::kExact) {
      start_tuning(it->second, std::move(*problem));
    }
  }
  last.store(&it->second, std::memory_order_release);
  return &it->second;
}

Dispatcher::Dispatcher(std::unique_ptr<State> state) : s_(std::move(state)) {}

Dispatcher::~Dispatcher() {
  if (s_) (void)s_->wait();
}

Result<std::unique_ptr<Dispatcher>> Dispatcher::open(const std::filesystem::path& spec_file,
                                                     DispatcherOptions options) {
  auto s = std::make_unique<State>();
  Result<Spec> spec = load_spec(spec_file);
  if (!spec) return std::unexpected(spec.error());
  s->spec = std::move(*spec);
  for (const auto& [name, value] : s->spec.problems.front().sizes) s->size_names.push_back(name);
  if (options.cache_dir.empty()) options.cache_dir = default_cache_dir();
  options.selector.seed = s->spec.seed;
  options.selector.tolerance = s->spec.tolerance;
  s->options = std::move(options);

  // The CLI's default compile options, so that the toolchain fingerprint in the keys matches.
  Result<CpuBackend> backend = CpuBackend::create(CpuCompileOptions{}, s->options.cache_dir);
  if (!backend) return std::unexpected(backend.error());
  s->backend = std::make_unique<CpuBackend>(std::move(*backend));
  Result<SpecChoices> choices = make_spec_choices(s->spec);
  if (!choices) return std::unexpected(choices.error());
  s->choices = std::move(*choices);
  const auto& candidates = s->choices.candidates;
  if (candidates.empty()) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("dispatcher {}: the spec has no candidates", s->spec.name));
  }
  s->template_fns.resize(candidates.size());
  auto index_of = [&](const std::string& name) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (candidates[i]->name() == name) return i;
    }
    return std::nullopt;
  };
  if (const auto& name = s->options.default_choice) {
    auto i = index_of(*name);
    if (!i) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("dispatcher {}: default_choice '{}' is not a candidate; "
                                    "expected one of the spec's, e.g. '{}'",
                                    s->spec.name, *name, candidates.front()->name()));
    }
    s->default_choice = *i;
  }
  // Compiled now, so that no shape's first call waits for the compiler.
  if (Status st = candidates[s->default_choice]->compile(*s->backend); !st) {
    return std::unexpected(st.error());
  }

  Result<std::unique_ptr<TuningCache>> cache = open_sqlite_cache(s->options.cache_dir);
  if (!cache) return std::unexpected(cache.error());
  const Selector keys(*s->backend, **cache, s->options.selector);
  for (const ProblemDecl& decl : s->spec.problems) {
    Result<Problem> problem = make_problem(s->spec, decl);
    if (!problem) return std::unexpected(problem.error());
    Result<std::optional<TuningRecord>> hit =
        (*cache)->lookup(keys.key_for(*problem, candidates, s->choices.reference.get()));
    if (!hit) return std::unexpected(hit.error());
    if (!*hit) continue;  // untuned
    auto choice = index_of((*hit)->winner);
    Result<std::vector<std::int64_t>> sizes = s->ordered(decl.sizes);
    if (!choice || !sizes) continue;  // a stale record; the key should have prevented it
    s->tuned.push_back({std::move(*sizes), *choice});
  }
  for (const dispatch::TunedShape& t : s->tuned) {
    if (s->entries.contains(t.sizes)) continue;  // a problem listed twice
    Result<const Slot*> slot = s->serve(t.sizes, nullptr);
    if (!slot) return std::unexpected(slot.error());
    auto it = s->entries.try_emplace(t.sizes).first;
    it->second.sizes = it->first;
    it->second.slot.store(*slot, std::memory_order_release);
  }
  return std::unique_ptr<Dispatcher>(new Dispatcher(std::move(s)));
}

const std::vector<std::string>& Dispatcher::size_names() const { return s_->size_names; }

Result<Dispatcher::Served> Dispatcher::lookup(std::span<const std::int64_t> sizes) {
  Result<const Entry*> entry = s_->entry_for(sizes);
  if (!entry) return std::unexpected(entry.error());
  const Slot* slot = (*entry)->slot.load(std::memory_order_acquire);
  return Served{&slot->name, slot->source, slot->tuned};
}

Result<Dispatcher::Served> Dispatcher::lookup(const Sizes& sizes) {
  Result<std::vector<std::int64_t>> values = s_->ordered(sizes);
  if (!values) return std::unexpected(values.error());
  return lookup(*values);
}

Status Dispatcher::call(std::span<const std::int64_t> sizes, void* const* args) {
  const Entry* entry = s_->last.load(std::memory_order_acquire);
  if (entry == nullptr || !std::ranges::equal(entry->sizes, sizes)) [[unlikely]] {
    Result<const Entry*> found = s_->entry_for(sizes);
    if (!found) return std::unexpected(found.error());
    entry = *found;
  }
  return entry->slot.load(std::memory_order_acquire)->fn(args);
}

Status Dispatcher::call(const Sizes& sizes, void* const* args) {
  Result<std::vector<std::int64_t>> values = s_->ordered(sizes);
  if (!values) return std::unexpected(values.error());
  return call(*values, args);
}

Status Dispatcher::wait_for_background() { return s_->wait(); }

int Dispatcher::background_tunings() const { return s_->background_count.load(); }

}  // namespace ktune
