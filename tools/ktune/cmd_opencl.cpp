// `ktune opencl-gemm --m M --n N --k K [--epilogue bias,relu]`: tune the f32 OpenCL GEMM template
// (kernels/opencl/gemm.cl), with the epilogue fused into its store when one is given, on an
// OpenCL device (PoCL on the CPU, any GPU), verified against the naive OpenCL kernel (followed
// by the same epilogue), and print the AUTOTUNE table and the pick's GFLOP/s.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "cli.h"
#include "core/build_support.h"
#include "ktune/backend/opencl_backend.h"
#include "ktune/cache/tuning_cache.h"
#include "ktune/ops/opencl_ops.h"
#include "ktune/select/selector.h"
#include "ktune/tuning/tune_spec.h"
#include "options.h"

namespace ktune::cli {
namespace {

struct OpenCLGemmFlags {
  std::int64_t m = 0, n = 0, k = 0;
  std::string device;
  std::string epilogue = "none";
  SelectorFlags selector;  // over opencl_defaults()
};

int run_opencl_gemm(const OpenCLGemmFlags& f, const CliContext& ctx) {
#if !KTUNE_HAVE_OPENCL
  (void)f, (void)ctx;
  fmt::print(stderr, "error: ktune opencl-gemm: {}\n", not_built(BuildFeature::kOpenCL).message);
  return kExitError;
#else
  const auto t0 = std::chrono::steady_clock::now();
  auto epilogue = Epilogue::parse(f.epilogue);
  if (!epilogue) {
    fmt::print(stderr, "error: --epilogue: {}\n", epilogue.error().message);
    return kExitUsage;
  }
  SelectorOptions sopts = to_selector_options(f.selector, opencl_defaults());
  if (int code = preflight(sopts); code != 0) return code;
  OpenCLOptions options;
  options.device = f.device;
  options.on_command = verbose_compile_hook(f.selector);
  auto backend = OpenCLBackend::create(options, ctx.cache_dir);
  if (!backend) {
    fmt::print(stderr, "error: {}\n", backend.error().message);
    return kExitError;
  }
  std::unique_ptr<TuningCache> cache = open_tuning_cache(f.selector.no_cache, ctx);
  if (!cache) return kExitError;
  // Each element of C sums K products: the tiled kernels sum in another order than the naive one.
  sopts.tolerance = reduction_tolerance(DType::kF32, f.k);
  // One worker per device: it opens exactly the device the backend compiled for.
  sopts.worker.env.emplace_back("KTUNE_OPENCL_DEVICE", backend->device_selector());
  if (!apply_devices(f.selector, *backend, sopts)) return kExitUsage;
  Selector selector(*backend, *cache, with_device_lock(sopts, ctx));

  const Problem problem = opencl_gemm_problem(f.m, f.n, f.k, 0, *epilogue);
  Result<std::vector<ChoicePtr> > choices =
      opencl_gemm_template(opencl_gemm_space(), *epilogue)->choices();
  KTUNE_CHECK(choices.has_value());  // the built-in space is small
  std::vector<ChoicePtr> candidates = std::move(*choices);
  ChoicePtr reference = opencl_gemm_reference(*epilogue);
  auto sel = selector.select(problem, candidates, reference.get());
  if (!sel) {
    fmt::print(stderr, "error: {}\n", sel.error().message);
    return kExitError;
  }
  if (sel->from_cache)
    std::fputs(stored_settings_note(f.selector, {}, sel->record).c_str(), stdout);
  const CandidateRecord& pick = sel->record.candidates[sel->winner_index];
  const double ns = pick.stats ? pick.stats->median_ns : 0;
  const double gflops = ns > 0 ? 2.0 * double(f.m) * double(f.n) * double(f.k) / ns : 0;
  fmt::print("Pick: {} at {:.1f} GFLOP/s ({:.4f} ms) on {}\n", pick.name, gflops, ns / 1e6,
             backend->device_name());
  const double total_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("Tuned opencl-gemm {}x{}x{} f32{} in {:.3f} s (select {:.4f} s{})\n", f.m, f.n, f.k,
             epilogue->empty() ? "" : " + " + epilogue->name(), total_s, sel->select_s,
             sel->from_cache ? ", from the tuning cache" : "");
  return 0;
#endif
}

}  // namespace

SelectorOptions opencl_defaults() { return opencl_tune_defaults(); }

void add_opencl_command(CLI::App& app, CliContext& ctx) {
  auto f = std::make_shared<OpenCLGemmFlags>();
  CLI::App* cmd = app.add_subcommand(
      "opencl-gemm",
      "Tune the f32 OpenCL GEMM template C[M,N] = A[M,K] B[K,N] on an OpenCL device (PoCL, any "
      "GPU), optionally with an epilogue fused into its store, verified against a naive OpenCL "
      "kernel");
  cmd->add_option("--m", f->m, "Rows of A and C")->required()->check(kSizeRange);
  cmd->add_option("--n", f->n, "Columns of B and C")->required()->check(kSizeRange);
  cmd->add_option("--k", f->k, "Columns of A, rows of B")->required()->check(kSizeRange);
  cmd->add_option("--device", f->device,
                  "OpenCL device: [<platform>:]<device>, each an index or a name substring; "
                  "default $KTUNE_OPENCL_DEVICE, else the first device");
  cmd->add_option("--epilogue", f->epilogue,
                  "Fused after the GEMM, in order: bias, rowbias, scale=S, relu, gelu, silu, "
                  "residual (comma-separated; e.g. bias,relu)")
      ->capture_default_str();
  add_devices_flag(*cmd, f->selector);
  add_selector_flags(*cmd, f->selector,
                     SelectorFlagDefaults{opencl_defaults(), std::nullopt, true});
  cmd->callback([f, &ctx] { ctx.exit_code = run_opencl_gemm(*f, ctx); });
}

}  // namespace ktune::cli
