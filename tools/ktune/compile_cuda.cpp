// `ktune compile GRAPH -o DIR --device cuda[:N]`: every gemm of the graph tuned on the GPU with
// its fusible chain (pick_cuda_gemms), then one CUDA C++ program emitted (emit_cuda_wrapper: one
// device arena, the forward captured in a CUDA graph) and built into DIR/lib<graph>.so and the
// benchmark DIR/<graph>: its kernels by nvcc (started before tuning), its host code by c++.
// Built with CUDA support only (tools/CMakeLists.txt).
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>

#include "compile_flags.h"
#include "ktune/backend/cuda_backend.h"
#include "ktune/codegen/cuda_gemm_picks.h"
#include "ktune/codegen/cuda_wrapper.h"
#include "ktune/codegen/graph_fusion.h"
#include "ktune/tuning/cuda_gemm_tuning.h"
#include "ktune/tuning/devices.h"

namespace ktune::cli {
namespace {

int fail(const Error& e) {
  fmt::print(stderr, "error: {}\n", e.message);
  return kExitError;
}

}  // namespace

int run_compile_cuda(const CompileFlags& f, int device, const CliContext& ctx) {
  using namespace ktune::codegen;
  const auto t0 = std::chrono::steady_clock::now();
  // What the CUDA path does not take: a CPU gemm spec, a compiler of C++, the pool planner (the
  // program holds one device arena).
  if (!f.gemm_spec.empty() || (f.planner_set && f.planner != "arena")) {
    fmt::print(stderr,
               "error: --gemm-spec and --planner pool apply to --device cpu; --device cuda "
               "tunes ktune's CUDA GEMM candidates and plans one arena\n");
    return kExitUsage;
  }
  if (!f.selector.devices.empty() && device != 0) {
    fmt::print(stderr,
               "error: --devices names the GPUs; it cannot be combined with --device "
               "cuda:N\n");
    return kExitUsage;
  }
  // With --devices, the first GPU listed is the one compiled for and deciding.
  device = first_listed_device(f.selector.devices, device);
  auto graph = load_graph(f.graph);
  if (!graph) return fail(graph.error());
  if (Status s = check_target(*graph, CodegenTarget::kCuda); !s) return fail(s.error());

  CudaCompileOptions copts;
  copts.arch = f.arch;
  copts.device = device;
  copts.on_command = verbose_compile_hook(f.selector);
  auto backend = CudaBackend::create(copts, ctx.cache_dir);
  if (!backend) return fail(backend.error());
  std::unique_ptr<TuningCache> cache = open_tuning_cache(f.selector.no_cache, ctx);
  if (!cache) return kExitError;
  SelectorOptions base = to_selector_options(f.selector, cuda_gemm_selector_defaults());
  if (f.selector.quiet) base.out = nullptr;
  base = with_device_lock(base, ctx);
  if (!apply_devices(f.selector, *backend, base)) return kExitUsage;
  CudaBuildOptions bopts;
  bopts.arch = backend->arch();
  if (!f.nvcc.empty()) bopts.nvcc = f.nvcc;
  if (!f.cxx.empty()) bopts.cxx = f.cxx;
  // The program's own kernels and its host code's fixed prelude do not depend on the picks: they
  // are compiled while the gemms are tuned.
  std::unique_ptr<CudaEarlyBuild> early;
  if (!f.no_build) {
    auto kernels = predict_cuda_kernels(*graph, !f.no_fuse);
    if (!kernels) return fail(kernels.error());
    auto started = CudaEarlyBuild::start(graph->name, std::move(*kernels), bopts);
    if (!started) return fail(started.error());
    early = std::move(*started);
  }
  CudaPickOptions popts;
  popts.device = device;
  popts.cublaslt_algos = f.cublaslt_algos;
  popts.fuse = !f.no_fuse;
  if (!f.force_pick.empty()) popts.force = f.force_pick;
  popts.progress = f.selector.quiet ? nullptr : stderr;
  auto picks = pick_cuda_gemms(*graph, *backend, *cache, base, popts);
  if (!picks) return fail(picks.error());
  const double tune_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  auto wrapper = emit_cuda_wrapper(*graph, *picks);
  if (!wrapper) return fail(wrapper.error());
  auto files = write_cuda_wrapper(*graph, *wrapper, f.output, bopts, !f.no_build, early.get());
  if (!files) return fail(files.error());

  int gemms = 0, hits = 0;
  for (const auto& [node, pick] : *picks) {
    ++gemms;
    hits += pick.from_cache;
  }
  fmt::print("Compiled graph {} for CUDA ({}): {} steps, {} gemm(s) ({}{} from the tuning cache)",
             graph->name, backend->arch(), graph->nodes.size(), gemms,
             f.force_pick.empty() ? "" : fmt::format("forced {}; ", f.force_pick), hits);
  for (const auto& [node, pick] : *picks) {
    fmt::print("\n  {}: {} ({})", pick.chain.empty() ? node : pick.chain, pick.choice, pick.fusion);
  }
  const double total_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("\nMemory plan (arena): {} bytes of device memory; lower bound {} bytes\n",
             wrapper->plan.arena_bytes, wrapper->plan.lower_bound_bytes);
  fmt::print("Wrote {}{}\n", files->host.string(),
             files->kernels.empty() ? "" : fmt::format(" and {}", files->kernels.string()));
  if (!f.no_build) {
    fmt::print("Built {} and {} (run: {} [RUNS [SEED]])\n", files->library.string(),
               files->executable.string(), files->executable.string());
  }
  fmt::print("Tuned in {:.3f} s, {:.3f} s in all\n", tune_s, total_s);
  return 0;
}

}  // namespace ktune::cli
