// Tuning a spec's problems, as `ktune tune SPEC` and the Python package's ktune.tune() both do:
// the Selector's defaults for the spec's kind, the --problem selection, the cache folder's checks,
// and the loop that builds each problem's candidates (shared, or per problem for device kernels
// and size_defines) and selects. The CLI prints around it; the binding returns the selections.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ktune/backend/backend.h"
#include "ktune/cache/tuning_cache.h"
#include "ktune/core/status.h"
#include "ktune/select/selector.h"
#include "ktune/spec/spec.h"

namespace ktune {

// A kernel spec's defaults on the CPU: the Selector's, and a worker memory limit of half of
// physical memory, so that a candidate allocating without bound is stopped as resource_exhausted
// before the kernel's OOM killer picks a process.
[[nodiscard]] SelectorOptions cpu_tune_defaults();
// An OpenCL kernel spec's (and `ktune opencl-gemm`'s) defaults: 50 ms budgets, 3 to 50 runs, one
// warm-up (an OpenCL launch on PoCL costs tens of microseconds).
[[nodiscard]] SelectorOptions opencl_tune_defaults();

// `defaults` (the kind's: cpu_tune_defaults(), cuda_gemm_selector_defaults(), ...) with what the
// spec says: its seed, `search:`, tolerance and metrics (each problem's own sizes bound). Options
// the caller sets afterwards override them field by field.
[[nodiscard]] SelectorOptions spec_selector_options(const Spec& spec, SelectorOptions defaults);

// Every entry of `problems` (a problem's name or 0-based index) must name a problem of the spec:
// else kInvalidArgument "<spec>: <option> 'x' matches no problem; the spec's problems are: a (0),
// ..." (`option`: how the caller's user spelled the selection, "--problem" or "problem=").
[[nodiscard]] Status check_problem_selection(const Spec& spec,
                                             std::span<const std::string> problems,
                                             std::string_view option);

// Whether problem `index` of the spec is selected by `problems` (empty: every problem);
// `problem_name`: its Problem::name as well, when known.
[[nodiscard]] bool problem_selected(std::span<const std::string> problems, const ProblemDecl& decl,
                                    std::size_t index, std::string_view problem_name = {});

// Before a cache folder is used: its code cache must be this user's alone (kInvalidArgument with
// the reason otherwise, or, with allow_shared, the reason passed to `warn` and the folder used),
// and the temporaries that a killed ktune left in it are removed.
[[nodiscard]] Status prepare_cache_dir(const std::filesystem::path& dir, bool allow_shared,
                                       const std::function<void(const std::string&)>& warn = {});

// One problem of a tune_spec() run.
struct SpecProblemTuning {
  std::size_t index = 0;     // into Spec::problems
  std::string name;          // ProblemDecl::name
  std::string problem_name;  // Problem::name (sizes, epilogue); empty when make_problem failed
  // The selection, or why the problem has none (a problem, its candidates or the selection
  // failed; kInvalidArgument, kNoValidChoice, ... with the message the CLI prints).
  Result<Selection> selection;
  // Candidates in Selection::winner_index's order (their names), when the selection ran.
  std::vector<std::string> candidates;
};

struct SpecTuneRequest {
  // Problems to tune (names or 0-based indices, check_problem_selection first); empty: all.
  std::vector<std::string> problems;
  // The compiling backend's flags (make_spec_choices' backend_flags).
  std::vector<std::string> backend_flags;
  // A device kernel's c++ reference is built on this CPU backend (spec_has_host_reference).
  std::shared_ptr<const Backend> host_backend;
  // Called before a problem's selection once its candidates are built (for messages such as the
  // configs left out over the device's limits), and after it with its outcome.
  std::function<void(const ProblemDecl&, const SpecChoices&)> before;
  std::function<void(const SpecProblemTuning&)> after;
  // Answers from the tuning cache only (Selector::cached: nothing compiled, run or locked), in
  // spec order: the first selected problem the cache does not answer ends the run
  // (SpecTuning::unanswered), with nothing printed for it and neither hook called. For a
  // backend made without the driver (CudaBackend::for_device), before one that can tune.
  bool cache_only = false;
  // The first problem to consider (the ones before it answered by a cache_only run).
  std::size_t first = 0;
};

struct SpecTuning {
  std::vector<SpecProblemTuning> problems;  // the problems tuned (or failed), in spec order
  // The candidates every problem shared (a c++ spec without size_defines), for a dispatch table
  // made after tuning; unset when they were built per problem.
  std::optional<SpecChoices> shared_choices;
  bool interrupted = false;  // Ctrl-C (the CLI's SIGINT flag) stopped it between problems
  // With SpecTuneRequest::cache_only: the first selected problem the cache did not answer
  // (nullopt: it answered every one).
  std::optional<std::size_t> unanswered;
};

// Tunes the selected problems of a kernel spec (not op: specs) on `backend` with `options`
// (spec_selector_options() and the caller's), storing in `cache`. Fails only when the candidates
// that every problem shares cannot be built; a problem that fails is an entry with an error.
[[nodiscard]] Result<SpecTuning> tune_spec(const Spec& spec, const Backend& backend,
                                           TuningCache& cache, const SelectorOptions& options,
                                           const SpecTuneRequest& request);

}  // namespace ktune
