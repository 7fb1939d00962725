// encode_tensor_maps (cuda_tensor_map.h).
#include "backend/cuda_tensor_map.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace ktune {
namespace {

Result<CUtensorMapSwizzle> swizzle_of(std::uint32_t bytes) {
  switch (bytes) {
    case 0:
      return CU_TENSOR_MAP_SWIZZLE_NONE;
    case 32:
      return CU_TENSOR_MAP_SWIZZLE_32B;
    case 64:
      return CU_TENSOR_MAP_SWIZZLE_64B;
    case 128:
      return CU_TENSOR_MAP_SWIZZLE_128B;
    default:
      return make_error(
          ErrorCode::kInvalidArgument,
          fmt::format("tensor map: swizzle of {} bytes; expected 0, 32, 64 or 128", bytes));
  }
}

}  // namespace

Status encode_tensor_maps(const CudaDriver& cu, std::span<const TensorMapDesc> maps,
                          std::span<const CUdeviceptr> args, CUdeviceptr workspace,
                          CUtensorMap* out) {
  if (maps.size() > kMaxTensorMaps) {
    return make_error(
        ErrorCode::kInvalidArgument,
        fmt::format("a launch with {} tensor maps; at most {}", maps.size(), kMaxTensorMaps));
  }
  for (std::size_t i = 0; i < maps.size(); ++i) {
    const TensorMapDesc& t = maps[i];
    CUdeviceptr address = 0;
    if (t.arg == TensorMapDesc::kWorkspace) {
      if (workspace == 0) {
        return make_error(ErrorCode::kInvalidArgument,
                          fmt::format("tensor map {}: the workspace, but the launch has none", i));
      }
      address = workspace + t.workspace_offset;
    } else if (t.arg < 0 || static_cast<std::size_t>(t.arg) >= args.size() || args[t.arg] == 0) {
      return make_error(
          ErrorCode::kInvalidArgument,
          fmt::format("tensor map {}: argument {} is not a buffer of the launch", i, t.arg));
    } else {
      address = args[t.arg];
    }
    if (t.element_bytes != 2 || address % 16 != 0 || t.row_stride_bytes % 16 != 0 ||
        t.dims[0] == 0 || t.dims[1] == 0 || t.box[0] == 0 || t.box[1] == 0) {
      return make_error(
          ErrorCode::kInvalidArgument,
          fmt::format("tensor map {} of argument {}: expected 16-bit elements, a 16-byte aligned "
                      "address and row stride, non-empty dims and box; got {}-byte elements, "
                      "address {:#x}, row stride {} bytes, dims {}x{}, box {}x{}",
                      i, t.arg, t.element_bytes, address, t.row_stride_bytes, t.dims[0], t.dims[1],
                      t.box[0], t.box[1]));
    }
    Result<CUtensorMapSwizzle> swizzle = swizzle_of(t.swizzle_bytes);
    if (!swizzle) return std::unexpected(swizzle.error());
    const cuuint64_t dims[2] = {t.dims[0], t.dims[1]};
    const cuuint64_t strides[1] = {t.row_stride_bytes};
    const cuuint32_t box[2] = {t.box[0], t.box[1]};
    const cuuint32_t element_strides[2] = {1, 1};
    // The element type only sizes the copy (no conversion): 16-bit unsigned serves f16 and bf16.
    const CUresult r = cu.TensorMapEncodeTiled(
        &out[i], CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, reinterpret_cast<void*>(address), dims, strides,
        box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, *swizzle,
        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (Status s = cuda_status(cu, r, "TensorMapEncodeTiled"); !s) {
      return make_error(
          s.error().code,
          fmt::format("tensor map {} of argument {} (dims {}x{}, box {}x{}): {}", i, t.arg,
                      t.dims[0], t.dims[1], t.box[0], t.box[1], s.error().message));
    }
  }
  return {};
}

std::uint64_t chain_workspace_bytes(const LaunchSpec& spec) {
  std::uint64_t bytes = spec.workspace_bytes;
  for (const LaunchSpec& t : spec.then) bytes = std::max(bytes, chain_workspace_bytes(t));
  return bytes;
}

Result<std::shared_ptr<CudaScratch>> CudaScratch::allocate(const CudaDriver& cu,
                                                           std::uint64_t bytes) {
  CUdeviceptr ptr = 0;
  if (Status s = cuda_status(cu, cu.MemAlloc(&ptr, bytes), "MemAlloc (launch workspace)"); !s) {
    return std::unexpected(s.error());
  }
  return std::shared_ptr<CudaScratch>(new CudaScratch(cu, ptr));
}

Result<std::shared_ptr<CudaScratch>> CudaScratch::for_chain(const CudaDriver& cu,
                                                            const LaunchSpec& spec) {
  const std::uint64_t bytes = chain_workspace_bytes(spec);
  if (bytes == 0) return std::shared_ptr<CudaScratch>();
  return allocate(cu, bytes);
}

CudaScratch::~CudaScratch() { (void)cu_.MemFree(ptr_); }

Result<std::size_t> trailing_params(const CudaDriver& cu, const LaunchGeometry& geometry,
                                    std::span<const CUdeviceptr> args, const CudaScratch* workspace,
                                    CUtensorMap* maps, CUdeviceptr* workspace_slot, void** out) {
  *workspace_slot = workspace ? workspace->address() : 0;
  const std::vector<TensorMapDesc>& descs = geometry.tensor_maps;
  if (Status s = encode_tensor_maps(cu, descs, args, *workspace_slot, maps); !s) {
    return std::unexpected(s.error());
  }
  std::size_t n = 0;
  for (std::size_t i = 0; i < descs.size(); ++i) out[n++] = &maps[i];
  if (geometry.workspace_bytes > 0) {
    if (*workspace_slot == 0) {
      return make_error(ErrorCode::kInvalidArgument,
                        "a launch that asks for a workspace, but its chain has none");
    }
    out[n++] = workspace_slot;
  }
  return n;
}

}  // namespace ktune
