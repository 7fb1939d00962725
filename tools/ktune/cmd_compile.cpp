// `ktune compile GRAPH -o DIR`: tune every gemm of a graph (tuning cache first), fused with the
// pointwise nodes after it when that wins, plan its memory, emit one C++ program and build it
// into a shared library and a benchmark executable.
#include <fmt/format.h>

#include <charconv>

#include "cli.h"
#include "compile_flags.h"
#include "core/build_support.h"
#include "ktune/backend/cpu_backend.h"
#include "ktune/cache/tuning_cache.h"
#include "ktune/codegen/graph.h"
#include "ktune/codegen/graph_tuning.h"
#include "ktune/codegen/wrapper_codegen.h"
#include "ktune/select/selector.h"
#include "options.h"

namespace ktune::cli {
namespace {}  // namespace

Result<CompileDevice> parse_compile_device(const std::string& text) {
  if (text == "cpu") return CompileDevice{};
  if (text == "cuda") return CompileDevice{true, 0};
  if (text.starts_with("cuda:")) {
    const std::string n = text.substr(5);
    int index = -1;
    auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), index);
    if (ec == std::errc() && end == n.data() + n.size() && !n.empty() && index >= 0 &&
        index <= 1023) {
      return CompileDevice{true, index};
    }
  }
  return make_error(ErrorCode::kInvalidArgument,
                    fmt::format("expected cpu, cuda or cuda:N (N a GPU index); got '{}'", text));
}

namespace {

int fail(const Error& e) {
  fmt::print(stderr, "error: {}\n", e.message);
  return kExitError;
}

// Gemm candidates of a graph are many and small: a shorter budget than the Selector's.
SelectorOptions compile_defaults() {
  SelectorOptions o;
  o.bench.budget_ms = 50;
  return o;
}

int run_compile(const CompileFlags& f, const CliContext& ctx) {
  using namespace ktune::codegen;
  auto target = parse_compile_device(f.device);
  if (!target) {
    fmt::print(stderr, "error: --device: {}\n", target.error().message);
    return kExitUsage;
  }
  if (target->cuda) {
#if KTUNE_HAVE_CUDA
    return run_compile_cuda(f, target->index, ctx);
#else
    fmt::print(stderr, "error: ktune compile --device cuda: {}\n",
               not_built(BuildFeature::kCuda).message);
    return kExitError;
#endif
  }
  if (f.arch_set || f.nvcc_set || f.cublaslt_algos_set) {
    fmt::print(stderr, "error: --arch, --nvcc and --cublaslt-algos apply to --device cuda\n");
    return kExitUsage;
  }
  auto planner = parse_planner(f.planner);
  if (!planner) return fail(planner.error());
  auto graph = load_graph(f.graph);
  if (!graph) return fail(graph.error());
  if (!f.gemm_spec.empty()) graph->gemm_spec = f.gemm_spec;
  if (Status s = check_target(*graph, CodegenTarget::kCpu); !s) return fail(s.error());

  std::map<std::string, GemmPick> picks;
  int gemms = 0, hits = 0;
  for (const GraphNode& n : graph->nodes) gemms += n.op == OpKind::kGemm;
  if (gemms > 0) {
    if (graph->gemm_spec.empty()) {
      return fail(Error{ErrorCode::kInvalidArgument,
                        fmt::format("{}: gemm_spec: the graph has gemm nodes but names no spec to "
                                    "tune them with; add gemm_spec or pass --gemm-spec",
                                    f.graph)});
    }
    auto spec = load_gemm_spec(graph->gemm_spec);
    if (!spec) return fail(spec.error());
    std::unique_ptr<TuningCache> cache = open_tuning_cache(f.selector.no_cache, ctx);
    if (!cache) return kExitError;
    CpuCompileOptions copts;
    copts.on_command = verbose_compile_hook(f.selector);
    auto backend = CpuBackend::create(copts, ctx.cache_dir);
    if (!backend) return fail(backend.error());
    SelectorOptions base = compile_defaults();
    base.seed = spec->spec.seed;
    base.tolerance = spec->spec.tolerance;
    SelectorOptions sopts = to_selector_options(f.selector, base);
    if (f.selector.quiet) sopts.out = nullptr;
    if (!apply_devices(f.selector, *backend, sopts)) return kExitUsage;
    Selector selector(*backend, *cache, sopts);
    PickOptions popts;
    if (!f.force_pick.empty()) popts.force = f.force_pick;
    popts.fuse = !f.no_fuse;
    popts.progress = f.selector.quiet ? nullptr : stderr;
    auto picked = pick_gemms(*graph, *spec, &selector, popts);
    if (!picked) return fail(picked.error());
    picks = std::move(*picked);
    for (const auto& [node, pick] : picks) hits += pick.from_cache;
  }

  auto wrapper = emit_wrapper(*graph, picks, *planner);
  if (!wrapper) return fail(wrapper.error());
  WrapperBuildOptions bopts;
  if (!f.cxx.empty()) bopts.compiler = f.cxx;
  auto files = write_wrapper(*graph, *wrapper, f.output, bopts, !f.no_build);
  if (!files) return fail(files.error());

  fmt::print("Compiled graph {}: {} steps, {} gemm(s)", graph->name, graph->nodes.size(), gemms);
  if (gemms > 0) {
    fmt::print(" ({}{} from the tuning cache)",
               f.force_pick.empty() ? "" : fmt::format("forced {}; ", f.force_pick), hits);
  }
  for (const auto& [node, pick] : picks) {
    if (!pick.fused.empty()) {
      fmt::print("\n  {}: {} (fused; {})", pick.chain, pick.choice, pick.fusion);
    } else if (!pick.chain.empty()) {
      fmt::print("\n  {}: {} (not fused with {}: {})", node, pick.choice,
                 pick.chain.substr(pick.chain.find('+') + 1), pick.fusion);
    } else {
      fmt::print("\n  {}: {}", node, pick.choice);
    }
  }
  fmt::print("\nMemory plan ({}): peak {} bytes in {} allocation(s); lower bound {} bytes\n",
             f.planner, wrapper->plan.peak_bytes, wrapper->plan.blocks,
             wrapper->plan.lower_bound_bytes);
  fmt::print("Wrote {}\n", files->source.string());
  if (!f.no_build) {
    fmt::print("Built {} and {} (run: {} [RUNS [SEED]])\n", files->library.string(),
               files->executable.string(), files->executable.string());
  }
  return 0;
}

}  // namespace

