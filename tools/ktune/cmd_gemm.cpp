// `ktune gemm --m M --n N --k K --dtype bf16`: tune a row-major GEMM on a CUDA GPU over the full
// candidate set (the tensor-core and SIMT templates, cuBLAS, the cuBLASLt heuristic's top
// algorithms), verified against cuBLAS, and print the AUTOTUNE table and the pick's TFLOP/s.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <optional>

#include "cli.h"
#include "ktune/cuda_backend.h"
#include "ktune/cuda_gemm.h"
#include "ktune/selector.h"
#include "ktune/tuning_cache.h"

namespace ktune::cli {
namespace {

struct GemmFlags {
  std::int64_t m = 0, n = 0, k = 0;
  std::string dtype = "bf16";
  std::string epilogue = "none";
  int device = 0;
  std::string arch;
  bool compile_only = false;
  int cublaslt_algos = 8;
  unsigned jobs = 0;
  // GPU kernels take micro- to milliseconds: a smaller budget than the CPU's still gives
  // dozens of samples, and the close calls are measured again anyway.
  double budget_ms = 20;
  // Wider than the Selector's 5%: a GPU's clocks under its power cap move more than a CPU's.
  double close_call_band = 0.10;
  int min_runs = 5;
  int max_runs = 100;
  int warmup_runs = 2;
  int graph_calls = 0;
  bool no_cache = false;
  bool retune = false;
  bool in_process = false;
  bool quiet = false;
  int top = 10;
  std::string json_log;
  long run_timeout_ms = 0;
  std::uint64_t seed = 0;
  int regret_rounds = 0;
  bool simt = false;
};

double tflops(const GemmFlags& f, double ns) {
  return ns > 0 ? 2.0 * double(f.m) * double(f.n) * double(f.k) / ns / 1e3 : 0;
}

// Every candidate compiled for an architecture, without a GPU: what CI can check.
int compile_only(const GemmFlags& f, const CudaBackend& backend, std::vector<ChoicePtr>& choices) {
  int failed = 0, compiled = 0;
  for (ChoicePtr& c : choices) {
    // Templates, and library GEMMs paired with the separate epilogue kernel (its compile).
    if (c->kind() != Choice::Kind::kTemplate && !c->name().ends_with("+epilogue")) continue;
    if (Status s = c->compile(backend); !s) {
      fmt::print(stderr, "error: {}: {}\n", c->name(), s.error().message);
      ++failed;
    } else {
      ++compiled;
    }
  }
  fmt::print("Compiled {} candidates for {} ({} failed)\n", compiled, backend.arch(), failed);
  (void)f;
  return failed ? kExitError : 0;
}

// The fastest valid candidate of each kind against the pick: our templates, the library GEMMs
// (with the separate epilogue kernel when there is an epilogue) and cuBLASLt's fused epilogues.
void print_groups(const TuningRecord& record, double pick_ns) {
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
    fmt::print("  {}: {} ({:.4f} ms); pick / it: {:.3f}\n", g.title, g.best->name,
               g.best->stats->median_ns / 1e6, pick_ns / g.best->stats->median_ns);
  }
}

int run_gemm(const GemmFlags& f, const CliContext& ctx) {
  const auto t0 = std::chrono::steady_clock::now();
  auto dtype = parse_dtype(f.dtype);
  if (!dtype || (*dtype != DType::kBF16 && *dtype != DType::kF16 && *dtype != DType::kF32)) {
    fmt::print(stderr, "error: --dtype: expected bf16, f16 or f32, got '{}'\n", f.dtype);
    return kExitUsage;
  }
  if (f.m <= 0 || f.n <= 0 || f.k <= 0) {
    fmt::print(stderr, "error: --m, --n, --k: expected sizes >= 1, got {}x{}x{}\n", f.m, f.n, f.k);
    return kExitUsage;
  }
  auto epilogue = Epilogue::parse(f.epilogue);
  if (!epilogue) {
    fmt::print(stderr, "error: --epilogue: {}\n", epilogue.error().message);
    return kExitUsage;
  }
  CudaCompileOptions copts;
  copts.arch = f.arch;
  copts.device = f.device;
  auto backend = CudaBackend::create(copts, ctx.cache_dir);
  if (!backend) {
    fmt::print(stderr, "error: {}\n", backend.error().message);
    return kExitError;
  }
  const Problem problem = cuda_gemm_problem(f.m, f.n, f.k, *dtype, f.device, *epilogue);
  // The wgmma template compiles for Hopper only.
  CudaGemmCandidates set = cuda_gemm_candidates(*dtype, f.cublaslt_algos, &problem, f.simt,
                                                *epilogue, backend->arch() == "sm_90a");
  if (f.compile_only) return compile_only(f, *backend, set.candidates);

  std::unique_ptr<TuningCache> cache;
  if (f.no_cache) {
    cache = make_memory_cache();
  } else {
    auto opened = open_sqlite_cache(ctx.cache_dir);
    if (!opened) {
      fmt::print(stderr, "error: {}\n", opened.error().message);
      return kExitError;
    }
    cache = std::move(*opened);
  }
  SelectorOptions sopts;
  sopts.jobs = f.jobs;
  sopts.bench.budget_ms = f.budget_ms;
  sopts.bench.min_runs = f.min_runs;
  sopts.bench.max_runs = f.max_runs;
  sopts.bench.warmup_runs = f.warmup_runs;
  sopts.bench.graph_calls = f.graph_calls;
  sopts.close_call_band = f.close_call_band;
  sopts.read_cache = !f.no_cache && !f.retune;
  sopts.write_cache = !f.no_cache;
  sopts.table_rows = f.top;
  sopts.seed = f.seed;
  sopts.json_log = f.json_log;
  if (f.quiet) sopts.progress = nullptr;
  sopts.isolate = !f.in_process;
  sopts.run_timeout = std::chrono::milliseconds(f.run_timeout_ms);
  // One worker per GPU: it sees only this one, as its device 0.
  sopts.worker.env.emplace_back("CUDA_VISIBLE_DEVICES", std::to_string(f.device));
  Selector selector(*backend, *cache, sopts);

  auto sel = selector.select(problem, set.candidates, set.reference.get());
  if (!sel) {
    fmt::print(stderr, "error: {}\n", sel.error().message);
    return kExitError;
  }
  const CandidateRecord& pick = sel->record.candidates[sel->winner_index];
  const double pick_ns = pick.stats ? pick.stats->median_ns : 0;
  fmt::print("Pick: {} at {:.1f} TFLOP/s ({:.4f} ms)\n", pick.name, tflops(f, pick_ns),
             pick_ns / 1e6);
  const std::string cublas_name = epilogue->empty() ? "cublas_gemm" : "cublas_gemm+epilogue";
  for (const CandidateRecord& c : sel->record.candidates) {
    if (c.name == cublas_name && c.stats) {
      fmt::print("cuBLAS{}: {:.1f} TFLOP/s ({:.4f} ms); pick / cuBLAS time: {:.3f}\n",
                 epilogue->empty() ? "" : " + separate epilogue", tflops(f, c.stats->median_ns),
                 c.stats->median_ns / 1e6, pick_ns / c.stats->median_ns);
    }
  }
  print_groups(sel->record, pick_ns);

  if (f.regret_rounds > 0 && !sel->from_cache) {
    // The pick against the fastest candidates, measured again side by side: every valid
    // candidate within 25% of the pick's first time, plus cuBLAS.
    std::vector<Choice*> again;
    std::vector<std::string> names;
    for (std::size_t i = 0; i < set.candidates.size(); ++i) {
      const CandidateRecord& c = sel->record.candidates[i];
      if (c.outcome != Outcome::kOk || !c.stats) continue;
      if (c.stats->median_ns <= pick_ns * 1.25 || c.name == "cublas_gemm") {
        again.push_back(set.candidates[i].get());
        names.push_back(c.name);
      }
    }
    BenchOptions round = sopts.bench;
    round.warmup_runs = 1;
    round.min_runs = 5;
    round.max_runs = 5;
    auto stats =
        selector.measure_again(problem, again, set.reference.get(), round, f.regret_rounds);
    if (!stats) {
      fmt::print(stderr, "error: re-measuring for the regret: {}\n", stats.error().message);
      return kExitError;
    }
    std::size_t best = 0, picked = 0;
    for (std::size_t i = 0; i < again.size(); ++i) {
      if ((*stats)[i].median_ns < (*stats)[best].median_ns) best = i;
      if (names[i] == pick.name) picked = i;
    }
    for (std::size_t i = 0; i < again.size(); ++i) {
      fmt::print("  re-measured {:<48} {:.4f} ms {:7.1f} TFLOP/s\n", names[i],
                 (*stats)[i].median_ns / 1e6, tflops(f, (*stats)[i].median_ns));
    }
    fmt::print("Regret: pick {} / fastest {} = {:.4f} ({} candidates, {} rounds)\n", pick.name,
               names[best], (*stats)[picked].median_ns / (*stats)[best].median_ns, again.size(),
               f.regret_rounds);
  }
  const double total_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("Tuned gemm {}x{}x{} {} in {:.3f} s (select {:.4f} s{}); cache: {}\n", f.m, f.n, f.k,
             f.dtype, total_s, sel->select_s, sel->from_cache ? ", from the tuning cache" : "",
             f.no_cache ? "off" : ctx.cache_dir.string());
  return 0;
}

}  // namespace

