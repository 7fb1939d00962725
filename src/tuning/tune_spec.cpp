// tune_spec and what `ktune tune` and ktune.tune() share around it (ktune/tuning/tune_spec.h).
#include "ktune/tuning/tune_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <chrono>
#include <utility>

#include "core/file_util.h"
#include "ktune/backend/code_cache.h"
#include "select/resume.h"

namespace ktune {
namespace {

std::size_t half_of_physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  // In MiB first, as the CLI's --help shows it.
  return (static_cast<std::size_t>(pages) / 2 * static_cast<std::size_t>(page) >> 20) << 20;
}

// The spec's metrics as the Selector takes them (SelectorOptions::metrics): by the problem's
// key, each with its own problem's sizes bound. Unset when the spec has none.
std::function<std::vector<Metric>(const Problem&)> metrics_hook(const Spec& spec) {
  if (spec.metrics.empty()) return {};
  std::vector<std::pair<std::string, std::vector<Metric>>> by_key;
  for (const ProblemDecl& decl : spec.problems) {
    auto problem = make_problem(spec, decl);
    if (!problem) continue;  // the tuning loop reports it
    std::vector<Metric> metrics;
    for (SpecMetric& m : spec_metrics(spec, decl)) {
      metrics.push_back({std::move(m.name), std::move(m.value)});
    }
    by_key.emplace_back(problem->key(), std::move(metrics));
  }
  return [by_key = std::move(by_key)](const Problem& p) {
    const std::string key = p.key();
    for (const auto& [k, metrics] : by_key) {
      if (k == key) return metrics;
    }
    return std::vector<Metric>{};
  };
}

// One problem through the selector over `choices`, with its problem made here. With
// request.cache_only, `quiet` (the selector without output) asks the cache first: nullopt when it
// has no answer, nothing printed and no hook called.
std::optional<SpecProblemTuning> select_one(const Spec& spec, std::size_t i, Selector& selector,
                                            Selector& quiet, SpecChoices& choices,
                                            const SpecTuneRequest& request) {
  SpecProblemTuning out;
  out.index = i;
  out.name = spec.problems[i].name;
  auto problem = make_problem(spec, spec.problems[i]);
  if (!problem) {
    if (request.cache_only) return std::nullopt;  // the tuning pass reports it
    out.selection = std::unexpected(problem.error());
    return out;
  }
  out.problem_name = problem->name;
  if (request.cache_only) {
    auto hit = quiet.cached(*problem, choices.candidates, choices.reference.get());
    if (!hit || !*hit) return std::nullopt;
  }
  if (request.before) request.before(spec.problems[i], choices);
  for (const ChoicePtr& c : choices.candidates) out.candidates.push_back(c->name());
  if (!request.cache_only) {
    out.selection = selector.select(*problem, choices.candidates, choices.reference.get());
    return out;
  }
  // Answered: again through the selector that reports it, as select() reports a hit.
  auto hit = selector.cached(*problem, choices.candidates, choices.reference.get());
  if (!hit) {
    out.selection = std::unexpected(hit.error());
  } else if (!*hit) {
    return std::nullopt;  // the record went away in between: the tuning pass takes it
  } else {
    out.selection = std::move(**hit);
  }
  return out;
}

}  // namespace

SelectorOptions cpu_tune_defaults() {
  SelectorOptions o;
  o.worker.memory_limit_bytes = half_of_physical_memory_bytes();
  return o;
}

SelectorOptions opencl_tune_defaults() {
  SelectorOptions o;
  o.bench.budget_ms = 50;
  o.bench.min_runs = 3;
  o.bench.max_runs = 50;
  o.bench.warmup_runs = 1;
  return o;
}

SelectorOptions spec_selector_options(const Spec& spec, SelectorOptions defaults) {
  defaults.seed = spec.seed;
  defaults.search = spec.search;
  defaults.tolerance = spec.tolerance;
  defaults.metrics = metrics_hook(spec);
  defaults.spec_name = spec.name;  // kept in the records (`ktune cache list`, --json)
  return defaults;
}

