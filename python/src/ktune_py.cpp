// ktune._ktune: the Python package's extension (nanobind). Thin: it maps Python arguments to the
// library's options, calls the same functions as `ktune tune`, `ktune gemm` and `ktune cache`
// (tune_spec, cuda_gemm_tuning, the SQLite cache, open_dispatcher) and returns plain dicts and
// lists, which python/ktune turns into dataclasses. Errors cross as ktune.Error subclasses
// (python/ktune/errors.py) carrying the library's message unchanged.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/build_support.h"
#include "core/file_util.h"
#include "ktune/backend/cpu_backend.h"
#include "ktune/cache/tuning_cache.h"
#include "ktune/cache_sqlite/sqlite_cache.h"
#include "ktune/core/epilogue.h"
#include "ktune/search/strategy.h"
#include "ktune/select/selector.h"
#include "ktune/spec/spec.h"
#include "ktune/tuning/cuda_gemm_tuning.h"
#include "ktune/tuning/devices.h"
#include "ktune/tuning/open_cache.h"
#include "ktune/tuning/spec_dispatcher.h"
#include "ktune/tuning/tune_spec.h"
#if KTUNE_HAVE_CUDA
#include "ktune/backend/cuda_backend.h"
#endif
#if KTUNE_HAVE_OPENCL
#include "ktune/backend/opencl_backend.h"
#endif

namespace nb = nanobind;
using namespace nb::literals;

