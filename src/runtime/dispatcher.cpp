// Dispatcher: create (the tuned table, every pick loaded), lookup and call (the served kernel by
// shape: exact, nearest, default), add_tuned (a loader's background pick).
#include "ktune/runtime/dispatcher.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

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
  const std::vector<std::string>& names = table.size_names;
  std::vector<std::int64_t> out(names.size());
  std::vector<bool> seen(names.size());
  for (const auto& [name, value] : sizes) {
    auto it = std::ranges::find(names, name);
    if (it == names.end() || seen[it - names.begin()]) {
      return make_error(
          ErrorCode::kInvalidArgument,
          fmt::format("dispatcher {}: size '{}' is {}; expected each of {} once", table.op, name,
                      it == names.end() ? "unknown" : "repeated", fmt::join(names, ", ")));
    }
    seen[it - names.begin()] = true;
    out[it - names.begin()] = value;
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (!seen[i]) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("dispatcher {}: size '{}' is missing; expected each of {} once",
                                    table.op, names[i], fmt::join(names, ", ")));
    }
  }
  return out;
}

Status Dispatcher::State::check(Shape sizes) const {
  if (sizes.size() != table.size_names.size()) {
    return make_error(
        ErrorCode::kInvalidArgument,
        fmt::format("dispatcher {}: {} sizes given; expected {} ({})", table.op, sizes.size(),
                    table.size_names.size(), fmt::join(table.size_names, ", ")));
  }
  return loader->check(sizes);
}

Result<const Slot*> Dispatcher::State::serve(Shape sizes, const Slot* current) {
  auto slot = std::make_unique<Slot>();
  const std::vector<dispatch::TunedShape>& tuned = table.tuned;
  if (auto i = dispatch::nearest_tuned(tuned, sizes)) {
    slot->choice = tuned[*i].choice;
    slot->tuned = tuned[*i].sizes;
    slot->source = std::ranges::equal(tuned[*i].sizes, sizes) ? Source::kExact : Source::kNearest;
  } else {
    slot->choice = table.default_choice;
  }
  if (current != nullptr && current->choice == slot->choice && current->source == slot->source &&
      current->tuned == slot->tuned) {
    return current;
  }
  Result<KernelFn> fn = loader->load(slot->choice, sizes);
  if (!fn) return std::unexpected(fn.error());
  slot->fn = std::move(*fn);
  slot->name = table.candidates[slot->choice].name;
  slots.push_back(std::move(slot));
  return slots.back().get();
}

void Dispatcher::State::insert(Shape sizes, const Slot* slot) {
  // Complete before the lock is released: readers find entries under the shared lock.
  std::unique_lock lock(mu);
  auto it = entries.try_emplace(std::vector<std::int64_t>(sizes.begin(), sizes.end())).first;
  it->second.sizes = it->first;
  it->second.slot.store(slot, std::memory_order_release);
}

Result<const Entry*> Dispatcher::State::entry_for(Dispatcher& self, Shape sizes) {
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
    if (Status s = check(sizes); !s) return std::unexpected(s.error());  // before anything is kept
    Result<const Slot*> slot = serve(sizes, nullptr);
    if (!slot) return std::unexpected(slot.error());
    insert(sizes, *slot);
    it = entries.find(sizes);
    if ((*slot)->source != Source::kExact) loader->unseen(self, it->second.sizes);
  }
  last.store(&it->second, std::memory_order_release);
  return &it->second;
}

Dispatcher::Dispatcher(std::unique_ptr<State> state) : s_(std::move(state)) {}

Dispatcher::~Dispatcher() {
  if (s_) (void)s_->loader->wait();
}

Result<std::unique_ptr<Dispatcher>> Dispatcher::create(DispatchTable table,
                                                       std::unique_ptr<KernelLoader> loader) {
  const std::size_t n = table.candidates.size();
  if (n == 0) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("dispatcher {}: no candidates", table.op));
  }
  bool in_range = table.default_choice < n;
  for (const DispatchTable::Tuned& t : table.tuned) in_range = in_range && t.choice < n;
  if (!in_range || loader == nullptr) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("dispatcher {}: {}", table.op,
                                  loader ? "a candidate index is out of range" : "no loader"));
  }
  auto s = std::make_unique<State>();
  s->table = std::move(table);
  s->loader = std::move(loader);
  std::lock_guard build(s->build_mu);
  for (const dispatch::TunedShape& t : s->table.tuned) {
    if (s->entries.contains(t.sizes)) continue;  // a shape listed twice
    if (Status st = s->check(t.sizes); !st) return std::unexpected(st.error());
    Result<const Slot*> slot = s->serve(t.sizes, nullptr);
    if (!slot) return std::unexpected(slot.error());
    s->insert(t.sizes, *slot);
  }
  return std::unique_ptr<Dispatcher>(new Dispatcher(std::move(s)));
}

Result<std::unique_ptr<Dispatcher>> Dispatcher::open_table(const std::filesystem::path& file) {
  Result<DispatchTable> table = read_dispatch_table(file);
  if (!table) return std::unexpected(table.error());
  std::unique_ptr<KernelLoader> loader = make_shared_object_loader(*table);
  return create(std::move(*table), std::move(loader));
}

const std::vector<std::string>& Dispatcher::size_names() const { return s_->table.size_names; }

Result<Dispatcher::Served> Dispatcher::lookup(std::span<const std::int64_t> sizes) {
  Result<const Entry*> entry = s_->entry_for(*this, sizes);
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
    Result<const Entry*> found = s_->entry_for(*this, sizes);
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

Status Dispatcher::wait_for_background() { return s_->loader->wait(); }

int Dispatcher::background_tunings() const {
  std::lock_guard build(s_->build_mu);  // the loader's calls are serialised
  return s_->loader->started();
}

Status Dispatcher::add_tuned(std::vector<std::int64_t> sizes, const std::string& winner) {
  std::lock_guard build(s_->build_mu);
  const auto& candidates = s_->table.candidates;
  std::size_t choice = 0;
  while (choice < candidates.size() && candidates[choice].name != winner) ++choice;
  if (choice == candidates.size()) {
    return make_error(ErrorCode::kInternal,
                      fmt::format("the winner '{}' is not among the candidates", winner));
  }
  s_->table.tuned.push_back({std::move(sizes), choice});
  Status first;
  for (auto& [key, entry] : s_->entries) {
    const Slot* current = entry.slot.load(std::memory_order_relaxed);
    if (current->source == Source::kExact) continue;
    Result<const Slot*> slot = s_->serve(entry.sizes, current);
    if (!slot) {
      if (first) first = std::unexpected(slot.error());
      continue;  // keeps serving what it served
    }
    entry.slot.store(*slot, std::memory_order_release);
  }
  return first;
}

const char* dispatch_source_name(Dispatcher::Source source) {
  switch (source) {
    case Dispatcher::Source::kExact:
      return "exact";
    case Dispatcher::Source::kNearest:
      return "nearest";
    case Dispatcher::Source::kDefault:
      return "default";
  }
  return "?";
}

}  // namespace ktune