void add_compile_command(CLI::App& app, CliContext& ctx) {
  auto f = std::make_shared<CompileFlags>();
  CLI::App* cmd = app.add_subcommand(
      "compile",
      "Compile a graph of tuned ops into one program with memory planning: tune every gemm "
      "(tuning cache first), emit DIR/<graph>.cpp (--device cpu) or DIR/<graph>.cu (--device "
      "cuda) and build DIR/lib<graph>.so and the benchmark DIR/<graph>");
  cmd->add_option("graph", f->graph, "Graph file (YAML or JSON; examples/mlp_block/README.md)")
      ->required();
  cmd->add_option("-o,--output", f->output, "Output folder (created when missing)")->required();
  cmd->add_option("--planner", f->planner,
                  "Memory planner: pool (Inductor's reuse pool) or arena (lifetimes and offsets "
                  "in one arena, best fit)")
      ->capture_default_str()
      ->each([f](const std::string&) { f->planner_set = true; });
  cmd->add_flag("--no-build", f->no_build, "Write the source only; do not run the compiler");
  cmd->add_option("--gemm-spec", f->gemm_spec,
                  "Spec whose candidates compete for every gemm (default: the graph's gemm_spec)");
  cmd->add_option("--force-pick", f->force_pick,
                  "Use this candidate for every gemm, without tuning: one of the gemm spec's "
                  "(e.g. openblas), or with --device cuda one of ktune gemm's (e.g. cublas_gemm)");
  cmd->add_flag("--no-fuse", f->no_fuse,
                "Keep every gemm apart from the pointwise nodes after it (by default each gemm "
                "followed by bias_add/relu/gelu/silu/scale/add nodes is also tuned with them fused "
                "into its store, and fused when a fused config wins)");
  add_selector_flags(*cmd, f->selector,
                     SelectorFlagDefaults{compile_defaults(), std::nullopt, true,
                                          "No AUTOTUNE tables or progress lines"});
  add_devices_flag(*cmd, f->selector);
  cmd->add_option(
      "--cxx", f->cxx,
      "C++ compiler for the program (--device cuda: its host code; default: $CXX, else c++)");
  cmd->add_option("--device", f->device,
                  "Where the program runs: cpu (C++), or cuda / cuda:N (a CUDA C++ program: "
                  "gemms tuned on GPU N over ktune's CUDA GEMM candidates with `ktune gemm`'s "
                  "defaults, bf16/f16/f32 graphs, one device arena, the forward in a CUDA graph)")
      ->capture_default_str();
  cmd->add_option("--arch", f->arch,
                  "--device cuda: compile for this architecture (sm_90a, ...); default: the GPU's")
      ->each([f](const std::string&) { f->arch_set = true; });
  cmd->add_option("--nvcc", f->nvcc,
                  "--device cuda: the CUDA compiler of the program's kernels, whose toolkit's "
                  "headers and libraries build its host code (default: $KTUNE_NVCC, else the CUDA "
                  "toolkit's under $CUDA_HOME, $CUDA_PATH or /usr/local/cuda, else nvcc on PATH)")
      ->each([f](const std::string&) { f->nvcc_set = true; });
  cmd->add_option("--cublaslt-algos", f->cublaslt_algos,
                  "--device cuda: cuBLASLt heuristic algorithms among each gemm's candidates")
      ->check(CLI::Range(0, 64))
      ->capture_default_str()
      ->each([f](const std::string&) { f->cublaslt_algos_set = true; });
  cmd->callback([f, &ctx] { ctx.exit_code = run_compile(*f, ctx); });
}

}  // namespace ktune::cli
