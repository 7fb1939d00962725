// KernelFns of CUDA launch specs, for a Dispatcher serving a `kernel.language: cuda` spec on the
// caller's stream and device pointers (spec_dispatcher.cpp). Built with CUDA support only.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "ktune/choice/choice.h"
#include "ktune/core/launch_spec.h"
#include "ktune/core/problem.h"

struct CUstream_st;
struct CUctx_st;

namespace ktune {

class CudaScratch;

class CudaKernel;

class CudaLaunchFns {
 public:
  // Captures the calling thread's current CUDA context (kUnavailable without a driver or one).
  [[nodiscard]] static Result<std::unique_ptr<CudaLaunchFns>> create(CUstream_st* stream);
  ~CudaLaunchFns();

  // The launch (and its `then` launches, in order) as a KernelFn whose args are one pointer per
  // problem argument: a buffer's device address, or a pointer to a scalar's value. Cubins are
  // loaded once (by file, entry and shared bytes), in the captured context, made current first
  // (a background tuning loads from its own thread); library calls are bound to `problem`.
  [[nodiscard]] Result<KernelFn> make(const LaunchSpec& spec, const Problem& problem);

 private:
  // `spec` and its `then` chain, sharing `workspace` (LaunchSpec::workspace_bytes; one per
  // function: calls of one function on several streams at once would share it).
  [[nodiscard]] Result<KernelFn> make_chain(const LaunchSpec& spec, const Problem& problem,
                                            const std::shared_ptr<CudaScratch>& workspace);
  CudaLaunchFns(CUstream_st* stream, CUctx_st* context);
  CUstream_st* stream_;
  CUctx_st* context_;
  std::mutex mu_;  // guards kernels_
  std::map<std::string, std::shared_ptr<CudaKernel>> kernels_;
};

}  // namespace ktune