namespace ktune::python {
namespace {

// A library Error on its way to Python: the translator below raises it as the ktune.Error
// subclass that errors._make picks (SpecError when it came from reading a spec).
struct PyError {
  Error error;
  bool spec = false;
};

[[noreturn]] void raise(Error e, bool spec = false) { throw PyError{std::move(e), spec}; }
[[noreturn]] void raise(ErrorCode code, std::string message) {
  raise(Error{code, std::move(message)});
}

template <class T>
T take(Result<T> r, bool spec = false) {
  if (!r) raise(std::move(r.error()), spec);
  return std::move(*r);
}
void check(Status s, bool spec = false) {
  if (!s) raise(std::move(s.error()), spec);
}

// The ktune-worker shipped in the package (set by python/ktune/__init__.py); $KTUNE_WORKER wins.
std::string g_worker;  // NOLINT: set once at import

void set_worker(SelectorOptions& o) {
  if (o.worker.executable.empty() && std::getenv("KTUNE_WORKER") == nullptr && !g_worker.empty()) {
    o.worker.executable = g_worker;
  }
}

// A spec from a file, or from text (a dict serialised to JSON by the package) named `file`.
Spec read_spec(const std::string& file, const std::optional<std::string>& text) {
  if (text) return take(parse_spec(*text, file), /*spec=*/true);
  return take(load_spec(file), /*spec=*/true);
}

std::filesystem::path cache_dir_of(const std::optional<std::string>& dir) {
  return dir && !dir->empty() ? std::filesystem::path(*dir) : default_cache_dir();
}

// --- results as Python objects --------------------------------------------------------------

nb::object stats_s(const std::optional<BenchStats>& s, double BenchStats::*field) {
  if (!s) return nb::none();
  return nb::float_((*s).*field / 1e9);
}

nb::dict candidate_dict(const CandidateRecord& c) {
  nb::dict d;
  d["name"] = c.name;
  d["info"] = c.info;
  d["outcome"] = std::string(outcome_name(c.outcome));
  d["message"] = c.message;
  d["median_s"] = stats_s(c.stats, &BenchStats::median_ns);
  d["min_s"] = stats_s(c.stats, &BenchStats::min_ns);
  d["max_s"] = stats_s(c.stats, &BenchStats::max_ns);
  d["mad_s"] = stats_s(c.stats, &BenchStats::mad_ns);
  d["runs"] = c.stats ? c.stats->runs : 0;
  d["compile_s"] = c.compile_s;
  nb::dict params;
  for (const auto& [name, value] : c.params) params[nb::str(name.c_str())] = value;
  d["params"] = params;
  nb::dict metrics;
  for (const MetricValue& m : c.metrics) metrics[nb::str(m.name.c_str())] = m.value;
  d["metrics"] = metrics;
  return d;
}

nb::object confidence_dict(const std::optional<PickConfidence>& c) {
  if (!c) return nb::none();
  nb::dict d;
  d["runner_up"] = c->runner_up;
  d["runner_up_ratio"] = c->runner_up_ratio;
  d["ratio_low"] = c->ratio_low;
  d["ratio_high"] = c->ratio_high;
  d["ratio_rounds"] = c->ratio_rounds;
  d["spread"] = c->spread;
  d["others_load"] = c->others_load;
  d["cores"] = c->cores;
  d["reverified"] = c->reverified;
  d["trusted"] = c->trusted;
  return d;
}

nb::dict record_dict(const TuningRecord& r) {
  nb::dict d;
  d["digest"] = r.key.digest();
  d["op"] = r.key.op;
  d["problem_key"] = r.key.problem;
  d["device"] = r.key.device;
  d["toolchain"] = r.key.toolchain;
  d["version"] = r.key.version;
  d["pick"] = r.winner;
  d["created_unix"] = r.created_unix;
  d["compile_s"] = r.compile_s;
  d["bench_s"] = r.bench_s;
  d["confidence"] = confidence_dict(r.confidence);
  d["stand_in"] = r.stand_in ? nb::object(nb::str(r.stand_in->c_str())) : nb::none();
  nb::list candidates;
  for (const CandidateRecord& c : r.candidates) candidates.append(candidate_dict(c));
  d["candidates"] = candidates;
  return d;
}

nb::dict selection_dict(const Selection& s, const std::string& problem,
                        const std::string& problem_name) {
  nb::dict d = record_dict(s.record);
  d["problem"] = problem;
  d["problem_name"] = problem_name;
  d["from_cache"] = s.from_cache;
  d["select_s"] = s.select_s;
  return d;
}

nb::tuple error_tuple(const std::string& problem, const Error& e) {
  return nb::make_tuple(problem, std::string(error_code_name(e.code)), e.message);
}

// --- options ---------------------------------------------------------------------------------

// ktune.tune()'s and ktune.gemm()'s keyword options: the CLI's tuning flags (options.h) by their
// names without the dashes, checked against the same ranges.
struct TuneArgs {
  std::optional<std::string> cache_dir;
  bool allow_shared_cache_dir = false;
  bool no_cache = false;
  bool retune = false;
  unsigned jobs = 0;
  std::optional<double> budget_ms;
  std::optional<int> min_runs, max_runs, warmup_runs;
  std::optional<double> close_call_band;
  std::optional<int> decide_rounds;
  bool no_decide_ahead = false;
  std::optional<std::string> strategy;
  std::optional<std::uint64_t> max_evals;
  std::optional<double> time_limit_s;
  std::optional<std::uint64_t> seed, search_seed;
  bool in_process = false;
  bool no_flush = false;
  bool no_abandon = false;
  std::optional<long> run_timeout_ms;
  std::optional<std::size_t> memory_limit_mb;
  std::optional<std::string> json_log;
  bool table = false;
  bool progress = false;
  // A shared tuning cache (redis://HOST:PORT/DB), else $KTUNE_CACHE_URL, else the SQLite file in
  // cache_dir (open_cache_at, as the CLI's --cache).
  std::optional<std::string> cache;
  // Several devices at once (--devices; ktune/tuning/devices.h): "all", "0,1", "0-3,4-7".
  std::optional<std::string> devices;
};

std::string cache_url_of(const std::optional<std::string>& cache) {
  return cache ? *cache : cache_url_from_env();
}

void check_range(bool ok, const char* name, const std::string& expected) {
  if (!ok) raise(ErrorCode::kInvalidArgument, fmt::format("{}: expected {}", name, expected));
}

void check_args(const TuneArgs& a) {
  check_range(a.jobs <= 4096, "jobs", "0 (all cores) to 4096");
  check_range(!a.budget_ms || (*a.budget_ms >= 0.001 && *a.budget_ms <= 3'600'000), "budget_ms",
              "0.001 to 3600000");
  for (auto [v, name] : {std::pair{a.min_runs, "min_runs"}, std::pair{a.max_runs, "max_runs"}}) {
    check_range(!v || (*v >= 1 && *v <= 1'000'000), name, "1 to 1000000");
  }
  check_range(!a.warmup_runs || (*a.warmup_runs >= 0 && *a.warmup_runs <= 1'000'000), "warmup_runs",
              "0 to 1000000");
  check_range(!a.close_call_band || (*a.close_call_band >= 0 && *a.close_call_band <= 10),
              "close_call_band", "0 to 10");
  check_range(!a.decide_rounds || (*a.decide_rounds >= 0 && *a.decide_rounds <= 1000),
              "decide_rounds", "0 to 1000");
  check_range(!a.max_evals || *a.max_evals >= 1, "max_evals", "1 or more");
  check_range(!a.time_limit_s || (*a.time_limit_s >= 0.001 && *a.time_limit_s <= 31'536'000),
              "time_limit_s", "0.001 to 31536000");
  check_range(!a.run_timeout_ms || (*a.run_timeout_ms >= 1 && *a.run_timeout_ms <= 86'400'000),
              "run_timeout_ms", "1 to 86400000");
  if (a.strategy) {
    const std::vector<std::string_view> names = strategy_names();
    bool known = false;
    for (std::string_view n : names) known = known || n == *a.strategy;
    check_range(known, "strategy",
                fmt::format("one of {} (got '{}')", fmt::join(names, ", "), *a.strategy));
  }
}

// `base` (the spec's kind's defaults and the spec's own settings) with the options given.
SelectorOptions selector_options(const TuneArgs& a, SelectorOptions o,
                                 const std::filesystem::path& cache_dir) {
  if (a.jobs != 0) o.jobs = a.jobs;
  o.bench.budget_ms = a.budget_ms.value_or(o.bench.budget_ms);
  o.bench.min_runs = a.min_runs.value_or(o.bench.min_runs);
  o.bench.max_runs = a.max_runs.value_or(o.bench.max_runs);
  o.bench.warmup_runs = a.warmup_runs.value_or(o.bench.warmup_runs);
  if (o.bench.min_runs > o.bench.max_runs) {
    raise(ErrorCode::kInvalidArgument,
          fmt::format("min_runs {} is above max_runs {}: expected min_runs <= max_runs",
                      o.bench.min_runs, o.bench.max_runs));
  }
  o.close_call_band = a.close_call_band.value_or(o.close_call_band);
  if (a.decide_rounds) {  // as --decide-rounds: twice as many while the machine is noisy
    o.close_call_rounds = *a.decide_rounds;
    o.noisy_rounds = 2 * *a.decide_rounds;
  }
  if (a.no_decide_ahead) o.decide_ahead = false;
  if (a.no_flush) o.bench.flush_cache = false;
  o.read_cache = !a.no_cache && !a.retune;
  o.write_cache = !a.no_cache;
  o.seed = a.seed.value_or(o.seed);
  o.out = a.table ? stdout : nullptr;
  o.progress = a.progress ? stderr : nullptr;
  if (a.in_process) o.isolate = false;
  if (a.run_timeout_ms) o.run_timeout = std::chrono::milliseconds(*a.run_timeout_ms);
  if (a.no_abandon) o.abandon = false;
  if (a.memory_limit_mb) o.worker.memory_limit_bytes = *a.memory_limit_mb << 20;
  if (a.json_log) o.json_log = *a.json_log;
  if (a.strategy) o.search.strategy = *a.strategy;
  if (a.max_evals) o.search.max_evals = *a.max_evals;
  if (a.time_limit_s) o.search.time_limit_s = *a.time_limit_s;
  if (a.search_seed) o.search.seed = *a.search_seed;
  o.lock_dir = cache_dir / "locks";  // one tuner per device, as the CLI
  set_worker(o);
  if (o.isolate && o.worker.executable.empty()) {
    // Found now, not by the first worker start after every candidate has compiled.
    (void)take(find_worker_executable());
  }
  return o;
}

// devices= (as --devices) into o.devices for `backend`.
void set_devices(const TuneArgs& a, const Backend& backend, SelectorOptions& o) {
  if (!a.devices) return;
  if (a.in_process) {
    raise(ErrorCode::kInvalidArgument,
          "devices: runs a worker per device; it cannot be combined with in_process");
  }
  o.devices = take(device_slots(*a.devices, backend));
}

// The tuning cache of a tuning (in memory with no_cache), after the cache folder's checks.
std::unique_ptr<TuningCache> open_cache(const TuneArgs& a, const std::filesystem::path& dir) {
  check(prepare_cache_dir(dir, a.allow_shared_cache_dir, [](const std::string& why) {
    fmt::print(stderr, "ktune: warning: code cache: {} (allowed by allow_shared_cache_dir)\n", why);
  }));
  if (a.no_cache) return make_memory_cache();
  return std::move(
      take(open_cache_at({dir, cache_url_of(a.cache), a.allow_shared_cache_dir})).cache);
}

// --- gemm ------------------------------------------------------------------------------------

struct GemmArgs {
  std::int64_t m = 0, n = 0, k = 0;
  std::string dtype = "bf16";
  std::string epilogue = "none";
  int device = 0;
  int cublaslt_algos = 8;
  bool simt = false;
  int graph_calls = -1;
};

// One CUDA GEMM shape, tuned as `ktune gemm` tunes it (cuda_gemm_tuning: the same candidates,
// options and key). kUnavailable without CUDA support or without a GPU.
nb::dict gemm_one(const GemmArgs& g, const TuneArgs& a, const std::string& problem) {
  for (auto [v, name] : {std::pair{g.m, "m"}, std::pair{g.n, "n"}, std::pair{g.k, "k"}}) {
    check_range(v >= 1 && v <= (std::int64_t{1} << 31), name, "1 to 2147483648");
  }
  const DType dtype = take(parse_dtype(g.dtype));
  if (dtype != DType::kBF16 && dtype != DType::kF16 && dtype != DType::kF32) {
    raise(ErrorCode::kInvalidArgument,
          fmt::format("dtype: '{}': expected bf16, f16 or f32", g.dtype));
  }
  Epilogue epilogue = take(with_context(Epilogue::parse(g.epilogue), "epilogue"));
  check_args(a);
  if (a.devices && g.device != 0) {
    raise(ErrorCode::kInvalidArgument,
          "devices= names the GPUs; it cannot be combined with device=");
  }
#if !KTUNE_HAVE_CUDA
  (void)problem;
  raise(not_built(BuildFeature::kCuda));
#else
  const std::filesystem::path dir = cache_dir_of(a.cache_dir);
  if (a.devices) check(precheck_devices(*a.devices, DeviceKind::kCuda));
  CudaCompileOptions copts;
  // With devices=, the first device listed is the one compiled for and deciding.
  copts.device = first_listed_device(a.devices.value_or(""), g.device);
  CudaBackend backend = take(CudaBackend::create(copts, dir));
  SelectorOptions base = selector_options(a, cuda_gemm_selector_defaults(), dir);
  CudaGemmRequest request{
      g.m,    g.n,          g.k, dtype, std::move(epilogue), copts.device, g.cublaslt_algos,
      g.simt, g.graph_calls};
  std::unique_ptr<TuningCache> cache = open_cache(a, dir);
  CudaGemmTuning tuning = cuda_gemm_tuning(backend, request, std::move(base));
  tuning.options.lock_dir = dir / "locks";
  set_devices(a, backend, tuning.options);
  Result<Selection> sel;
  {
    nb::gil_scoped_release release;
    Selector selector(backend, *cache, tuning.options);
    sel = selector.select(tuning.problem, tuning.candidates, tuning.reference.get());
  }
  if (!sel) raise(std::move(sel.error()));
  return selection_dict(*sel, problem, tuning.problem.name);
#endif
}

// --- tune ------------------------------------------------------------------------------------

// ktune.tune(): {"results": [per problem], "errors": [(problem, code, message)], "interrupted"}.
nb::dict tune(const std::string& spec_file, const std::optional<std::string>& spec_text,
              const std::vector<std::string>& problems, const TuneArgs& a,
              const std::optional<std::string>& cxx, const std::vector<std::string>& cxxflags,
              int device, const std::optional<std::string>& opencl_device) {
  check_args(a);
  if (a.devices && (device != 0 || opencl_device)) {
    raise(ErrorCode::kInvalidArgument,
          fmt::format("devices= names the devices; it cannot be combined with {}",
                      device != 0 ? "device=" : "opencl_device="));
  }
  const Spec spec = read_spec(spec_file, spec_text);
  check(check_problem_selection(spec, problems, "problem="));
  nb::dict out;
  nb::list results, errors;
  out["results"] = results;
  out["errors"] = errors;
  out["interrupted"] = false;
  if (!spec.op.name.empty()) {
    // op: cuda.gemm: each problem as ktune.gemm (and `ktune tune`) tunes it.
    if (cxx || !cxxflags.empty()) {
      raise(ErrorCode::kInvalidArgument,
            fmt::format("{}: cxx and cxxflags do not apply to op: {} specs", spec.file.string(),
                        spec.op.name));
    }
    TuneArgs with_seed = a;
    with_seed.seed = a.seed.value_or(spec.seed);
    for (std::size_t i = 0; i < spec.problems.size(); ++i) {
      const ProblemDecl& decl = spec.problems[i];
      if (!problem_selected(problems, decl, i, decl.name)) continue;
      GemmArgs g{*problem_size(decl, "M"), *problem_size(decl, "N"), *problem_size(decl, "K"),
                 std::string(dtype_name(spec.op.dtype)), spec.epilogue.name()};
      if (spec.epilogue.empty()) g.epilogue = "none";
      try {
        results.append(gemm_one(g, with_seed, decl.name));
      } catch (const PyError& e) {
        // No GPU or no CUDA support: the same for every problem, raised once.
        if (e.error.code == ErrorCode::kUnavailable) throw;
        errors.append(error_tuple(decl.name, e.error));
      }
    }
    return out;
  }
  // A kernel spec as `ktune tune` tunes it: c++ on this CPU, cuda on GPU `device`, opencl on
  // `opencl_device`; a device kernel's c++ reference (if any) on this CPU, with cxx and cxxflags.
  const std::string& language = spec.kernel.language;
  const std::filesystem::path dir = cache_dir_of(a.cache_dir);
  SelectorOptions base = language == "cuda"     ? cuda_gemm_selector_defaults()
                         : language == "opencl" ? opencl_tune_defaults()
                                                : cpu_tune_defaults();
  SelectorOptions sopts = selector_options(a, spec_selector_options(spec, std::move(base)), dir);
  CpuCompileOptions copts;
  if (cxx) copts.compiler = *cxx;
  for (const std::string& f : cxxflags) copts.flags.push_back(f);
  std::shared_ptr<const Backend> backend, host;
  if (language == "c++") {
    backend = std::make_shared<CpuBackend>(take(CpuBackend::create(copts, dir)));
  } else {
    if (spec_has_host_reference(spec)) {
      host = std::make_shared<CpuBackend>(take(CpuBackend::create(copts, dir)));
    }
    if (language == "cuda") {
#if KTUNE_HAVE_CUDA
      check_range(device >= 0, "device", "a CUDA device index (0 or more)");
      if (a.devices) check(precheck_devices(*a.devices, DeviceKind::kCuda));
      CudaCompileOptions c;
      // With devices=, the first device listed is the one compiled for and deciding.
      c.device = first_listed_device(a.devices.value_or(""), device);
      backend = std::make_shared<CudaBackend>(take(CudaBackend::create(c, dir)));
      // One worker per GPU: it sees only this one, as its device 0.
      sopts.worker.env.emplace_back("CUDA_VISIBLE_DEVICES", cuda_visible_device(c.device));
#else
      raise(not_built(BuildFeature::kCuda));
#endif
    } else if (language == "opencl") {
#if KTUNE_HAVE_OPENCL
      OpenCLOptions o;
      o.device = opencl_device.value_or("");
      auto cl = std::make_shared<OpenCLBackend>(take(OpenCLBackend::create(o, dir)));
      // One worker per device: it opens exactly the device the backend compiled for.
      sopts.worker.env.emplace_back("KTUNE_OPENCL_DEVICE", cl->device_selector());
      backend = std::move(cl);
#else
      raise(not_built(BuildFeature::kOpenCL));
#endif
    } else {
      raise(ErrorCode::kInvalidArgument,
            fmt::format("{}: kernel.language {}: expected c++, cuda or opencl", spec.file.string(),
                        language));
    }
  }
  set_devices(a, *backend, sopts);
  std::unique_ptr<TuningCache> cache = open_cache(a, dir);
  SpecTuneRequest request;
  request.problems = problems;
  if (language == "c++") request.backend_flags = copts.flags;
  request.host_backend = host;
  Result<SpecTuning> tuned;
  {
    nb::gil_scoped_release release;
    tuned = tune_spec(spec, *backend, *cache, sopts, request);
  }
  if (!tuned) raise(std::move(tuned.error()), /*spec=*/true);
  for (const SpecProblemTuning& one : tuned->problems) {
    if (one.selection) {
      results.append(selection_dict(*one.selection, one.name, one.problem_name));
    } else {
      errors.append(error_tuple(one.name, one.selection.error()));
    }
  }
  out["interrupted"] = tuned->interrupted;
  return out;
}

// ktune.cache.records(): every record of the SQLite tuning cache, newest first.
nb::list records(const std::optional<std::string>& cache_dir, bool allow_shared_cache_dir,
                 const std::optional<std::string>& url) {
  const std::filesystem::path dir = cache_dir_of(cache_dir);
  std::unique_ptr<TuningCache> cache =
      std::move(take(open_cache_at({dir, cache_url_of(url), allow_shared_cache_dir})).cache);
  nb::list out;
  for (const TuningRecord& r : take(cache->list())) out.append(record_dict(r));
  return out;
}

// --- Dispatcher ------------------------------------------------------------------------------

// Which numpy dtypes a spec dtype takes (code, bits).
bool dtype_matches(const nb::dlpack::dtype& t, DType d) {
  using nb::dlpack::dtype_code;
  const auto code = static_cast<dtype_code>(t.code);
  const std::size_t bits = dtype_size(d) * 8;
  if (t.bits != bits || t.lanes != 1) return false;
  switch (d) {
    case DType::kF32:
    case DType::kF64:
    case DType::kF16:
      return code == dtype_code::Float;
    case DType::kBF16:
      return code == dtype_code::Bfloat || code == dtype_code::UInt;
    default:
      return code == dtype_code::Int;
  }
}

// A Dispatcher over a c++ kernel spec's picks (open_dispatcher), called on numpy arrays: the
// buffers in the spec's argument order, each checked against the problem of the sizes called
// with (dtype, C-contiguous, at least the storage the kernel addresses); scalars computed from
// the sizes, as the spec's `value:` expressions say.
class PyDispatcher {
 public:
  PyDispatcher(const std::string& spec_file, const std::optional<std::string>& spec_text,
               const std::optional<std::string>& cache_dir,
               const std::optional<std::string>& default_choice, bool tune_unseen,
               bool allow_shared_cache_dir, const std::optional<std::string>& cache)
      : spec_(read_spec(spec_file, spec_text)) {
    if (!spec_.op.name.empty() || spec_.kernel.language != "c++") {
      raise(ErrorCode::kUnavailable,
            fmt::format("{}: ktune.Dispatcher serves c++ kernel specs from Python (host "
                        "buffers); this is {}",
                        spec_.file.string(),
                        spec_.op.name.empty() ? "a " + spec_.kernel.language + " kernel spec"
                                              : "an op: " + spec_.op.name + " spec"));
    }
    DispatcherOptions o;
    o.cache_dir = cache_dir_of(cache_dir);
    check(prepare_cache_dir(o.cache_dir, allow_shared_cache_dir));
    o.cache_url = cache_url_of(cache);
    o.default_choice = default_choice;
    o.tune_unseen = tune_unseen;
    o.selector.lock_dir = o.cache_dir / "locks";
    set_worker(o.selector);
    nb::gil_scoped_release release;
    d_ = take(open_dispatcher(spec_, std::move(o)));
  }

