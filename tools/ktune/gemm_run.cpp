// tune_gemm: one CUDA GEMM shape over the full candidate set (the tensor-core and SIMT
// templates, cuBLAS, the cuBLASLt heuristic's top algorithms), verified against cuBLAS, with the
// AUTOTUNE table and the pick's TFLOP/s printed; or, compile-only, every template candidate
// compiled for an architecture without a GPU.
#include "gemm_run.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>

#include "core/cuda_predict.h"
#include "core/trace.h"
#include "json_out.h"
#include "ktune/cache/tuning_cache.h"
#include "ktune/ops/cuda_gemm.h"
#include "ktune/select/selector.h"
#include "ktune/spec/spec.h"
#include "ktune/tuning/devices.h"
#include "select/progress_line.h"
#include "tuning/cuda_compile_ahead.h"

namespace ktune::cli {
namespace {

double tflops(const GemmShape& s, double ns) {
  return ns > 0 ? 2.0 * double(s.m) * double(s.n) * double(s.k) / ns / 1e3 : 0;
}

// The candidates whose compile runs NVRTC: templates, and library GEMMs paired with the separate
// epilogue kernel (its compile). The rest (cuBLAS, cuBLASLt) compile in no time.
bool nvrtc_compiled(const Choice& c) {
  return c.kind() == Choice::Kind::kTemplate || c.name().ends_with("+epilogue");
}

// Every candidate compiled for an architecture, without a GPU: what CI can check. In parallel
// (--jobs), as a tuning compiles.
int compile_only(std::FILE* out, const CudaBackend& backend, std::vector<ChoicePtr>& choices,
                 unsigned jobs, std::chrono::steady_clock::time_point t0) {
  const CompileCounts n = compile_choices(backend, choices, jobs, nvrtc_compiled);
  const double total_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print(out, "Compiled {} candidates for {} ({} failed) in {:.3f} s\n", n.compiled,
             backend.arch(), n.failed, total_s);
  return n.failed ? kExitError : 0;
}

// The fastest valid candidate of each kind against the pick: our templates, the library GEMMs
// (with the separate epilogue kernel when there is an epilogue) and cuBLASLt's fused epilogues.
void print_groups(std::FILE* out, const TuningRecord& record, double pick_ns) {
  struct Group {
    const char* title;
    const CandidateRecord* best = nullptr;
  };
  Group groups[] = {{"best template"}, {"best library GEMM"}, {"best cuBLASLt fused epilogue"}};
  for (const CandidateRecord& c : record.candidates) {
    if (c.outcome != Outcome::kOk || !c.stats) continue;
    const bool library = c.name.starts_with("cublas_gemm") || c.name.starts_with("cublaslt_algo");
    Group& g = c.name.starts_with("cuda_gemm_") ? groups[0] : library ? groups[1] : groups[2];
    if (!g.best || c.stats->median_ns < g.best->stats->median_ns) g.best = &c;
  }
  for (const Group& g : groups) {
    if (!g.best) continue;
    fmt::print(out, "  {}: {} ({:.4f} ms); pick / it: {:.3f}\n", g.title, g.best->name,
               g.best->stats->median_ns / 1e6, pick_ns / g.best->stats->median_ns);
  }
}

// The request of `shape` under `options` (the first device listed with --devices).
CudaGemmRequest gemm_request(const GemmShape& shape, const GemmOptions& options) {
  return {shape.m,
          shape.n,
          shape.k,
          shape.dtype,
          shape.epilogue,
          first_listed_device(options.selector.devices, options.device),
          options.cublaslt_algos,
          options.simt,
          options.graph_calls};
}

// The options of the backend open_gemm_backend opens (and of the one compiling ahead for it:
// its flags are part of every compile's key).
CudaCompileOptions gemm_compile_options(const GemmOptions& options) {
  CudaCompileOptions copts;
  copts.arch = options.arch;
  // With --devices, the first device listed is the one compiled for and deciding.
  copts.device = first_listed_device(options.selector.devices, options.device);
  copts.on_command = verbose_compile_hook(options.selector);
  return copts;
}

}  // namespace

std::optional<CudaDeviceInfo> predict_gemm_device(const GemmOptions& options,
                                                  const CliContext& ctx) {
  // A shared tuning cache (Redis) is not opened twice for it.
  if (!options.arch.empty() || options.compile_only || !ctx.cache_url.empty()) return std::nullopt;
  // Before the driver starts: within a process, NVML's initialisation waits for a cuInit under
  // way (about 20 ms before it, 0.1-0.2 s behind it on an H200 host).
  const trace::Span span("predict device", "cli");
  return predict_cuda_device(first_listed_device(options.selector.devices, options.device));
}

std::optional<CudaBackend> open_gemm_backend(const GemmOptions& options, const CliContext& ctx,
                                             const CudaCompileAhead* ahead) {
  const CudaCompileOptions copts = gemm_compile_options(options);
  auto backend = CudaBackend::create(copts, ctx.cache_dir);
  if (!backend) {
    fmt::print(stderr, "error: {}\n", backend.error().message);
    return std::nullopt;
  }
  if (ahead && ahead->device() && options.selector.verbose && !options.selector.quiet) {
    if (Result<CudaDeviceInfo> opened = cuda_device_info(copts.device)) {
      if (const std::string m = ahead->mismatch(*opened); !m.empty()) progress_note(stderr, m);
    }
  }
  return std::move(*backend);
}

std::optional<CudaBackend> backend_for_cache_hits(const GemmOptions& options, const CliContext& ctx,
                                                  const CudaDeviceInfo& predicted) {
  const SelectorFlags& f = options.selector;
  if (f.no_cache || f.retune || !f.devices.empty() || options.compile_only ||
      !ctx.cache_url.empty() || !std::filesystem::exists(sqlite_cache_file(ctx.cache_dir))) {
    return std::nullopt;
  }
  Result<CudaBackend> backend =
      CudaBackend::for_device(gemm_compile_options(options), ctx.cache_dir, predicted);
  if (!backend) return std::nullopt;
  return std::move(*backend);
}

std::unique_ptr<CudaCompileAhead> compile_gemm_ahead(const GemmShape& shape,
                                                     const GemmOptions& options,
                                                     const CliContext& ctx,
                                                     std::optional<CudaDeviceInfo> device,
                                                     bool check_cache) {
  auto plan = [shape, options, ctx,
               check_cache](const CudaBackend& backend) -> std::vector<ChoicePtr> {
    // The candidates as tune_gemm makes them, filtered by the predicted device's rules.
    CudaGemmTuning tuning =
        cuda_gemm_tuning(backend, gemm_request(shape, options),
                         to_selector_options(options.selector, cuda_gemm_selector_defaults()));
    // A tuning cache that answers for this device compiles nothing. Without its file (a cold
    // run) there is nothing to ask, and creating it is the tuning's to do.
    if (check_cache && tuning.options.read_cache &&
        std::filesystem::exists(sqlite_cache_file(ctx.cache_dir))) {
      std::unique_ptr<TuningCache> cache = open_sqlite_in(ctx);
      if (!cache) return {};
      const Selector keyer(backend, *cache, tuning.options);
      const TuningKey key =
          keyer.key_for(tuning.problem, tuning.candidates, tuning.reference.get());
      Result<std::optional<TuningRecord>> hit = cache->lookup(key);
      if (!hit || *hit) return {};
    }
    std::vector<ChoicePtr> todo;
    for (ChoicePtr& c : tuning.candidates) {
      if (nvrtc_compiled(*c) && c->supports(tuning.problem)) todo.push_back(std::move(c));
    }
    return todo;
  };
  return std::make_unique<CudaCompileAhead>(std::move(device), gemm_compile_options(options),
                                            ctx.cache_dir, options.selector.jobs, std::move(plan));
}

std::unique_ptr<CudaCompileAhead> compile_spec_ahead(
    const Spec& spec, std::size_t problem, const GemmOptions& options, const CliContext& ctx,
    std::shared_ptr<const Backend> host, std::optional<CudaDeviceInfo> predicted, bool asked) {
  const bool reads = !options.selector.no_cache && !options.selector.retune;
  std::optional<CudaDeviceInfo> device;
  if (problem < spec.problems.size() &&
      (asked || !(reads && std::filesystem::exists(sqlite_cache_file(ctx.cache_dir))))) {
    device = std::move(predicted);
  }
  auto plan = [&spec, problem, host](const CudaBackend& backend) -> std::vector<ChoicePtr> {
    const ProblemDecl& decl = spec.problems[problem];
    Result<Problem> made = make_problem(spec, decl);
    if (!made) return {};
    Result<SpecChoices> choices =
        spec_choices_per_problem(spec)
            ? make_spec_choices(spec, {}, SpecTarget{backend.device_limits(), &decl, host})
            : make_spec_choices(spec);
    if (!choices) return {};
    std::vector<ChoicePtr> todo;
    for (ChoicePtr& c : choices->candidates) {
      if (c->kind() == Choice::Kind::kTemplate && c->supports(*made)) todo.push_back(std::move(c));
    }
    return todo;
  };
  return std::make_unique<CudaCompileAhead>(std::move(device), gemm_compile_options(options),
                                            ctx.cache_dir, options.selector.jobs, std::move(plan));
}

GemmRun tune_gemm(const CudaBackend& backend, const GemmShape& shape, const GemmOptions& options,
                  const CliContext& ctx, std::chrono::steady_clock::time_point start) {
  const GemmShape& s = shape;
  const GemmOptions& f = options;
  const std::chrono::steady_clock::time_point t0 = start;
  trace::Span setup_span("candidates", "cli");
  CudaGemmTuning tuning = cuda_gemm_tuning(
      backend, gemm_request(s, f), to_selector_options(f.selector, cuda_gemm_selector_defaults()));
  if (!f.compile_only && !apply_devices(f.selector, backend, tuning.options)) return {kExitUsage};
  const Problem& problem = tuning.problem;
  tuning.options.spec_name = f.spec_name;
  std::FILE* out = text_out(f.selector);
  if (f.compile_only) {
    return {compile_only(out, backend, tuning.candidates, f.selector.jobs, t0)};
  }

  std::unique_ptr<TuningCache> cache = open_tuning_cache(f.selector.no_cache, ctx);
  if (!cache) return {kExitError};
  const SelectorOptions& sopts = tuning.options;
  Selector selector(backend, *cache, with_device_lock(sopts, ctx));
  setup_span.end();

  Result<Selection> sel = make_error(ErrorCode::kInternal, "tune_gemm: no selection");
  if (f.cache_only) {
    // A lookup only: anything else (an error included) is the tuning's, with the driver.
    Result<std::optional<Selection>> hit =
        selector.cached(problem, tuning.candidates, tuning.reference.get());
    if (!hit || !*hit) return {.answered = false};
    sel = std::move(**hit);
  } else {
    sel = selector.select(problem, tuning.candidates, tuning.reference.get());
  }
  if (!sel) {
    fmt::print(stderr, "error: {}\n", sel.error().message);
    if (f.json) f.json->add_failure(problem.name, sel.error().message);
    return {kExitError};
  }
  if (f.json) f.json->add(problem.name, *sel);
  if (sel->from_cache) {
    const std::optional<int> graph_calls =
        f.graph_calls >= 0 ? std::optional<int>(sopts.bench.graph_calls) : std::nullopt;
    std::fputs(stored_settings_note(f.selector, graph_calls, sel->record).c_str(), out);
  }
  const CandidateRecord& pick = sel->record.candidates[sel->winner_index];
  const double pick_ns = pick.stats ? pick.stats->median_ns : 0;
  fmt::print(out, "Pick: {} at {:.1f} TFLOP/s ({:.4f} ms)\n", pick.name, tflops(s, pick_ns),
             pick_ns / 1e6);
  const std::string cublas_name = s.epilogue.empty() ? "cublas_gemm" : "cublas_gemm+epilogue";
  for (const CandidateRecord& c : sel->record.candidates) {
    if (c.name == cublas_name && c.stats) {
      fmt::print(out, "cuBLAS{}: {:.1f} TFLOP/s ({:.4f} ms); pick / cuBLAS time: {:.3f}\n",
                 s.epilogue.empty() ? "" : " + separate epilogue", tflops(s, c.stats->median_ns),
                 c.stats->median_ns / 1e6, pick_ns / c.stats->median_ns);
    }
  }
  print_groups(out, sel->record, pick_ns);
  // The tuning's time: the regret rounds below are a measurement of it, not a part.
  const double total_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  if (f.regret_rounds > 0 && !sel->from_cache) {
    const auto regret_t0 = std::chrono::steady_clock::now();
    // The pick against the fastest candidates, measured again side by side: every valid
    // candidate within 25% of the pick's first time, plus cuBLAS.
    std::vector<Choice*> again;
    std::vector<std::string> names;
    for (std::size_t i = 0; i < tuning.candidates.size(); ++i) {
      const CandidateRecord& c = sel->record.candidates[i];
      if (c.outcome != Outcome::kOk || !c.stats) continue;
      if (c.stats->median_ns <= pick_ns * 1.25 || c.name == "cublas_gemm") {
        again.push_back(tuning.candidates[i].get());
        names.push_back(c.name);
      }
    }
    BenchOptions round = sopts.bench;
    round.warmup_runs = 1;
    round.min_runs = 5;
    round.max_runs = 5;
    auto stats =
        selector.measure_again(problem, again, tuning.reference.get(), round, f.regret_rounds);
    if (!stats) {
      fmt::print(stderr, "error: re-measuring for the regret: {}\n", stats.error().message);
      return {kExitError};
    }
    std::size_t best = 0, picked = 0;
    for (std::size_t i = 0; i < again.size(); ++i) {
      if ((*stats)[i].median_ns < (*stats)[best].median_ns) best = i;
      if (names[i] == pick.name) picked = i;
    }
    for (std::size_t i = 0; i < again.size(); ++i) {
      fmt::print(out, "  re-measured {:<48} {:.4f} ms {:7.1f} TFLOP/s\n", names[i],
                 (*stats)[i].median_ns / 1e6, tflops(s, (*stats)[i].median_ns));
    }
    fmt::print(out, "Regret: pick {} / fastest {} = {:.4f} ({} candidates, {} rounds, {:.3f} s)\n",
               pick.name, names[best], (*stats)[picked].median_ns / (*stats)[best].median_ns,
               again.size(), f.regret_rounds,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - regret_t0).count());
  }
  fmt::print(out, "Tuned gemm {}x{}x{} {} in {:.3f} s (select {:.4f} s{}); cache: {}\n", s.m, s.n,
             s.k, dtype_name(s.dtype), total_s, sel->select_s,
             sel->from_cache ? ", from the tuning cache" : "",
             f.selector.no_cache ? "off" : cache_location(ctx));
  return {0, sel->from_cache};
}

}  // namespace ktune::cli
