// TMA descriptors (CUtensorMap) of a kernel launch: a LaunchSpec's TensorMapDesc list encoded
// with the device addresses of the launch's arguments. One place for every CUDA launcher (the
// worker's handler, the Dispatcher); the generated programs emit the same call
// (src/codegen/cuda_wrapper_run.cpp). Internal header: <cuda.h> stays out of the public ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "core/cuda_driver.h"
#include "ktune/core/launch_spec.h"
#include "ktune/core/status.h"

namespace ktune {

// The most tensor maps one launch carries (the launchers keep them on the stack).
inline constexpr std::size_t kMaxTensorMaps = 4;

// Encodes each of `maps` into out[i] with the address of argument maps[i].arg from `args` (a
// device address per problem argument, 0 for scalars), or of `workspace` + workspace_offset
// for TensorMapDesc::kWorkspace. kInvalidArgument when a map names no buffer argument (or the
// workspace when there is none), is not a 2-D 16-bit view the kernels use, or its address or
// row stride is not a multiple of 16 bytes (TMA's rules); the driver's own refusals come back
// with its message.
[[nodiscard]] Status encode_tensor_maps(const CudaDriver& cu, std::span<const TensorMapDesc> maps,
                                        std::span<const CUdeviceptr> args, CUdeviceptr workspace,
                                        CUtensorMap* out);

// The workspace of a launch chain (LaunchSpec::workspace_bytes): the largest any launch of
// `spec`, its `then` launches and theirs asks for; 0 for none.
[[nodiscard]] std::uint64_t chain_workspace_bytes(const LaunchSpec& spec);

// Device memory that frees itself: a launch chain's workspace, shared by its launchers.
class CudaScratch {
 public:
  [[nodiscard]] static Result<std::shared_ptr<CudaScratch>> allocate(const CudaDriver& cu,
                                                                     std::uint64_t bytes);
  // The workspace of `spec`'s chain (chain_workspace_bytes), null when it asks for none.
  [[nodiscard]] static Result<std::shared_ptr<CudaScratch>> for_chain(const CudaDriver& cu,
                                                                      const LaunchSpec& spec);
  ~CudaScratch();
  CudaScratch(const CudaScratch&) = delete;
  CudaScratch& operator=(const CudaScratch&) = delete;
  [[nodiscard]] CUdeviceptr address() const { return ptr_; }

 private:
  CudaScratch(const CudaDriver& cu, CUdeviceptr ptr) : cu_(cu), ptr_(ptr) {}
  const CudaDriver& cu_;
  CUdeviceptr ptr_ = 0;
};

// The parameters a cubin launch takes after the problem's (one kernelParams entry per problem
// argument, built by the caller): its tensor maps, encoded into `maps` (kMaxTensorMaps of them),
// then, when `geometry` asks for a workspace, the address of *workspace_slot, set to the
// workspace's address. Written to `out`; returns how many (at most kMaxTensorMaps + 1). The
// storage behind them (`maps`, `workspace_slot`) must outlive the launch call.
[[nodiscard]] Result<std::size_t> trailing_params(const CudaDriver& cu,
                                                  const LaunchGeometry& geometry,
                                                  std::span<const CUdeviceptr> args,
                                                  const CudaScratch* workspace, CUtensorMap* maps,
                                                  CUdeviceptr* workspace_slot, void** out);

}  // namespace ktune
