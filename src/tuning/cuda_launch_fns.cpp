// CudaLaunchFns (cuda_launch_fns.h): cubins through CudaKernel, cuBLAS/cuBLASLt through
// CublasGemmRunner, both on the caller's stream.
#include "tuning/cuda_launch_fns.h"

#include <cuda.h>
#include <fmt/format.h>

#include <vector>

#include "backend/cuda_module.h"
#include "backend/cuda_tensor_map.h"
#include "choice/cublas_gemm_runner.h"
#include "core/cuda_driver.h"

namespace ktune {
namespace {

bool is_buffer(const ProblemArg& a) { return a.param.role != ArgRole::kScalar; }

}  // namespace

CudaLaunchFns::CudaLaunchFns(CUstream_st* stream, CUctx_st* context)
    : stream_(stream), context_(context) {}

CudaLaunchFns::~CudaLaunchFns() = default;

Result<std::unique_ptr<CudaLaunchFns>> CudaLaunchFns::create(CUstream_st* stream) {
  Result<const CudaDriver*> cu = cuda_driver();
  if (!cu) return std::unexpected(cu.error());
  CUcontext context = nullptr;
  if ((*cu)->CtxGetCurrent(&context) != CUDA_SUCCESS || context == nullptr) {
    return make_error(ErrorCode::kUnavailable,
                      "the dispatcher of a CUDA spec needs a current CUDA context (cudaSetDevice "
                      "and any runtime call, or cuCtxSetCurrent) when it is opened");
  }
  return std::unique_ptr<CudaLaunchFns>(new CudaLaunchFns(stream, context));
}

Result<KernelFn> CudaLaunchFns::make(const LaunchSpec& spec, const Problem& problem) {
  const CudaDriver& cu = **cuda_driver();
  if (CUresult r = cu.CtxSetCurrent(context_); r != CUDA_SUCCESS) {
    return std::unexpected(cuda_status(cu, r, "CtxSetCurrent").error());
  }
  Result<std::shared_ptr<CudaScratch>> workspace = CudaScratch::for_chain(cu, spec);
  if (!workspace) return std::unexpected(workspace.error());
  return make_chain(spec, problem, *workspace);
}

Result<KernelFn> CudaLaunchFns::make_chain(const LaunchSpec& spec, const Problem& problem,
                                           const std::shared_ptr<CudaScratch>& workspace) {
  const CudaDriver& cu = **cuda_driver();
  std::vector<KernelFn> steps;
  // Which arguments are buffers (passed by their device address), decided once, not per call.
  std::vector<char> buffer(problem.args.size());
  for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = is_buffer(problem.args[i]);
  const LaunchSpec& s = spec;
  if (s.kind == LaunchKind::kCudaCubin) {
    const std::string key = fmt::format("{} {} {}", s.artifact.string(), s.entry, s.shared_bytes);
    std::shared_ptr<CudaKernel> kernel;
    {
      std::lock_guard lock(mu_);
      auto it = kernels_.find(key);
      if (it == kernels_.end()) {
        auto k = CudaKernel::load(cu, s.artifact, s.entry, s.shared_bytes);
        if (!k) return std::unexpected(k.error());
        it = kernels_.emplace(key, std::shared_ptr<CudaKernel>(std::move(*k))).first;
      }
      kernel = it->second;
    }
    const LaunchGeometry geometry{s.grid, s.block, s.shared_bytes, s.tensor_maps,
                                  s.workspace_bytes};
    CUstream stream = stream_;
    steps.push_back([kernel, geometry, stream, buffer, workspace](void* const* values) -> Status {
      // kernelParams: the address of each buffer's device pointer, each scalar's own address,
      // then the TMA descriptors; on the stack for the usual few arguments (a call's only
      // allocation-free path).
      constexpr std::size_t kInline = 16;
      const std::size_t n = buffer.size();
      const std::size_t maps = geometry.tensor_maps.size();
      CUdeviceptr inline_ptrs[kInline];
      void* inline_params[kInline + kMaxTensorMaps + 1];
      std::vector<CUdeviceptr> heap_ptrs;
      std::vector<void*> heap_params;
      CUdeviceptr* ptrs = inline_ptrs;
      void** params = inline_params;
      if (n > kInline) {
        heap_ptrs.resize(n);
        heap_params.resize(n + maps + 1);
        ptrs = heap_ptrs.data();
        params = heap_params.data();
      }
      for (std::size_t i = 0; i < n; ++i) {
        ptrs[i] = buffer[i] ? reinterpret_cast<CUdeviceptr>(values[i]) : 0;
        params[i] = buffer[i] ? static_cast<void*>(&ptrs[i]) : values[i];
      }
      const CudaDriver& cu = **cuda_driver();
      CUtensorMap tensor_maps[kMaxTensorMaps];
      CUdeviceptr scratch = 0;
      if (maps > 0 || geometry.workspace_bytes > 0) {
        Result<std::size_t> extra = trailing_params(cu, geometry, {ptrs, n}, workspace.get(),
                                                    tensor_maps, &scratch, params + n);
        if (!extra) return std::unexpected(extra.error());
      }
      if (CUresult r = kernel->launch(geometry, stream, params); r != CUDA_SUCCESS) {
        return std::unexpected(cuda_status(cu, r, "LaunchKernel").error());
      }
      return {};
    });
  } else if (s.kind == LaunchKind::kCudaLibrary) {
    auto runner = CublasGemmRunner::create(s, problem, stream_);
    if (!runner) return std::unexpected(runner.error());
    std::shared_ptr<CublasGemmRunner> shared(std::move(*runner));
    steps.push_back([shared, buffer](void* const* values) -> Status {
      std::vector<CUdeviceptr> ptrs(buffer.size(), 0);  // the runner's interface takes a vector
      for (std::size_t i = 0; i < buffer.size(); ++i) {
        if (buffer[i]) ptrs[i] = reinterpret_cast<CUdeviceptr>(values[i]);
      }
      return shared->run(ptrs);
    });
  } else {
    return make_error(
        ErrorCode::kInvalidArgument,
        fmt::format("a CUDA dispatcher cannot run launch kind {}", launch_kind_name(s.kind)));
  }
  // The launches after this one, in order (each with its own `then`, if any).
  for (const LaunchSpec& next : spec.then) {
    Result<KernelFn> fn = make_chain(next, problem, workspace);
    if (!fn) return std::unexpected(fn.error());
    steps.push_back(std::move(*fn));
  }
  if (steps.size() == 1) return steps.front();
  return KernelFn([steps = std::move(steps)](void* const* values) -> Status {
    for (const KernelFn& step : steps) {
      if (Status s = step(values); !s) return s;
    }
    return {};
  });
}

}  // namespace ktune
