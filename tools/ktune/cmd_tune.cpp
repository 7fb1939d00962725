// `ktune tune SPEC`: tune every problem of a spec and print the AUTOTUNE tables: a kernel spec on
// the CPU, an `op: cuda.gemm` spec on a CUDA GPU exactly as `ktune gemm` (gemm_run.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>

#include "cli.h"
#include "core/build_support.h"
#include "gemm_run.h"
#include "json_out.h"
#include "ktune/backend/cpu_backend.h"
#include "ktune/backend/opencl_backend.h"
#include "ktune/cache/tuning_cache.h"
#include "ktune/select/selector.h"
#include "ktune/spec/spec.h"
#include "ktune/tuning/devices.h"
#include "ktune/tuning/spec_dispatcher.h"
#include "ktune/tuning/tune_spec.h"
#include "mpi_comm.h"
#include "options.h"
#include "select/progress_line.h"
#include "select/resume.h"
#include "tune_flags.h"
#if KTUNE_HAVE_CUDA
#include "core/cuda_predict.h"
#include "tuning/cuda_compile_ahead.h"
#endif

namespace ktune::cli {
namespace {

// A kernel spec's defaults (the CPU's).
SelectorOptions tune_defaults() { return cpu_tune_defaults(); }

// The flags given that the spec's form does not use: a usage error rather than silently ignored.
std::vector<std::string> unused_flags(const TuneFlags& f, bool op_spec, std::string_view language) {
  std::vector<std::string> out;
  auto given = [&](bool set, const char* flag) {
    if (set) out.emplace_back(flag);
  };
  given(language != "opencl" && !f.opencl_device.empty(), "--opencl-device");
  if (!op_spec && language != "c++") {
    given(!f.cxx.empty(), "--cxx");
    given(!f.cxxflags.empty(), "--cxxflags");
    given(!f.cxxflags_replace.empty(), "--cxxflags-replace");
    given(!f.dispatch_table.empty(), "--dispatch-table");
    given(f.selector.memory_limit_mb.has_value(), "--memory-limit-mb");
    given(language == "opencl" && f.gemm.device != 0, "--device");
    given(language == "opencl" && !f.gemm.arch.empty(), "--arch");
    return out;
  }
  if (op_spec) {
    given(f.selector.no_flush, "--no-flush");
    given(!f.cxx.empty(), "--cxx");
    given(!f.cxxflags.empty(), "--cxxflags");
    given(!f.cxxflags_replace.empty(), "--cxxflags-replace");
    given(f.compile_timeout_s.has_value(), "--compile-timeout-s");
    given(f.selector.memory_limit_mb.has_value(), "--memory-limit-mb");
    given(!f.dispatch_table.empty(), "--dispatch-table");
  } else {
    given(f.gemm.device != 0, "--device");
    given(!f.gemm.arch.empty(), "--arch");
    given(f.gemm.compile_only, "--compile-only");
  }
  return out;
}

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

int report(const TuneFlags& f, const CliContext& ctx, std::chrono::steady_clock::time_point t0,
           int tuned, int hits, int failures) {
  const double total_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::FILE* out = text_out(f.selector);
  if (f.gemm.compile_only) {
    fmt::print(out, "Compiled the candidates of {} problem(s) in {:.3f} s{}\n", tuned, total_s,
               failures ? fmt::format(" ({} failed)", failures) : "");
  } else {
    fmt::print(out, "Tuned {} problem(s) in {:.3f} s ({} from the tuning cache{}); cache: {}\n",
               tuned, total_s, hits, failures ? fmt::format(", {} failed", failures) : "",
               f.selector.no_cache ? "off" : cache_location(ctx));
  }
  const int code = failures ? kExitError : 0;
  if (f.json) {
    std::fflush(out);
    const auto cache = f.selector.no_cache ? std::nullopt : std::optional(ctx.cache_dir);
    // After Ctrl-C the document holds what was done; main() exits 130.
    const auto where = cache ? std::optional(cache_location(ctx)) : std::nullopt;
    fmt::print("{}", f.json->text(cache, where, total_s, interrupted() ? 130 : code));
    std::fflush(stdout);
  }
  return code;
}

// The index of the spec's first problem that --problems selects (by its declared name), if any:
// the one whose candidates compile ahead of the driver.
// With -v: how many problems the tuning cache answered for the device NVML predicted (`device`,
// prediction_text), before the driver started or without it.
[[maybe_unused]] void note_answered(const TuneFlags& f, std::size_t problems,
                                    const std::string& device, bool driver_started) {
  if (!f.selector.verbose || f.selector.quiet) return;
  progress_note(
      stderr, fmt::format("answered {} problem(s) from the tuning cache for {}{}", problems, device,
                          driver_started ? "" : " without starting the CUDA driver"));
}

[[maybe_unused]] std::optional<std::size_t> first_wanted(const TuneFlags& f, const Spec& spec) {
  for (std::size_t i = 0; i < spec.problems.size(); ++i) {
    if (wanted(f, spec.problems[i], i, spec.problems[i].name)) return i;
  }
  return std::nullopt;
}

// op: cuda.gemm: each problem through tune_gemm, with `ktune gemm`'s defaults where this
// command's flags are not given, so that the tuning-cache key is the one `ktune gemm` uses.
int run_gemm_spec(const TuneFlags& f, const CliContext& ctx, const Spec& spec,
                  std::chrono::steady_clock::time_point t0) {
#if !KTUNE_HAVE_CUDA
  (void)f, (void)ctx, (void)t0;
  fmt::print(stderr, "error: {}: op: {}: {}\n", f.spec, spec.op.name,
             not_built(BuildFeature::kCuda).message);
  return kExitError;
#else
  GemmOptions o = f.gemm;
  o.selector = f.selector;
  o.spec_name = spec.name;
  o.selector.seed = f.selector.seed.value_or(spec.seed);
  // The spec's search: where no flag overrides it.
  if (!o.selector.strategy && spec.search.strategy != SearchOptions{}.strategy) {
    o.selector.strategy = spec.search.strategy;
  }
  if (!o.selector.max_evals) o.selector.max_evals = spec.search.max_evals;
  if (!o.selector.time_limit_s) o.selector.time_limit_s = spec.search.time_limit_s;
  if (!o.selector.search_seed && spec.search.seed != 0) o.selector.search_seed = spec.search.seed;
  // A problem the tuning cache answers for the device NVML reports needs no driver: each is asked
  // first, on a backend made without it, until one is not answered. The driver starts there,
  // with that problem's templates compiling meanwhile (`ktune gemm`'s order, gemm_run.h).
  const std::optional<CudaDeviceInfo> predicted = predict_gemm_device(o, ctx);
  std::optional<CudaBackend> answering =
      predicted ? backend_for_cache_hits(o, ctx, *predicted) : std::nullopt;
  std::unique_ptr<CudaCompileAhead> ahead;
  std::optional<CudaBackend> backend;
  int failures = 0, tuned = 0, hits = 0, answered_ahead = 0;
  const auto count = [&](const GemmRun& run) {
    if (run.exit_code != 0) {
      ++failures;
      return;
    }
    ++tuned;
    hits += run.from_cache;
    std::fflush(stdout);
  };
  for (std::size_t i = 0; i < spec.problems.size() && !interrupted(); ++i) {
    const ProblemDecl& decl = spec.problems[i];
    // parse_op_spec made sure that every problem binds M, N and K.
    const GemmShape shape{*problem_size(decl, "M"), *problem_size(decl, "N"),
                          *problem_size(decl, "K"), spec.op.dtype, spec.epilogue};
    if (!wanted(f, decl, i, decl.name)) continue;
    o.json = f.json.get();
    bool asked = false;
    if (answering) {
      const ScopedCudaDeviceHint hint(*predicted);
      GemmOptions only = o;
      only.cache_only = true;
      asked = true;
      if (const GemmRun hit = tune_gemm(*answering, shape, only, ctx); hit.answered) {
        ++answered_ahead;
        count(hit);
        continue;
      }
      answering.reset();  // from here on, the driver's
    }
    if (!backend) {
      ahead = compile_gemm_ahead(shape, o, ctx, predicted, /*check_cache=*/!asked);
      backend = open_gemm_backend(o, ctx, ahead.get());
      if (!backend) return kExitError;
    }
    count(tune_gemm(*backend, shape, o, ctx));
  }
  if (answered_ahead > 0) {
    note_answered(f, answered_ahead, prediction_text(*predicted),
                  /*driver_started=*/backend.has_value());
  }
  return report(f, ctx, t0, tuned, hits, failures);
#endif
}

struct Counts {
  int tuned = 0, hits = 0, failures = 0;
};

void print_over_limits(std::FILE* out, const ProblemDecl& problem, const SpecChoices& choices) {
  if (choices.over_limits == 0) return;
  fmt::print(out,
             "{}: {} config(s) over the device's limits left out before compiling (the first: "
             "{})\n",
             problem.name, choices.over_limits, choices.over_limits_example);
  std::fflush(out);
}

// The selected problems through tune_spec (candidates shared, or built per problem for device
// kernels and size_defines), each problem's table printed by the Selector; --dispatch-table
// written after tuning. `open(first)` gives the backend that tunes from problem `first` on
// (null: it failed and said why). With `answering` (a backend made without the CUDA driver), the
// tuning cache answers the selected problems first, in spec order, and open() is called at the
// first it does not answer, if any (with -v, "answered N problem(s) from the tuning cache for
// <answering_device>" says how many it answered).
int tune_problems(const TuneFlags& f, const CliContext& ctx, const Spec& spec,
                  const std::function<const Backend*(std::size_t first)>& open,
                  const SelectorOptions& sopts, std::span<const std::string> flags,
                  std::chrono::steady_clock::time_point t0, const Backend* answering,
                  const std::string& answering_device = {}) {
  SpecTuneRequest request;
  request.problems = f.problems;
  request.backend_flags.assign(flags.begin(), flags.end());
  auto host = host_backend(f, ctx, spec);
  if (!host) {
    fmt::print(stderr, "error: {}\n", host.error().message);
    return kExitError;
  }
  request.host_backend = *host;
  SelectorOptions options = sopts;
  std::unique_ptr<TuningCache> cache = open_tuning_cache(f.selector.no_cache, ctx);
  if (!cache) return kExitError;
  Counts n;
  std::FILE* out = text_out(f.selector);
  request.before = [out](const ProblemDecl& decl, const SpecChoices& choices) {
    print_over_limits(out, decl, choices);
  };
  request.after = [&](const SpecProblemTuning& one) {
    if (!one.selection) {
      // Ctrl-C is not a failure of the problem: the selection says what it kept.
      fmt::print(stderr, "{}: {}\n", interrupted() ? "ktune" : "error",
                 one.selection.error().message);
      if (f.json) {
        const std::string name = !one.problem_name.empty() ? one.problem_name
                                 : !one.name.empty()       ? one.name
                                                           : std::to_string(one.index);
        f.json->add_failure(name, one.selection.error().message);
      }
      ++n.failures;
      return;
    }
    ++n.tuned;
    n.hits += one.selection->from_cache;
    if (f.json) f.json->add(one.problem_name, *one.selection);
    if (one.selection->from_cache) {
      std::fputs(stored_settings_note(f.selector, {}, one.selection->record).c_str(), out);
    }
    std::fflush(out);
  };
  const auto finish = [&](Result<SpecTuning> tuned, const Backend& backend) {
    if (!tuned) {
      fmt::print(stderr, "error: {}\n", tuned.error().message);
      return kExitError;
    }
    if (!f.dispatch_table.empty() && !tuned->interrupted && tuned->shared_choices) {
      if (!write_table(f, spec, *tuned->shared_choices, backend, *cache, options)) ++n.failures;
    }
    return report(f, ctx, t0, n.tuned, n.hits, n.failures);
  };
  if (answering) {
    request.cache_only = true;
    Result<SpecTuning> answered = tune_spec(spec, *answering, *cache, options, request);
    request.cache_only = false;
    if (answered && !answered->problems.empty()) {
      note_answered(f, answered->problems.size(), answering_device,
                    /*driver_started=*/answered->unanswered.has_value());
    }
    if (!answered || !answered->unanswered) return finish(std::move(answered), *answering);
    request.first = *answered->unanswered;
  }
  const Backend* backend = open(request.first);
  if (!backend) return kExitError;
  if (!apply_devices(f.selector, *backend, options)) return kExitUsage;
  return finish(tune_spec(spec, *backend, *cache, with_device_lock(options, ctx), request),
                *backend);
}

int tune_problems(const TuneFlags& f, const CliContext& ctx, const Spec& spec,
                  const Backend& backend, const SelectorOptions& sopts,
                  std::span<const std::string> flags, std::chrono::steady_clock::time_point t0) {
  return tune_problems(
      f, ctx, spec, [&](std::size_t) { return &backend; }, sopts, flags, t0, nullptr);
}

// --compile-only: every problem's candidates and reference compiled in parallel (--jobs),
// nothing run.
[[maybe_unused]] int compile_problems(const TuneFlags& f, const CliContext& ctx, const Spec& spec,
                                      const Backend& backend,
                                      std::chrono::steady_clock::time_point t0) {
  auto host = host_backend(f, ctx, spec);
  if (!host) {
    fmt::print(stderr, "error: {}\n", host.error().message);
    return kExitError;
  }
  int problems = 0;
  int compiled = 0, failed = 0;
  for (std::size_t i = 0; i < spec.problems.size(); ++i) {
    if (!wanted(f, spec.problems[i], i, spec.problems[i].name)) continue;
    ++problems;
    auto choices =
        make_spec_choices(spec, {}, SpecTarget{backend.device_limits(), &spec.problems[i], *host});
    if (!choices) {
      fmt::print(stderr, "error: {}\n", choices.error().message);
      ++failed;
      continue;
    }
    print_over_limits(text_out(f.selector), spec.problems[i], *choices);
    if (choices->reference) choices->candidates.push_back(std::move(choices->reference));
    const CompileCounts n = compile_choices(backend, choices->candidates, f.selector.jobs);
    compiled += n.compiled;
    failed += n.failed;
  }
  const double total_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print(text_out(f.selector),
             "Compiled {} candidates of {} problem(s) in {:.3f} s ({} failed)\n", compiled,
             problems, total_s, failed);
  return failed ? kExitError : 0;
}

// A user's CUDA kernel: NVRTC for the GPU (or --arch), one worker on --device.
int run_cuda_spec(const TuneFlags& f, const CliContext& ctx, const Spec& spec,
                  SelectorOptions sopts, std::chrono::steady_clock::time_point t0) {
#if !KTUNE_HAVE_CUDA
  (void)ctx, (void)spec, (void)sopts, (void)t0;
  fmt::print(stderr, "error: {}: kernel.language cuda: {}\n", f.spec,
             not_built(BuildFeature::kCuda).message);
  return kExitError;
#else
  GemmOptions target = f.gemm;
  target.selector = f.selector;  // --verbose's compile hook
  // With --devices, the first device listed is the one compiled for and deciding.
  target.device = first_listed_device(f.selector.devices, f.gemm.device);
  // One worker per GPU: it sees only this one, as its device 0 (--devices: one per device).
  sopts.worker.env.emplace_back("CUDA_VISIBLE_DEVICES", cuda_visible_device(target.device));
  // As for op: cuda.gemm specs: the problems the tuning cache answers for the device NVML
  // reports need no driver, so they are asked first (in spec order, on a backend made without
  // it); the driver starts at the first one not answered, whose templates compile meanwhile.
  const std::optional<CudaDeviceInfo> predicted = predict_gemm_device(target, ctx);
  std::optional<CudaBackend> answering =
      predicted ? backend_for_cache_hits(target, ctx, *predicted) : std::nullopt;
  std::unique_ptr<CudaCompileAhead> ahead;
  std::optional<CudaBackend> backend;
  const auto open = [&](std::size_t first) -> const Backend* {
    // The first problem to tune: `first` after the cache's answers, else the first wanted.
    const std::optional<std::size_t> problem =
        answering ? std::optional<std::size_t>(first) : first_wanted(f, spec);
    if (problem) {
      if (auto host = host_backend(f, ctx, spec)) {
        ahead = compile_spec_ahead(spec, *problem, target, ctx, *host, predicted,
                                   /*asked=*/answering.has_value());
      }
    }
    backend = open_gemm_backend(target, ctx, ahead.get());
    return backend ? &*backend : nullptr;
  };
  if (f.gemm.compile_only) {
    if (!open(0)) return kExitError;
    return compile_problems(f, ctx, spec, *backend, t0);
  }
  return tune_problems(f, ctx, spec, open, sopts, {}, t0, answering ? &*answering : nullptr,
                       predicted ? prediction_text(*predicted) : std::string());
#endif
}

// A user's OpenCL kernel on --opencl-device (PoCL, any GPU).
int run_opencl_spec(const TuneFlags& f, const CliContext& ctx, const Spec& spec,
                    SelectorOptions sopts, std::chrono::steady_clock::time_point t0) {
#if !KTUNE_HAVE_OPENCL
  (void)ctx, (void)spec, (void)sopts, (void)t0;
  fmt::print(stderr, "error: {}: kernel.language opencl: {}\n", f.spec,
             not_built(BuildFeature::kOpenCL).message);
  return kExitError;
#else
  OpenCLOptions options;
  options.device = f.opencl_device;
  options.on_command = verbose_compile_hook(f.selector);
  auto backend = OpenCLBackend::create(options, ctx.cache_dir);
  if (!backend) {
    fmt::print(stderr, "error: {}\n", backend.error().message);
    return kExitError;
  }
  if (f.gemm.compile_only) return compile_problems(f, ctx, spec, *backend, t0);
  // One worker per device: it opens exactly the device the backend compiled for.
  sopts.worker.env.emplace_back("KTUNE_OPENCL_DEVICE", backend->device_selector());
  return tune_problems(f, ctx, spec, *backend, sopts, {}, t0);
#endif
}

int run_tune(const TuneFlags& f, const CliContext& ctx) {
  const auto t0 = std::chrono::steady_clock::now();
  auto spec = load_spec(f.spec);
  if (!spec) {
    fmt::print(stderr, "error: {}\n", spec.error().message);
    return kExitError;
  }
  const bool op_spec = !spec->op.name.empty();
  const std::string& language = spec->kernel.language;
  if (auto unused = unused_flags(f, op_spec, language); !unused.empty()) {
    fmt::print(stderr, "error: {}: {} {} not apply to {}\n", f.spec, fmt::join(unused, ", "),
               unused.size() == 1 ? "does" : "do",
               op_spec             ? fmt::format("op: {} specs", spec->op.name)
               : language == "c++" ? std::string("c++ kernel specs (only to op: and cuda specs)")
                                   : fmt::format("{} kernel specs", language));
    return kExitUsage;
  }
  if (Status s = check_problem_selection(*spec, f.problems, "--problem"); !s) {
    fmt::print(stderr, "error: {}\n", s.error().message);
    return kExitUsage;
  }
  if (!f.selector.devices.empty() && (f.gemm.device != 0 || !f.opencl_device.empty())) {
    fmt::print(stderr, "error: --devices names the devices; it cannot be combined with {}\n",
               f.gemm.device != 0 ? "--device"
                                  : "--opencl-device (the platform is the first "
                                    "OpenCL device's: pass --devices indices on it)");
    return kExitUsage;
  }
  if (Status s = precheck_devices(
          f.selector.devices, op_spec || language == "cuda" ? DeviceKind::kCuda : DeviceKind::kCpu);
      !s && !f.gemm.compile_only) {
    fmt::print(stderr, "error: {}\n", s.error().message);
    return s.error().code == ErrorCode::kInvalidArgument ? kExitUsage : kExitError;
  }
  if (f.distributed && !f.selector.devices.empty()) {
    fmt::print(stderr,
               "error: --distributed gives each rank one device; it cannot be combined "
               "with --devices\n");
    return kExitUsage;
  }
  if (f.distributed && !kBuiltWithMpi) {
    fmt::print(stderr, "error: --distributed: no MPI support; rebuild with libopenmpi-dev\n");
    return kExitUsage;
  }
  if (f.distributed && !f.dispatch_table.empty() && spec_choices_per_problem(*spec)) {
    fmt::print(stderr,
               "error: {}: --dispatch-table needs candidates shared by every problem; "
               "a spec with size_defines builds them per problem\n",
               f.spec);
    return kExitUsage;
  }
  SelectorOptions base = op_spec || language == "cuda" ? cuda_gemm_selector_defaults()
                         : language == "opencl"        ? opencl_defaults()
                                                       : tune_defaults();
  // The spec's seed, search, tolerance and metrics; the flags override them field by field.
  const SelectorOptions sopts =
      to_selector_options(f.selector, spec_selector_options(*spec, std::move(base)));
  SelectorOptions checked = sopts;
  checked.isolate = sopts.isolate && !f.gemm.compile_only;  // compiling runs no worker
  if (int code = preflight(checked); code != 0) return code;
  if (f.distributed) return run_distributed(f, ctx, *spec, sopts);
  if (op_spec) return run_gemm_spec(f, ctx, *spec, t0);  // cuda.gemm, the one op
  if (language == "cuda") return run_cuda_spec(f, ctx, *spec, sopts, t0);
  if (language == "opencl") return run_opencl_spec(f, ctx, *spec, sopts, t0);
  const CpuCompileOptions copts = cpu_options(f);
  auto backend = CpuBackend::create(copts, ctx.cache_dir);
  if (!backend) {
    fmt::print(stderr, "error: {}\n", backend.error().message);
    return kExitError;
  }
  if (spec_choices_per_problem(*spec) && !f.dispatch_table.empty()) {
    // size_defines: candidates per problem; no dispatch table (one shared object per shape).
    fmt::print(stderr,
               "error: {}: --dispatch-table needs candidates shared by every problem; "
               "a spec with size_defines builds them per problem\n",
               f.spec);
    return kExitUsage;
  }
  return tune_problems(f, ctx, *spec, *backend, sopts, copts.flags, t0);
}

}  // namespace

void add_tune_command(CLI::App& app, CliContext& ctx) {
  auto f = std::make_shared<TuneFlags>();
  CLI::App* cmd = app.add_subcommand(
      "tune",
      "Tune every problem of a spec: compile all candidates in parallel, verify each "
      "against the reference, measure, pick the fastest and cache the result");
  cmd->add_option("spec", f->spec, "Spec file (YAML or JSON; docs/spec.md)")->required();
  cmd->add_option("--problem", f->problems,
                  "Tune only these problems (name or 0-based index; repeatable)");
  // Defaults said in words: an op spec takes `ktune gemm`'s, a kernel spec the CPU's.
  add_devices_flag(*cmd, f->selector);
  add_selector_flags(*cmd, f->selector,
                     SelectorFlagDefaults{.defaults = tune_defaults(),
                                          .op_defaults = cuda_gemm_selector_defaults(),
                                          .host_flags = true,
                                          .opencl_defaults = opencl_defaults()});
  cmd->add_option("--cxx", f->cxx, "C++ compiler (default: $CXX, else c++)");
  cmd->add_option("--cxxflags", f->cxxflags,
                  "Compiler flags added after the defaults (-O3 -march=native -shared -fPIC "
                  "-std=c++17), e.g. \"-O2 -DNDEBUG\": a later -O or -std wins");
  cmd->add_option("--cxxflags-replace", f->cxxflags_replace,
                  "Compiler flags replacing the defaults; they must still make a shared object "
                  "(-shared -fPIC)");
  cmd->add_option("--compile-timeout-s", f->compile_timeout_s,
                  "Deadline of one compile (default: 120)")
      ->check(CLI::Range(1, 86'400));
  cmd->add_option("--dispatch-table", f->dispatch_table,
                  "After tuning, write FILE: every problem's pick from the tuning cache (generated "
                  "code only; a library pick is left to its nearest tuned shape) with the shared "
                  "objects to load, for a program linking only ktune::runtime "
                  "(Dispatcher::open_table)");
  add_gemm_target_flags(*cmd, f->gemm, "op and cuda kernel specs: ");
  add_gemm_candidate_flags(*cmd, f->gemm, "op: cuda.gemm specs: ");
  cmd->add_option("--opencl-device", f->opencl_device,
                  "opencl kernel specs: [<platform>:]<device>, each an index or a name substring; "
                  "default $KTUNE_OPENCL_DEVICE, else the first device");
  cmd->add_flag(
      "--distributed", f->distributed,
      "Run as one rank of an MPI job (mpirun -n R ktune tune SPEC --distributed): problems, or "
      "with fewer problems than ranks each problem's candidates, are shared between the ranks; "
      "rank 0 decides every pick, alone writes the tuning cache and prints the tables. c++ "
      "kernels: the host's cores split between its ranks; cuda kernels: one GPU per rank (its "
      "local rank). Without MPI support in this build: an error");
  add_json_flag(*cmd, f->selector);
  cmd->callback([f, &ctx] {
    if (f->selector.json) f->json = std::make_shared<ResultDocument>("tune", f->spec);
    ctx.exit_code = run_tune(*f, ctx);
  });
}

// The helpers tune_flags.h declares and says (cmd_tune_distributed.cpp uses them too).

bool wanted(const TuneFlags& f, const ProblemDecl& p, std::size_t index,
            std::string_view problem_name) {
  return problem_selected(f.problems, p, index, problem_name);
}

CpuCompileOptions cpu_options(const TuneFlags& f) {
  CpuCompileOptions copts;
  if (!f.cxx.empty()) copts.compiler = f.cxx;
  // --cxxflags adds to the defaults, which make the shared object that ktune loads (-shared
  // -fPIC); --cxxflags-replace is for the rare toolchain that needs other ones.
  if (!f.cxxflags_replace.empty()) copts.flags = split_words(f.cxxflags_replace);
  for (std::string& w : split_words(f.cxxflags)) copts.flags.push_back(std::move(w));
  copts.timeout = std::chrono::seconds(f.compile_timeout_s.value_or(120));
  copts.on_command = verbose_compile_hook(f.selector);
  return copts;
}

Result<std::shared_ptr<const Backend>> host_backend(const TuneFlags& f, const CliContext& ctx,
                                                    const Spec& spec) {
  if (!spec_has_host_reference(spec)) return std::shared_ptr<const Backend>();
  auto backend = CpuBackend::create(cpu_options(f), ctx.cache_dir);
  if (!backend) return std::unexpected(backend.error());
  return std::shared_ptr<const Backend>(std::make_shared<CpuBackend>(std::move(*backend)));
}

bool write_table(const TuneFlags& f, const Spec& spec, SpecChoices& choices, const Backend& backend,
                 TuningCache& cache, const SelectorOptions& sopts) {
  auto built = make_dispatch_table(spec, choices, backend, cache, sopts, std::nullopt,
                                   /*generated_only=*/true);
  Status written = built ? write_dispatch_table(f.dispatch_table, built->table)
                         : Status(std::unexpected(built.error()));
  if (!written) {
    fmt::print(stderr, "error: --dispatch-table: {}\n", written.error().message);
    return false;
  }
  for (const std::string& note : built->notes) {
    fmt::print(stderr, "note: --dispatch-table: {}\n", note);
  }
  fmt::print(text_out(f.selector), "Wrote the dispatch table {} ({} tuned shape(s) of {})\n",
             f.dispatch_table, built->table.tuned.size(), spec.problems.size());
  return true;
}

}  // namespace ktune::cli
