// spec_tuning_key and make_dispatch_table: a spec's tuned picks, read from the tuning cache under
// the keys `ktune tune` stored them with.
#include "tuning/dispatch_table_build.h"

#include <fmt/format.h>

namespace ktune {

TuningKey spec_tuning_key(const Problem& problem, const SpecChoices& choices,
                          const Backend& backend, std::uint64_t seed,
                          const std::optional<Tolerance>& tolerance) {
  // Selector::key_for's inputs, without building a Selector.
  KeyInputs in{problem.op,
               problem.key(),
               {},
               KeyVerification{},
               backend.device_fingerprint(),
               backend.toolchain_fingerprint()};
  for (const ChoicePtr& c : choices.candidates) in.candidates.push_back(c->hash_key());
  if (choices.reference) in.verification->reference = choices.reference->hash_key();
  in.verification->tolerance = tolerance;
  in.verification->seed = seed;
  return make_tuning_key(in);
}

Result<DispatchTableBuild> make_dispatch_table(const Spec& spec, SpecChoices& choices,
                                               const Backend& backend, TuningCache& cache,
                                               const SelectorOptions& selector,
                                               const std::optional<std::string>& default_choice,
                                               bool generated_only) {
  // A pick is served only from a whole record whose winner is valid (check_record).
  std::vector<CandidateId> ids;
  ids.reserve(choices.candidates.size());
  for (const ChoicePtr& c : choices.candidates) ids.push_back({c->name(), c->hash_key()});
  const PickLookup lookup = [&](const ProblemDecl& decl) -> Result<StoredPick> {
    Result<Problem> problem = make_problem(spec, decl);
    if (!problem) return std::unexpected(problem.error());
    Result<std::optional<TuningRecord>> hit = lookup_checked(
        cache, spec_tuning_key(*problem, choices, backend, selector.seed, selector.tolerance), ids);
    if (!hit) return std::unexpected(hit.error());
    return StoredPick{problem->name, std::move(*hit)};
  };
  return build_dispatch_table(spec, choices.candidates, backend, lookup, default_choice,
                              generated_only);
}

Result<DispatchTableBuild> build_dispatch_table(const Spec& spec,
                                                std::vector<ChoicePtr>& candidates,
                                                const Backend& backend, const PickLookup& lookup,
                                                const std::optional<std::string>& default_choice,
                                                bool generated_only) {
  if (candidates.empty()) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("dispatcher {}: the spec has no candidates", spec.name));
  }
  auto servable = [&](std::size_t i) {
    return !generated_only || candidates[i]->kind() == Choice::Kind::kTemplate;
  };
  // Spec index -> table index; the table lists the servable candidates in spec order.
  DispatchTableBuild out;
  DispatchTable& t = out.table;
  t.op = spec.name;
  for (const auto& [name, value] : spec.problems.front().sizes) t.size_names.push_back(name);
  std::vector<std::optional<std::size_t>> table_index(candidates.size());
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (!servable(i)) continue;
    table_index[i] = t.candidates.size();
    t.candidates.push_back({candidates[i]->name(), {}});
  }
  auto spec_index = [&](const std::string& name) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (candidates[i]->name() == name) return i;
    }
    return std::nullopt;
  };
  // Compiled now (a code-cache hit when tuned), so that no shape's first call waits for the
  // compiler and the table can name the artifact.
  auto compile = [&](std::size_t i) -> Status {
    Choice& c = *candidates[i];
    if (c.artifact() == nullptr) {
      if (Status s = c.compile(backend); !s) return s;
    }
    if (c.artifact() != nullptr) t.candidates[*table_index[i]].artifact = c.artifact()->path;
    return {};
  };

  std::size_t def = 0;
  if (default_choice) {
    auto i = spec_index(*default_choice);
    if (!i) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("dispatcher {}: default_choice '{}' is not a candidate; "
                                    "expected one of the spec's, e.g. '{}'",
                                    spec.name, *default_choice, candidates.front()->name()));
    }
    def = *i;
  }
  if (!servable(def)) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("dispatcher {}: the default '{}' is a library call; a dispatch "
                                  "table serves generated code only",
                                  spec.name, candidates[def]->name()));
  }
  if (Status s = compile(def); !s) return std::unexpected(s.error());
  t.default_choice = *table_index[def];

  for (const ProblemDecl& decl : spec.problems) {
    Result<StoredPick> stored = lookup(decl);
    if (!stored) return std::unexpected(stored.error());
    const std::optional<TuningRecord>& hit = stored->record;
    if (!hit) continue;  // untuned
    auto choice = spec_index(hit->winner);
    std::vector<std::int64_t> sizes;
    for (const std::string& name : t.size_names) {
      auto v = problem_size(decl, name);
      if (v) sizes.push_back(*v);
    }
    if (!choice || sizes.size() != t.size_names.size()) continue;  // stale; the key prevents it
    if (!servable(*choice)) {
      out.notes.push_back(
          fmt::format("{}: the pick {} is a library call; served by the nearest "
                      "tuned shape",
                      stored->problem, hit->winner));
      continue;
    }
    if (Status s = compile(*choice); !s) return std::unexpected(s.error());
    t.tuned.push_back({std::move(sizes), *table_index[*choice]});
  }
  return out;
}

}  // namespace ktune
