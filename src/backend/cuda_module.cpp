// CudaKernel: cuModuleLoadData of a cubin read from the code cache, the entry's CUfunction, the
// dynamic shared memory opt-in, cuLaunchKernel. Every driver call is checked; a failure names
// the cubin and the entry.
#include "backend/cuda_module.h"

#include <fmt/format.h>

#include <climits>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "backend/artifact_digest.h"

namespace ktune {
namespace {

// Shared memory a block may use (static + dynamic) before the function must opt in.
constexpr std::uint32_t kDefaultSharedBytes = 48 * 1024;

Result<std::vector<char>> read_cubin(const std::filesystem::path& path) {
  // Checked against the digest recorded when it was compiled, never loaded otherwise.
  Result<std::string> read = read_verified_artifact(path);
  if (!read) {
    return make_error(read.error().code,
                      fmt::format("cannot load the cubin: {}", read.error().message));
  }
  std::vector<char> bytes(read->begin(), read->end());
  if (bytes.size() < 4 || bytes[0] != 0x7f || bytes[1] != 'E' || bytes[2] != 'L' ||
      bytes[3] != 'F') {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("load '{}': not a cubin (no ELF header; {} bytes)", path.string(),
                                  bytes.size()));
  }
  return bytes;
}

// The driver's failure, prefixed with what was being loaded.
Error load_error(const CudaDriver& cu, CUresult r, const char* what,
                 const std::filesystem::path& cubin, const std::string& entry) {
  Status s = cuda_status(cu, r, what);
  return Error{s.error().code,
               fmt::format("load '{}' entry '{}': {}", cubin.string(), entry, s.error().message)};
}

// The attribute's value, or -1 when the driver does not answer.
int function_attribute(const CudaDriver& cu, CUfunction f, CUfunction_attribute attr) {
  int value = -1;
  if (cu.FuncGetAttribute(&value, attr, f) != CUDA_SUCCESS) return -1;
  return value;
}

}  // namespace

CudaKernel::CudaKernel(const CudaDriver& cu, CUmodule module, CUfunction function,
                       std::uint32_t shared_bytes)
    : cu_(cu), module_(module), function_(function), shared_bytes_(shared_bytes) {}

CudaKernel::~CudaKernel() {
  // After a sticky error the context is gone and this fails; the worker exits then anyway.
  if (module_ != nullptr) (void)cu_.ModuleUnload(module_);
}

Result<std::unique_ptr<CudaKernel>> CudaKernel::load(const CudaDriver& cu,
                                                     const std::filesystem::path& cubin,
                                                     const std::string& entry,
                                                     std::uint32_t shared_bytes) {
  Result<std::vector<char>> image = read_cubin(cubin);
  if (!image) return std::unexpected(image.error());
  return from_image(cu, image->data(), cubin, entry, shared_bytes);
}

Result<std::unique_ptr<CudaKernel>> CudaKernel::from_image(const CudaDriver& cu, const void* image,
                                                           const std::filesystem::path& cubin,
                                                           const std::string& entry,
                                                           std::uint32_t shared_bytes) {
  CUmodule module = nullptr;
  if (CUresult r = cu.ModuleLoadData(&module, image); r != CUDA_SUCCESS) {
    Error e = load_error(cu, r, "ModuleLoadData", cubin, entry);
    if (r == CUDA_ERROR_NO_BINARY_FOR_GPU || r == CUDA_ERROR_INVALID_IMAGE) {
      e.message += "; was it compiled for this GPU's architecture?";
    }
    return std::unexpected(std::move(e));
  }
  // Owns the module from here, so that every failure below unloads it.
  std::unique_ptr<CudaKernel> kernel(new CudaKernel(cu, module, nullptr, shared_bytes));
  if (CUresult r = cu.ModuleGetFunction(&kernel->function_, module, entry.c_str());
      r != CUDA_SUCCESS) {
    Error e = load_error(cu, r, "ModuleGetFunction", cubin, entry);
    if (r == CUDA_ERROR_NOT_FOUND) e.message += "; is the kernel declared extern \"C\"?";
    return std::unexpected(std::move(e));
  }
  int static_shared = 0;
  if (CUresult r = cu.FuncGetAttribute(&static_shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                       kernel->function_);
      r != CUDA_SUCCESS) {
    return std::unexpected(load_error(cu, r, "FuncGetAttribute", cubin, entry));
  }
  // The default allows static + dynamic up to 48 KiB; past it the function must opt in to its
  // dynamic part, and static + dynamic must stay within the device's opt-in maximum.
  if (static_cast<std::uint64_t>(static_shared) + shared_bytes > kDefaultSharedBytes) {
    if (shared_bytes > static_cast<std::uint32_t>(INT_MAX)) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("load '{}' entry '{}': {} bytes of dynamic shared memory",
                                    cubin.string(), entry, shared_bytes));
    }
    if (CUresult r =
            cu.FuncSetAttribute(kernel->function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                static_cast<int>(shared_bytes));
        r != CUDA_SUCCESS) {
      Error e = load_error(cu, r, "FuncSetAttribute", cubin, entry);
      e.message += fmt::format(
          "; cannot opt in to {} bytes of dynamic shared memory ({} static): more than the "
          "device allows a block?",
          shared_bytes, static_shared);
      return std::unexpected(std::move(e));
    }
  }
  return kernel;
}

CUresult CudaKernel::launch(const LaunchGeometry& geometry, CUstream stream, void** params) const {
  for (int i = 0; i < 3; ++i) {
    // cuLaunchKernel takes unsigned int; a larger value must not wrap into a valid launch.
    if (geometry.grid[i] == 0 || geometry.block[i] == 0 || geometry.grid[i] > UINT_MAX ||
        geometry.block[i] > UINT_MAX) {
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  auto u = [](std::uint64_t v) { return static_cast<unsigned int>(v); };
  return cu_.LaunchKernel(function_, u(geometry.grid[0]), u(geometry.grid[1]), u(geometry.grid[2]),
                          u(geometry.block[0]), u(geometry.block[1]), u(geometry.block[2]),
                          geometry.shared_bytes, stream, params, nullptr);
}

std::string CudaKernel::describe() const {
  auto attr = [&](CUfunction_attribute a) { return function_attribute(cu_, function_, a); };
  return fmt::format("regs={} shared={}+{} local={} max_threads={}",
                     attr(CU_FUNC_ATTRIBUTE_NUM_REGS), attr(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES),
                     shared_bytes_, attr(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES),
                     attr(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
}

}  // namespace ktune
