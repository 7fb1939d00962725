// The Dispatcher of an `op: cuda.gemm` spec (open_dispatcher), and the CUDA launch hook that
// kernel specs share with it. Built with CUDA support only.
#pragma once

#include <functional>
#include <memory>

#include "ktune/backend/cuda_backend.h"
#include "ktune/tuning/cuda_gemm_tuning.h"
#include "ktune/tuning/spec_dispatcher.h"

namespace ktune {

class CudaLaunchFns;

// SpecLoaderHooks::make_fn on the stream of `fns`: the choice's launch spec for the problem, made
// runnable (cubins loaded once, library calls bound to the problem).
[[nodiscard]] std::function<Result<KernelFn>(Choice&, const Backend&, const Problem&)>
cuda_launch_make_fn(std::unique_ptr<CudaLaunchFns> fns);

// One problem of the spec (its M, N, K) tuned as `ktune tune spec.yaml` tunes it with its
// defaults and `options`' candidate set: the problem, candidates and reference of
// cuda_gemm_tuning() on device 0, with the spec's seed and search. kInvalidArgument for sizes
// outside [1, 2^31 - 1] or a decl without M, N or K.
[[nodiscard]] Result<CudaGemmTuning> cuda_gemm_spec_tuning(
    const CudaBackend& backend, const Spec& spec, const ProblemDecl& decl,
    const DispatcherOptions::CudaGemm& options);

// The tuning-cache key of that problem: the one `ktune tune spec.yaml` and `ktune gemm --m M --n N
// --k K --dtype D [--epilogue E] --seed <the spec's>` store its pick under.
// `tuning`'s candidates are lent to spec_tuning_key and back: unchanged when it returns.
[[nodiscard]] TuningKey cuda_gemm_spec_key(const CudaBackend& backend, CudaGemmTuning& tuning);

// What a dispatcher of the spec serves: the candidates of every shape (the SIMT template
// included, which cuda_gemm_tuning leaves out where a tensor-core one serves), built once; a
// template's launch is computed from the Problem it is given.
[[nodiscard]] std::vector<ChoicePtr> cuda_gemm_served_candidates(
    const CudaBackend& backend, const Spec& spec, const DispatcherOptions::CudaGemm& options);

// The spec's dispatch table over `served`: each problem's pick stored under cuda_gemm_spec_key.
// The default: `default_choice`, else cuBLAS.
[[nodiscard]] Result<DispatchTableBuild> make_cuda_gemm_dispatch_table(
    const Spec& spec, std::vector<ChoicePtr>& served, const CudaBackend& backend,
    TuningCache& cache, const DispatcherOptions::CudaGemm& options,
    const std::optional<std::string>& default_choice);

// open_dispatcher for an op: cuda.gemm spec (options.cache_dir set).
[[nodiscard]] Result<std::unique_ptr<Dispatcher>> open_cuda_gemm_dispatcher(
    Spec spec, DispatcherOptions options);

}  // namespace ktune