Status check_problem_selection(const Spec& spec, std::span<const std::string> problems,
                               std::string_view option) {
  std::vector<std::string> unmatched;
  for (const std::string& w : problems) {
    bool found = false;
    for (std::size_t i = 0; i < spec.problems.size() && !found; ++i) {
      found = w == spec.problems[i].name || w == std::to_string(i);
    }
    if (!found) unmatched.push_back(fmt::format("'{}'", w));
  }
  if (unmatched.empty()) return {};
  std::vector<std::string> names;
  for (std::size_t i = 0; i < spec.problems.size(); ++i) {
    names.push_back(fmt::format("{} ({})", spec.problems[i].name, i));
  }
  return make_error(
      ErrorCode::kInvalidArgument,
      fmt::format("{}: {} {} matches no problem; the spec's problems are: {}", spec.file.string(),
                  option, fmt::join(unmatched, ", "), fmt::join(names, ", ")));
}

bool problem_selected(std::span<const std::string> problems, const ProblemDecl& decl,
                      std::size_t index, std::string_view problem_name) {
  if (problems.empty()) return true;
  for (const std::string& w : problems) {
    if (w == decl.name || (!problem_name.empty() && w == problem_name) ||
        w == std::to_string(index)) {
      return true;
    }
  }
  return false;
}

Status prepare_cache_dir(const std::filesystem::path& dir, bool allow_shared,
                         const std::function<void(const std::string&)>& warn) {
  // A temporary is swept only when its writer is gone and it has not changed for this long.
  constexpr std::chrono::seconds kStaleTempAge{60};
  if (Status s = check_not_shared(dir / "code"); !s) {
    if (!allow_shared) return s;
    if (warn) warn(s.error().message);
  }
  CodeCache(dir).sweep_temporaries(kStaleTempAge);
  sweep_stale_temps(dir, kStaleTempAge);
  return {};
}

Result<SpecTuning> tune_spec(const Spec& spec, const Backend& backend, TuningCache& cache,
                             const SelectorOptions& options, const SpecTuneRequest& request) {
  if (!spec.op.name.empty()) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: op: {}: tune_spec tunes kernel specs; an op spec's "
                                  "problems are tuned by the op (cuda_gemm_tuning.h)",
                                  spec.file.string(), spec.op.name));
  }
  SpecTuning out;
  Selector selector(backend, cache, options);
  SelectorOptions quiet_options = options;
  quiet_options.out = nullptr;
  quiet_options.progress = nullptr;
  quiet_options.json_log.clear();
  Selector quiet(backend, cache, quiet_options);
  const bool per_problem = spec_choices_per_problem(spec);
  if (!per_problem) {
    auto choices = make_spec_choices(spec, request.backend_flags);
    if (!choices) return std::unexpected(choices.error());
    out.shared_choices = std::move(*choices);
  }
  for (std::size_t i = request.first; i < spec.problems.size(); ++i) {
    if (interrupted()) {
      out.interrupted = true;
      break;
    }
    const ProblemDecl& decl = spec.problems[i];
    std::optional<SpecProblemTuning> one;
    if (per_problem) {
      if (!problem_selected(request.problems, decl, i)) continue;
      auto choices =
          make_spec_choices(spec, request.backend_flags,
                            SpecTarget{backend.device_limits(), &decl, request.host_backend});
      if (!choices && !request.cache_only) {
        one.emplace();
        one->index = i;
        one->name = decl.name;
        one->selection = std::unexpected(choices.error());
      } else if (choices) {
        one = select_one(spec, i, selector, quiet, *choices, request);
      }
    } else {
      // The problem is made first: one whose sizes do not evaluate is an error whether or not it
      // was selected by its Problem::name.
      auto problem = make_problem(spec, decl);
      if (problem && !problem_selected(request.problems, decl, i, problem->name)) continue;
      one = select_one(spec, i, selector, quiet, *out.shared_choices, request);
    }
    if (!one) {  // cache_only, and not answered
      out.unanswered = i;
      break;
    }
    if (request.after) request.after(*one);
    out.problems.push_back(std::move(*one));
  }
  out.interrupted = out.interrupted || interrupted();
  return out;
}

}  // namespace ktune
