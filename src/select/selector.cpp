// Selector: the cache key, and the selection as a script of stages (select/select_stages.h)
// over the candidates reached through CandidateRunner.
#include "ktune/select/selector.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "select/candidate_stage_runner.h"
#include "select/progress_line.h"
#include "select/select_stages.h"
#include "worker/worker.h"

namespace ktune {

Selector::Selector(const Backend& backend, TuningCache& cache, SelectorOptions options)
    : backend_(backend), cache_(cache), options_(std::move(options)) {}

Selector::~Selector() = default;

int Selector::worker_restarts() const {
  int n = 0;
  for (const auto& pool : pools_) n += pool->restarts();
  return n;
}

TuningKey Selector::key_for(const Problem& problem, const std::vector<ChoicePtr>& candidates,
                            const Choice* reference) const {
  return key_for(problem, candidates, reference, options_);
}

TuningKey Selector::key_for(const Problem& problem, const std::vector<ChoicePtr>& candidates,
                            const Choice* reference, const SelectorOptions& options) const {
  KeyInputs in{problem.op,
               problem.key(),
               {},
               KeyVerification{},
               backend_.device_fingerprint(),
               backend_.toolchain_fingerprint()};
  // CPU devices pinned to fewer cores than the machine has (--devices 0-3,4-7) measure what
  // the kernels do on that many: picks for another machine, keyed apart.
  if (!options.devices.empty() && !options.devices.front().cpus.empty() &&
      options.devices.front().cpus.size() != std::thread::hardware_concurrency()) {
    in.device += fmt::format(" pinned to {} core(s)", options.devices.front().cpus.size());
  }
  for (const ChoicePtr& c : candidates) in.candidates.push_back(c->hash_key());
  // Without a reference the candidates are compared with the first valid one (run_stage):
  // keyed apart from tunings that checked them only for NaN, unwritten outputs and redzones.
  in.verification->reference =
      reference ? reference->hash_key() : std::string("ktune:first-valid-candidate");
  in.verification->tolerance = options.tolerance;
  in.verification->seed = options.seed;
  return make_tuning_key(in);
}

Result<Selection> Selector::select(const Problem& problem, std::vector<ChoicePtr>& candidates,
                                   Choice* reference) {
  return select(problem, candidates, reference, options_);
}

Result<Selection> Selector::select(const Problem& problem, std::vector<ChoicePtr>& candidates,
                                   Choice* reference, const SelectorOptions& options) {
  // The workers were started with the selector's own settings.
  const auto slots = [](const SelectorOptions& o) {
    std::vector<std::string> names;
    for (const DeviceSlot& d : o.devices) names.push_back(d.name);
    return names;
  };
  if (options.isolate != options_.isolate || slots(options) != slots(options_)) {
    return make_error(ErrorCode::kInvalidArgument,
                      "Selector::select: these options isolate or place workers otherwise than "
                      "the selector's; use another Selector");
  }
  const SelectContext ctx{problem, candidates, options, selection_title(problem)};
  CandidateStageRunner runner(backend_, problem, options, worker_pools());
  return select_with(ctx, backend_, cache_, key_for(problem, candidates, reference, options),
                     reference, runner);
}

Result<std::optional<Selection>> Selector::cached(const Problem& problem,
                                                  std::vector<ChoicePtr>& candidates,
                                                  const Choice* reference) {
  if (!options_.read_cache) return std::optional<Selection>();
  const SelectContext ctx{problem, candidates, options_, selection_title(problem)};
  return cached_selection(ctx, cache_, key_for(problem, candidates, reference));
}

Result<std::vector<BenchStats>> Selector::measure_again(const Problem& problem,
                                                        const std::vector<Choice*>& choices,
                                                        Choice* reference,
                                                        const BenchOptions& round_bench,
                                                        int rounds) {
  // On the first device only, where the pick was decided: the others would prepare the
  // reference for nothing.
  const std::vector<WorkerPool*> pools = worker_pools();
  std::vector<WorkerPool*> first;
  if (!pools.empty()) first.push_back(pools.front());
  CandidateStageRunner runner(backend_, problem, options_, std::move(first));
  if (Status s = runner.prepare(reference); !s) return std::unexpected(s.error());
  auto again = runner.remeasure(choices, rounds, round_bench);
  if (!again) return std::unexpected(again.error());
  std::vector<BenchStats> out;
  out.reserve(again->size());
  for (std::vector<double>& rounds_ns : *again) out.push_back(compute_stats(std::move(rounds_ns)));
  return out;
}

MeasureSettings measure_settings(const SelectorOptions& o) {
  return MeasureSettings{o.bench.budget_ms,   o.bench.min_runs,    o.bench.max_runs,
                         o.bench.warmup_runs, o.bench.flush_cache, o.bench.graph_calls,
                         o.close_call_rounds, o.close_call_band};
}

std::vector<WorkerPool*> Selector::worker_pools() {
  if (!options_.isolate) return {};
  // Made once and kept across problems: a worker keeps its loaded modules. Making a pool starts
  // no process; its first request does.
  if (pools_.empty()) {
    const auto make = [&](WorkerOptions worker, const std::string& device) {
      auto pool = std::make_unique<WorkerPool>(std::move(worker));
      if (options_.verbose && options_.progress) {
        pool->set_notice([f = options_.progress, device](const std::string& line) {
          progress_note(f, device.empty() ? line : fmt::format("{}: {}", device, line));
        });
      }
      pools_.push_back(std::move(pool));
    };
    if (options_.devices.size() < 2) {
      make(options_.devices.empty() ? options_.worker
                                    : worker_options_for(options_.worker, options_.devices[0]),
           "");
    } else {
      for (const DeviceSlot& d : options_.devices) {
        make(worker_options_for(options_.worker, d), d.name);
      }
    }
  }
  std::vector<WorkerPool*> out;
  for (const auto& pool : pools_) out.push_back(pool.get());
  return out;
}

}  // namespace ktune
