// open_cuda_gemm_dispatcher: an op: cuda.gemm spec served by shape. The candidates are built once
// (a template's grid comes from the Problem its launch spec is asked for, a library call binds the
// Problem's sizes when loaded), while each problem's tuning-cache key is built from that
// problem's own candidate set (cuda_gemm_tuning leaves the SIMT template out where a tensor-core
// one serves), so that the picks of `ktune tune spec.yaml` and `ktune gemm` are found.
#include "tuning/cuda_op_dispatch.h"

#include <fmt/format.h>

#include <climits>
#include <utility>

#include "ktune/cache_sqlite/sqlite_cache.h"
#include "ktune/ops/cuda_gemm.h"
#include "tuning/cuda_launch_fns.h"
#include "tuning/dispatch_table_build.h"
#include "tuning/spec_loader.h"

namespace ktune {
namespace {

// M, N and K of a decl, each in [1, INT_MAX] (the kernels' and cuBLAS's int arguments).
Result<CudaGemmRequest> gemm_request(const Spec& spec, const ProblemDecl& decl,
                                     const DispatcherOptions::CudaGemm& options) {
  CudaGemmRequest r;
  r.dtype = spec.op.dtype;
  r.epilogue = spec.epilogue;
  r.device = 0;  // `ktune tune`'s --device default; the worker sees it as its device 0
  r.cublaslt_algos = options.cublaslt_algos;
  r.simt = options.simt;
  std::int64_t* dims[] = {&r.m, &r.n, &r.k};
  const char* names[] = {"M", "N", "K"};
  for (int d = 0; d < 3; ++d) {
    std::optional<std::int64_t> v = problem_size(decl, names[d]);
    if (!v || *v < 1 || *v > INT_MAX) {
      return make_error(
          ErrorCode::kInvalidArgument,
          fmt::format("dispatcher {}: {} {}; expected an integer in [1, {}]", spec.name, names[d],
                      v ? fmt::format("is {}", *v) : std::string("is not given"), INT_MAX));
    }
    *dims[d] = *v;
  }
  return r;
}

SelectorOptions background_options(const Spec& spec, const DispatcherOptions::CudaGemm& options) {
  SelectorOptions o;
  if (options.selector) {
    o = *options.selector;
  } else {
    o = cuda_gemm_selector_defaults();
    o.out = nullptr;
    o.progress = nullptr;
    o.search = spec.search;
  }
  o.seed = spec.seed;
  return o;
}

std::string cublas_name(const Spec& spec) {
  return spec.epilogue.empty() ? "cublas_gemm" : "cublas_gemm+epilogue";
}

}  // namespace

std::function<Result<KernelFn>(Choice&, const Backend&, const Problem&)> cuda_launch_make_fn(
    std::unique_ptr<CudaLaunchFns> fns) {
  std::shared_ptr<CudaLaunchFns> shared(std::move(fns));
  return [shared](Choice& c, const Backend&, const Problem& p) -> Result<KernelFn> {
    Result<LaunchSpec> launch = c.launch_spec(p);
    if (!launch) return std::unexpected(launch.error());
    return shared->make(*launch, p);
  };
}

Result<CudaGemmTuning> cuda_gemm_spec_tuning(const CudaBackend& backend, const Spec& spec,
                                             const ProblemDecl& decl,
                                             const DispatcherOptions::CudaGemm& options) {
  Result<CudaGemmRequest> request = gemm_request(spec, decl, options);
  if (!request) return std::unexpected(request.error());
  return cuda_gemm_tuning(backend, *request, background_options(spec, options));
}

TuningKey cuda_gemm_spec_key(const CudaBackend& backend, CudaGemmTuning& tuning) {
  // spec_tuning_key takes the candidates as SpecChoices: lent to one and given back.
  SpecChoices lent;
  lent.candidates = std::move(tuning.candidates);
  lent.reference = std::move(tuning.reference);
  TuningKey key =
      spec_tuning_key(tuning.problem, lent, backend, tuning.options.seed, tuning.options.tolerance);
  tuning.candidates = std::move(lent.candidates);
  tuning.reference = std::move(lent.reference);
  return key;
}

std::vector<ChoicePtr> cuda_gemm_served_candidates(const CudaBackend& backend, const Spec& spec,
                                                   const DispatcherOptions::CudaGemm& options) {
  // Without a problem, no tensor-core template is known to serve: the SIMT one stays.
  return cuda_gemm_candidates(spec.op.dtype, options.cublaslt_algos, nullptr, /*with_simt=*/true,
                              spec.epilogue, backend.arch() == "sm_90a")
      .candidates;
}

Result<DispatchTableBuild> make_cuda_gemm_dispatch_table(
    const Spec& spec, std::vector<ChoicePtr>& served, const CudaBackend& backend,
    TuningCache& cache, const DispatcherOptions::CudaGemm& options,
    const std::optional<std::string>& default_choice) {
  const PickLookup lookup = [&](const ProblemDecl& decl) -> Result<StoredPick> {
    Result<CudaGemmTuning> tuning = cuda_gemm_spec_tuning(backend, spec, decl, options);
    if (!tuning) return std::unexpected(tuning.error());
    // A pick is served only from a whole record of this problem's own candidates.
    std::vector<CandidateId> ids;
    ids.reserve(tuning->candidates.size());
    for (const ChoicePtr& c : tuning->candidates) ids.push_back({c->name(), c->hash_key()});
    Result<std::optional<TuningRecord>> hit =
        lookup_checked(cache, cuda_gemm_spec_key(backend, *tuning), ids);
    if (!hit) return std::unexpected(hit.error());
    return StoredPick{tuning->problem.name, std::move(*hit)};
  };
  return build_dispatch_table(spec, served, backend, lookup,
                              default_choice.value_or(cublas_name(spec)),
                              /*generated_only=*/false);
}

Result<std::unique_ptr<Dispatcher>> open_cuda_gemm_dispatcher(Spec spec,
                                                              DispatcherOptions options) {
  auto fns = CudaLaunchFns::create(options.cuda_stream);
  if (!fns) return std::unexpected(fns.error());
  // `ktune tune`'s backend: the GPU's arch, the default flags (the toolchain fingerprint).
  Result<CudaBackend> created = CudaBackend::create(CudaCompileOptions{}, options.cache_dir);
  if (!created) return std::unexpected(created.error());
  auto backend = std::make_unique<CudaBackend>(std::move(*created));
  SpecChoices served;
  served.candidates = cuda_gemm_served_candidates(*backend, spec, options.cuda_gemm);
  Result<std::unique_ptr<TuningCache>> cache = open_sqlite_cache(options.cache_dir);
  if (!cache) return std::unexpected(cache.error());
  Result<DispatchTableBuild> built = make_cuda_gemm_dispatch_table(
      spec, served.candidates, *backend, **cache, options.cuda_gemm, options.default_choice);
  if (!built) return std::unexpected(built.error());

  SpecLoaderHooks hooks;
  hooks.make_fn = cuda_launch_make_fn(std::move(*fns));
  hooks.launch_per_problem = true;
  hooks.problem = [spec, o = options.cuda_gemm](const ProblemDecl& decl) -> Result<Problem> {
    Result<CudaGemmRequest> r = gemm_request(spec, decl, o);
    if (!r) return std::unexpected(r.error());
    return cuda_gemm_problem(r->m, r->n, r->k, r->dtype, r->device, r->epilogue);
  };
  // The shape's own candidates and options, as `ktune tune` would tune it; the dispatcher's
  // backend (its arch and flags) so that the stored key is the one read at the next open.
  hooks.tune = [spec, o = options.cuda_gemm, cache_dir = options.cache_dir](
                   const Backend& backend, const Problem&,
                   const ProblemDecl& decl) -> Result<std::string> {
    const auto& cuda = static_cast<const CudaBackend&>(backend);  // made above
    Result<CudaGemmTuning> t = cuda_gemm_spec_tuning(cuda, spec, decl, o);
    if (!t) return std::unexpected(t.error());
    Result<std::unique_ptr<TuningCache>> cache = open_sqlite_cache(cache_dir);
    if (!cache) return std::unexpected(cache.error());
    Selector tuner(cuda, **cache, t->options);
    Result<Selection> selection = tuner.select(t->problem, t->candidates, t->reference.get());
    if (!selection) return std::unexpected(selection.error());
    return t->candidates[selection->winner_index]->name();
  };
  return Dispatcher::create(std::move(built->table),
                            make_spec_loader(std::move(spec), std::move(served), std::move(backend),
                                             std::move(hooks), options.tune_unseen));
}

}  // namespace ktune