  [[nodiscard]] const std::vector<std::string>& size_names() const { return d_->size_names(); }

  nb::tuple pick(const Sizes& sizes) {
    Dispatcher::Served s = take(d_->lookup(sizes));
    return nb::make_tuple(*s.name, std::string(dispatch_source_name(s.source)),
                          std::vector<std::int64_t>(s.tuned.begin(), s.tuned.end()));
  }

  std::string call(const Sizes& sizes, const std::vector<nb::ndarray<nb::c_contig>>& buffers) {
    const Problem& problem = problem_of(sizes);
    std::vector<void*> args;
    std::vector<ScalarValue> scalars;  // the scalar values live here during the call
    std::vector<std::int64_t> ints;
    std::vector<double> floats;
    std::vector<float> floats32;
    std::vector<std::int32_t> ints32;
    ints.reserve(problem.args.size());
    floats.reserve(problem.args.size());
    floats32.reserve(problem.args.size());
    ints32.reserve(problem.args.size());
    std::size_t b = 0;
    for (const ProblemArg& arg : problem.args) {
      if (arg.param.role == ArgRole::kScalar) {
        args.push_back(scalar_pointer(arg, ints, ints32, floats, floats32));
        continue;
      }
      if (b == buffers.size()) {
        raise(ErrorCode::kInvalidArgument,
              fmt::format("call: {} buffer(s) given; the spec's buffers are {}", buffers.size(),
                          buffer_names(problem)));
      }
      const nb::ndarray<nb::c_contig>& a = buffers[b++];
      if (!dtype_matches(a.dtype(), arg.param.dtype)) {
        raise(ErrorCode::kInvalidArgument,
              fmt::format("call: {}: expected an array of {} elements", arg.param.name,
                          dtype_name(arg.param.dtype)));
      }
      const std::int64_t needed = arg.tensor.storage_elements();
      if (static_cast<std::int64_t>(a.size()) < needed) {
        raise(ErrorCode::kInvalidArgument,
              fmt::format("call: {}: {} elements given; the kernel addresses {} at {}",
                          arg.param.name, a.size(), needed, problem.name));
      }
      args.push_back(a.data());
    }
    if (b != buffers.size()) {
      raise(ErrorCode::kInvalidArgument,
            fmt::format("call: {} buffer(s) given; the spec's buffers are {}", buffers.size(),
                        buffer_names(problem)));
    }
    std::string served;
    {
      nb::gil_scoped_release release;
      Result<Dispatcher::Served> s = d_->lookup(sizes);
      if (s) {
        served = *s->name;
        Status called = d_->call(sizes, args.data());
        if (!called) s = std::unexpected(called.error());
      }
      // Thrown without the GIL: PyError holds no Python object; it is translated once the
      // GIL is back.
      if (!s) raise(std::move(s.error()));
    }
    return served;
  }