void add_gemm_command(CLI::App& app, CliContext& ctx) {
  auto f = std::make_shared<GemmFlags>();
  CLI::App* cmd = app.add_subcommand(
      "gemm",
      "Tune a row-major GEMM C[M,N] = A[M,K] B[K,N] on a CUDA GPU: tensor-core and SIMT "
      "templates, cuBLAS and the cuBLASLt heuristic's algorithms, verified against cuBLAS");
  cmd->add_option("--m", f->m, "Rows of A and C")->required();
  cmd->add_option("--n", f->n, "Columns of B and C")->required();
  cmd->add_option("--k", f->k, "Columns of A, rows of B")->required();
  cmd->add_option("--dtype", f->dtype, "bf16, f16 or f32 (fp32 accumulation)")
      ->capture_default_str();
  cmd->add_option("--device", f->device, "CUDA device index")->capture_default_str();
  cmd->add_option("--epilogue", f->epilogue,
                  "Fused after the GEMM, in order: bias, rowbias, scale=S, relu, gelu, silu, "
                  "residual (comma-separated; e.g. bias,relu)")
      ->capture_default_str();
  cmd->add_flag("--simt", f->simt,
                "Also tune the SIMT template where the tensor-core one serves (f16, bf16)");
  cmd->add_option("--arch", f->arch,
                  "Compile for this architecture (sm_80, sm_90a, ...); default: the GPU's");
  cmd->add_flag("--compile-only", f->compile_only,
                "Render and compile every template candidate, then stop (no GPU needed with "
                "--arch)");
  cmd->add_option("--cublaslt-algos", f->cublaslt_algos,
                  "cuBLASLt heuristic results to try, each as a candidate")
      ->capture_default_str();
  cmd->add_option("--jobs,-j", f->jobs, "Parallel compiles (default: all cores)");
  cmd->add_option("--close-call-band", f->close_call_band,
                  "Candidates within this fraction of the fastest are measured again, "
                  "alternating")
      ->capture_default_str();
  cmd->add_option("--budget-ms", f->budget_ms, "Timed milliseconds per candidate")
      ->capture_default_str();
  cmd->add_option("--min-runs", f->min_runs, "Timed runs at least")->capture_default_str();
  cmd->add_option("--max-runs", f->max_runs, "Timed runs at most")->capture_default_str();
  cmd->add_option("--warmup-runs", f->warmup_runs, "Untimed runs first")->capture_default_str();
  cmd->add_option("--graph-calls", f->graph_calls,
                  "Time a CUDA graph of this many calls per sample (hides launch cost); 0: "
                  "events around each call, L2 flushed before each")
      ->capture_default_str();
  cmd->add_flag("--no-cache", f->no_cache, "Neither read nor write the tuning cache");
  cmd->add_flag("--retune", f->retune, "Ignore a cached result; tune again and overwrite it");
  cmd->add_flag("--in-process", f->in_process,
                "Run candidates in the ktune process instead of a ktune-worker (a faulting "
                "kernel then ends the run)");
  cmd->add_option("--run-timeout-ms", f->run_timeout_ms,
                  "Deadline of one candidate in the worker (default: at least 10 s)");
  cmd->add_option("--seed", f->seed, "Seed of the input data")->capture_default_str();
  cmd->add_option("--top", f->top, "Rows of the AUTOTUNE table")->capture_default_str();
  cmd->add_option("--json-log", f->json_log, "Append JSON lines (one per candidate) to FILE");
  cmd->add_flag("--quiet,-q", f->quiet, "No progress lines on stderr");
  cmd->add_option("--regret-rounds", f->regret_rounds,
                  "After tuning, measure the pick and the fastest candidates again side by side "
                  "for this many rounds and print the pick's regret; 0: off")
      ->capture_default_str();
  cmd->callback([f, &ctx] { ctx.exit_code = run_gemm(*f, ctx); });
}

}  // namespace ktune::cli
