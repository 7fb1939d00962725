// `ktune gemm --m M --n N --k K --dtype bf16`: tune a row-major GEMM on a CUDA GPU over the full
// candidate set (gemm_run.h, shared with `ktune tune` on an op: cuda.gemm spec): the flags.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>

#include "cli.h"
#include "core/build_support.h"
#include "core/trace.h"
#include "gemm_run.h"
#include "json_out.h"
#include "ktune/tuning/devices.h"
#include "options.h"
#if KTUNE_HAVE_CUDA
#include "core/cuda_predict.h"
#include "select/progress_line.h"
#include "tuning/cuda_compile_ahead.h"
#endif

namespace ktune::cli {
namespace {

// The shape as typed; run_gemm validates it into a GemmShape.
struct GemmFlags {
  std::int64_t m = 0, n = 0, k = 0;
  std::string dtype = "bf16";
  std::string epilogue = "none";
  GemmOptions options;
};

int run_gemm(const GemmFlags& f, const CliContext& ctx) {
#if !KTUNE_HAVE_CUDA
  (void)f, (void)ctx;
  fmt::print(stderr, "error: ktune gemm: {}\n", not_built(BuildFeature::kCuda).message);
  return kExitError;
#else
  const auto t0 = std::chrono::steady_clock::now();
  auto dtype = parse_dtype(f.dtype);
  if (!dtype || (*dtype != DType::kBF16 && *dtype != DType::kF16 && *dtype != DType::kF32)) {
    fmt::print(stderr, "error: --dtype: expected bf16, f16 or f32, got '{}'\n", f.dtype);
    return kExitUsage;
  }
  auto epilogue = Epilogue::parse(f.epilogue);
  if (!epilogue) {
    fmt::print(stderr, "error: --epilogue: {}\n", epilogue.error().message);
    return kExitUsage;
  }
  if (!f.options.selector.devices.empty() && f.options.device != 0) {
    fmt::print(stderr, "error: --devices names the GPUs; it cannot be combined with --device\n");
    return kExitUsage;
  }
  if (Status s = precheck_devices(f.options.selector.devices, DeviceKind::kCuda);
      !s && !f.options.compile_only) {
    fmt::print(stderr, "error: {}\n", s.error().message);
    return s.error().code == ErrorCode::kInvalidArgument ? kExitUsage : kExitError;
  }
  SelectorOptions checked = to_selector_options(f.options.selector, cuda_gemm_selector_defaults());
  checked.isolate = checked.isolate && !f.options.compile_only;  // compiling runs no worker
  if (int code = preflight(checked); code != 0) return code;
  const GemmShape shape{f.m, f.n, f.k, *dtype, std::move(*epilogue)};
  // The tuning (or the hit) on `backend`, its JSON document printed with --json.
  const auto run = [&](const CudaBackend& backend, bool cache_only) -> GemmRun {
    GemmOptions options = f.options;
    options.cache_only = cache_only;
    if (!options.selector.json) return tune_gemm(backend, shape, options, ctx, t0);
    ResultDocument doc("gemm", "");
    options.json = &doc;
    const GemmRun r = tune_gemm(backend, shape, options, ctx, t0);
    if (!r.answered || options.compile_only) return r;
    const double total_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto cache = options.selector.no_cache ? std::nullopt : std::optional(ctx.cache_dir);
    std::fflush(stderr);
    const auto where = cache ? std::optional(cache_location(ctx)) : std::nullopt;
    fmt::print("{}", doc.text(cache, where, total_s, r.exit_code));
    return r;
  };
  const std::optional<CudaDeviceInfo> predicted = predict_gemm_device(f.options, ctx);
  // A tuning-cache hit for the device NVML reports needs no driver (0.1-0.2 s to start): asked
  // first, on a backend made without it.
  bool asked = false;
  if (predicted) {
    if (std::optional<CudaBackend> answering = backend_for_cache_hits(f.options, ctx, *predicted)) {
      const ScopedCudaDeviceHint hint(*predicted);
      asked = true;
      if (const GemmRun r = run(*answering, /*cache_only=*/true); r.answered) {
        if (f.options.selector.verbose && !f.options.selector.quiet) {
          std::fflush(stdout);  // after the answer, not inside it where both go to one file
          progress_note(stderr, fmt::format("answered from the tuning cache for {} without "
                                            "starting the CUDA driver",
                                            prediction_text(*predicted)));
        }
        return r.exit_code;
      }
    }
  }
  // The templates start compiling for the GPU that NVML predicts while the driver starts.
  const std::unique_ptr<CudaCompileAhead> ahead =
      compile_gemm_ahead(shape, f.options, ctx, predicted, /*check_cache=*/!asked);
  trace::Span backend_span("backend", "cli");
  auto backend = open_gemm_backend(f.options, ctx, ahead.get());
  if (!backend) return kExitError;
  backend_span.end();
  return run(*backend, /*cache_only=*/false).exit_code;
#endif
}

}  // namespace

void add_gemm_command(CLI::App& app, CliContext& ctx) {
  auto f = std::make_shared<GemmFlags>();
  CLI::App* cmd = app.add_subcommand(
      "gemm",
      "Tune a row-major GEMM C[M,N] = A[M,K] B[K,N] on a CUDA GPU: tensor-core and SIMT "
      "templates, cuBLAS and the cuBLASLt heuristic's algorithms, verified against cuBLAS");
  cmd->add_option("--m", f->m, "Rows of A and C")->required()->check(kSizeRange);
  cmd->add_option("--n", f->n, "Columns of B and C")->required()->check(kSizeRange);
  cmd->add_option("--k", f->k, "Columns of A, rows of B")->required()->check(kSizeRange);
  cmd->add_option("--dtype", f->dtype, "bf16, f16 or f32 (fp32 accumulation)")
      ->capture_default_str();
  add_gemm_target_flags(*cmd, f->options);
  cmd->add_option("--epilogue", f->epilogue,
                  "Fused after the GEMM, in order: bias, rowbias, scale=S, relu, gelu, silu, "
                  "residual (comma-separated; e.g. bias,relu)")
      ->capture_default_str();
  add_gemm_candidate_flags(*cmd, f->options);
  add_devices_flag(*cmd, f->options.selector);
  add_selector_flags(*cmd, f->options.selector,
                     SelectorFlagDefaults{cuda_gemm_selector_defaults(), std::nullopt, false});
  cmd->add_option("--regret-rounds", f->options.regret_rounds,
                  "After tuning, measure the pick and the fastest candidates again side by side "
                  "for this many rounds and print the pick's regret; 0: off")
      ->check(CLI::Range(0, 100'000))
      ->capture_default_str();
  add_json_flag(*cmd, f->options.selector);
  cmd->callback([f, &ctx] { ctx.exit_code = run_gemm(*f, ctx); });
}

}  // namespace ktune::cli