  void wait() {
    Status s;
    {
      nb::gil_scoped_release release;
      s = d_->wait_for_background();
    }
    check(s);
  }

  [[nodiscard]] int background_tunings() const { return d_->background_tunings(); }

 private:
  static std::string buffer_names(const Problem& p) {
    std::vector<std::string> names;
    for (const ProblemArg& a : p.args) {
      if (a.param.role != ArgRole::kScalar) names.push_back(a.param.name);
    }
    return fmt::format("{} ({})", names.size(), fmt::join(names, ", "));
  }

  static void* scalar_pointer(const ProblemArg& arg, std::vector<std::int64_t>& ints,
                              std::vector<std::int32_t>& ints32, std::vector<double>& floats,
                              std::vector<float>& floats32) {
    const bool is_int = std::holds_alternative<std::int64_t>(arg.scalar);
    const double fv =
        is_int ? double(std::get<std::int64_t>(arg.scalar)) : std::get<double>(arg.scalar);
    const std::int64_t iv =
        is_int ? std::get<std::int64_t>(arg.scalar) : static_cast<std::int64_t>(fv);
    switch (arg.param.dtype) {
      case DType::kF32:
        return &floats32.emplace_back(static_cast<float>(fv));
      case DType::kF64:
        return &floats.emplace_back(fv);
      case DType::kI32:
        return &ints32.emplace_back(static_cast<std::int32_t>(iv));
      case DType::kI64:
        return &ints.emplace_back(iv);
      default:
        raise(ErrorCode::kInvalidArgument,
              fmt::format("call: scalar {} of dtype {}: ktune.Dispatcher passes f32, f64, i32 "
                          "and i64 scalars",
                          arg.param.name, dtype_name(arg.param.dtype)));
    }
  }

  // The problem of these sizes (its buffers' specs and scalar values), made once per shape.
  const Problem& problem_of(const Sizes& sizes) {
    std::vector<std::int64_t> values;
    for (const auto& [name, v] : sizes) values.push_back(v);
    std::lock_guard lock(mu_);
    auto it = problems_.find(values);
    if (it != problems_.end()) return it->second;
    // The names and the count of the sizes are checked there.
    if (Result<Dispatcher::Served> s = d_->lookup(sizes); !s) raise(std::move(s.error()));
    ProblemDecl decl;
    decl.sizes = sizes;
    Problem p = take(make_problem(spec_, decl));
    return problems_.emplace(std::move(values), std::move(p)).first->second;
  }

  Spec spec_;
  std::unique_ptr<Dispatcher> d_;
  std::mutex mu_;
  std::map<std::vector<std::int64_t>, Problem> problems_;
};

}  // namespace
}  // namespace ktune::python

NB_MODULE(_ktune, m) {
  using namespace ktune;
  using namespace ktune::python;
  m.doc() = "ktune's extension; use the ktune package (python/ktune) rather than this module";

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const PyError& e) {
      nb::object make = nb::module_::import_("ktune.errors").attr("_make");
      nb::object exc = make(std::string(error_code_name(e.error.code)), e.error.message, e.spec);
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
    }
  });

  m.def(
      "set_worker", [](std::string path) { g_worker = std::move(path); }, "path"_a);
  m.def("has_cuda", []() -> bool { return KTUNE_HAVE_CUDA != 0; });
  m.def("has_opencl", []() -> bool { return KTUNE_HAVE_OPENCL != 0; });
  m.def("version", []() -> std::string { return KTUNE_VERSION; });
  m.def("default_cache_dir", []() -> std::string { return default_cache_dir().string(); });

  // Every option by keyword, typed: a wrong type or an unknown name is nanobind's TypeError.
  nb::class_<TuneArgs>(m, "TuneArgs")
      .def(
          "__init__",
          [](TuneArgs* t, std::optional<std::string> cache_dir, bool allow_shared_cache_dir,
             bool no_cache, bool retune, unsigned jobs, std::optional<double> budget_ms,
             std::optional<int> min_runs, std::optional<int> max_runs,
             std::optional<int> warmup_runs, std::optional<double> close_call_band,
             std::optional<int> decide_rounds, bool no_decide_ahead,
             std::optional<std::string> strategy, std::optional<std::uint64_t> max_evals,
             std::optional<double> time_limit_s, std::optional<std::uint64_t> seed,
             std::optional<std::uint64_t> search_seed, bool in_process, bool no_flush,
             bool no_abandon, std::optional<long> run_timeout_ms,
             std::optional<std::size_t> memory_limit_mb, std::optional<std::string> json_log,
             bool table, bool progress, std::optional<std::string> cache,
             std::optional<std::string> devices) {
            new (t) TuneArgs{std::move(cache_dir),
                             allow_shared_cache_dir,
                             no_cache,
                             retune,
                             jobs,
                             budget_ms,
                             min_runs,
                             max_runs,
                             warmup_runs,
                             close_call_band,
                             decide_rounds,
                             no_decide_ahead,
                             std::move(strategy),
                             max_evals,
                             time_limit_s,
                             seed,
                             search_seed,
                             in_process,
                             no_flush,
                             no_abandon,
                             run_timeout_ms,
                             memory_limit_mb,
                             std::move(json_log),
                             table,
                             progress,
                             std::move(cache),
                             std::move(devices)};
          },
          nb::kw_only(), "cache_dir"_a.none() = nb::none(), "allow_shared_cache_dir"_a = false,
          "no_cache"_a = false, "retune"_a = false, "jobs"_a = 0u,
          "budget_ms"_a.none() = nb::none(), "min_runs"_a.none() = nb::none(),
          "max_runs"_a.none() = nb::none(), "warmup_runs"_a.none() = nb::none(),
          "close_call_band"_a.none() = nb::none(), "decide_rounds"_a.none() = nb::none(),
          "no_decide_ahead"_a = false, "strategy"_a.none() = nb::none(),
          "max_evals"_a.none() = nb::none(), "time_limit_s"_a.none() = nb::none(),
          "seed"_a.none() = nb::none(), "search_seed"_a.none() = nb::none(), "in_process"_a = false,
          "no_flush"_a = false, "no_abandon"_a = false, "run_timeout_ms"_a.none() = nb::none(),
          "memory_limit_mb"_a.none() = nb::none(), "json_log"_a.none() = nb::none(),
          "table"_a = false, "progress"_a = false, "cache"_a.none() = nb::none(),
          "devices"_a.none() = nb::none());

  m.def("tune", &tune, "spec_file"_a, "spec_text"_a.none(), "problems"_a, "args"_a, "cxx"_a.none(),
        "cxxflags"_a, "device"_a, "opencl_device"_a.none());
  m.def(
      "gemm",
      [](std::int64_t m_, std::int64_t n, std::int64_t k, const std::string& dtype,
         const std::string& epilogue, int device, int cublaslt_algos, bool simt, int graph_calls,
         const TuneArgs& args) {
        GemmArgs g{m_, n, k, dtype, epilogue, device, cublaslt_algos, simt, graph_calls};
        return gemm_one(g, args, fmt::format("{}x{}x{}", m_, n, k));
      },
      "m"_a, "n"_a, "k"_a, "dtype"_a, "epilogue"_a, "device"_a, "cublaslt_algos"_a, "simt"_a,
      "graph_calls"_a, "args"_a);
  m.def("records", &records, "cache_dir"_a.none(), "allow_shared_cache_dir"_a, "cache"_a.none());

  nb::class_<PyDispatcher>(m, "Dispatcher")
      .def(nb::init<const std::string&, const std::optional<std::string>&,
                    const std::optional<std::string>&, const std::optional<std::string>&, bool,
                    bool, const std::optional<std::string>&>(),
           "spec_file"_a, "spec_text"_a.none(), "cache_dir"_a.none(), "default_choice"_a.none(),
           "tune_unseen"_a, "allow_shared_cache_dir"_a, "cache"_a.none())
      .def_prop_ro("size_names", &PyDispatcher::size_names)
      .def("pick", &PyDispatcher::pick, "sizes"_a)
      // noconvert: an array that is not C-contiguous, or of another type, is refused rather than
      // copied (an output written into a copy would be lost).
      .def("call", &PyDispatcher::call, "sizes"_a, "buffers"_a.noconvert())
      .def("wait", &PyDispatcher::wait)
      .def_prop_ro("background_tunings", &PyDispatcher::background_tunings);
}
