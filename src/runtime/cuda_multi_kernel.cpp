// CudaTrial: the device half of CudaMultiKernel's pick, through the driver API (core's
// cuda_driver: libcuda opened at run time), in the caller's current context.
#include "ktune/runtime/cuda_multi_kernel.h"

#include <cuda.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/cuda_driver.h"

namespace ktune::detail {
namespace {

#define KTUNE_TRIAL_CU(call)                                      \
  do {                                                            \
    if (CUresult r_ = cu.call; r_ != CUDA_SUCCESS) {              \
      return std::unexpected(cuda_status(cu, r_, #call).error()); \
    }                                                             \
  } while (0)

Result<const CudaDriver*> driver() {
  Result<const CudaDriver*> cu = cuda_driver();
  if (!cu) {
    return make_error(ErrorCode::kUnavailable,
                      fmt::format("CudaMultiKernel: no CUDA driver: {}", cu.error().message));
  }
  return cu;
}

}  // namespace

struct CudaTrial::Clone {
  CUdeviceptr from = 0;
  CUdeviceptr pristine = 0;
  CUdeviceptr work = 0;
  std::size_t bytes = 0;
  ArgUse use = ArgUse::kInOut;
  DType dtype = DType::kF32;
};

CudaTrial::CudaTrial(CUstream_st* stream) : stream_(stream) {}

CudaTrial::~CudaTrial() {
  Result<const CudaDriver*> cu = cuda_driver();
  if (!cu) return;
  for (const Clone& c : clones_) {
    if (c.pristine != 0) (void)(*cu)->MemFree(c.pristine);
    if (c.work != 0) (void)(*cu)->MemFree(c.work);
  }
}

Result<std::unique_ptr<CudaTrial>> CudaTrial::create(CUstream_st* stream) {
  Result<const CudaDriver*> cu = driver();
  if (!cu) return std::unexpected(cu.error());
  return std::unique_ptr<CudaTrial>(new CudaTrial(stream));
}

Result<std::string> CudaTrial::device_fingerprint() {
  Result<const CudaDriver*> drv = driver();
  if (!drv) return std::unexpected(drv.error());
  const CudaDriver& cu = **drv;
  CUdevice device = 0;
  if (CUresult r = cu.CtxGetDevice(&device); r != CUDA_SUCCESS) {
    return make_error(ErrorCode::kUnavailable,
                      fmt::format("CudaMultiKernel: no current CUDA context ({}); create one "
                                  "(cudaSetDevice and any runtime call, or cuCtxSetCurrent) "
                                  "before the MultiKernel",
                                  cuda_status(cu, r, "CtxGetDevice").error().message));
  }
  Result<CudaDeviceInfo> info = cuda_device_info(static_cast<int>(device));
  if (!info) return std::unexpected(info.error());
  return "cuda: " + info->fingerprint();
}

Result<void*> CudaTrial::clone(const void* from, std::size_t bytes, ArgUse use, DType dtype) {
  const CudaDriver& cu = **cuda_driver();
  Clone c;
  c.from = reinterpret_cast<CUdeviceptr>(from);
  c.bytes = bytes;
  c.use = use;
  c.dtype = dtype;
  // Owned from here on: the destructor frees what was allocated when a step below fails.
  clones_.push_back(c);
  Clone& owned = clones_.back();
  KTUNE_TRIAL_CU(MemAlloc(&owned.pristine, bytes));
  KTUNE_TRIAL_CU(MemAlloc(&owned.work, bytes));
  // The caller's data as its stream leaves it: what was enqueued before the call comes first.
  KTUNE_TRIAL_CU(StreamSynchronize(stream_));
  KTUNE_TRIAL_CU(MemcpyDtoD(owned.pristine, owned.from, bytes));
  return reinterpret_cast<void*>(owned.work);
}

Status CudaTrial::restore(bool poison_outputs) {
  const CudaDriver& cu = **cuda_driver();
  KTUNE_TRIAL_CU(StreamSynchronize(stream_));
  for (const Clone& c : clones_) {
    if (!(poison_outputs && c.use == ArgUse::kOut)) {
      KTUNE_TRIAL_CU(MemcpyDtoD(c.work, c.pristine, c.bytes));
      continue;
    }
    const std::size_t size = dtype_size(c.dtype);
    const std::uint64_t word = poison_bits(c.dtype);
    const std::size_t n = c.bytes / size;
    switch (size) {
      case 1:
        KTUNE_TRIAL_CU(MemsetD8(c.work, static_cast<unsigned char>(word), n));
        break;
      case 2:
        KTUNE_TRIAL_CU(MemsetD16(c.work, static_cast<unsigned short>(word), n));
        break;
      case 4:
        KTUNE_TRIAL_CU(MemsetD32(c.work, static_cast<unsigned int>(word), n));
        break;
      default:  // 8 bytes: the two halves of each word, as 32-bit words where they are equal
        if ((word >> 32) == (word & 0xffffffffu)) {
          KTUNE_TRIAL_CU(MemsetD32(c.work, static_cast<unsigned int>(word), 2 * n));
        } else {
          std::vector<std::uint64_t> host(n, word);
          KTUNE_TRIAL_CU(MemcpyHtoD(c.work, host.data(), n * size));
        }
    }
    // Bytes past the last whole element keep the caller's.
    if (n * size < c.bytes) {
      KTUNE_TRIAL_CU(MemcpyDtoD(c.work + n * size, c.pristine + n * size, c.bytes - n * size));
    }
  }
  KTUNE_TRIAL_CU(CtxSynchronize());  // the synchronous copies and memsets are done
  return {};
}

Status CudaTrial::finish() {
  const CudaDriver& cu = **cuda_driver();
  KTUNE_TRIAL_CU(StreamSynchronize(stream_));
  return {};
}

Result<std::vector<HostBuffer>> CudaTrial::read() const {
  const CudaDriver& cu = **cuda_driver();
  std::vector<HostBuffer> out;
  for (const Clone& c : clones_) {
    if (c.use == ArgUse::kScratch) continue;
    out.push_back(HostBuffer::allocate(c.bytes, 0));
    KTUNE_TRIAL_CU(MemcpyDtoH(out.back().data(), c.work, c.bytes));
  }
  return out;
}

std::vector<ClonedOutput> CudaTrial::views(const std::vector<HostBuffer>& read) const {
  std::vector<ClonedOutput> out;
  std::size_t k = 0;
  for (const Clone& c : clones_) {
    if (c.use == ArgUse::kScratch) continue;
    out.push_back({read[k].data(), read[k].bytes(), c.dtype});
    ++k;
  }
  return out;
}

Result<BenchStats> CudaTrial::time(const std::function<void()>& enqueue,
                                   const BenchOptions& options) {
  const CudaDriver& cu = **cuda_driver();
  CUstream stream = stream_;
  CUevent start = nullptr, stop = nullptr;
  KTUNE_TRIAL_CU(EventCreate(&start, CU_EVENT_DEFAULT));
  if (CUresult r = cu.EventCreate(&stop, CU_EVENT_DEFAULT); r != CUDA_SUCCESS) {
    (void)cu.EventDestroy(start);
    return std::unexpected(cuda_status(cu, r, "EventCreate").error());
  }
  const auto timed = [&]() -> Result<BenchStats> {
    for (int i = 0; i < options.warmup_runs; ++i) enqueue();
    KTUNE_TRIAL_CU(StreamSynchronize(stream));
    std::vector<double> samples;
    double total_ms = 0;
    while (static_cast<int>(samples.size()) < std::max(1, options.max_runs)) {
      KTUNE_TRIAL_CU(EventRecord(start, stream));
      enqueue();
      KTUNE_TRIAL_CU(EventRecord(stop, stream));
      KTUNE_TRIAL_CU(EventSynchronize(stop));
      float ms = 0;
      KTUNE_TRIAL_CU(EventElapsedTime(&ms, start, stop));
      samples.push_back(static_cast<double>(ms) * 1e6);
      total_ms += ms;
      if (static_cast<int>(samples.size()) >= options.min_runs && total_ms >= options.budget_ms)
        break;
    }
    return compute_stats(std::move(samples));
  };
  Result<BenchStats> stats = timed();
  (void)cu.EventDestroy(start);
  (void)cu.EventDestroy(stop);
  return stats;
}

}  // namespace ktune::detail
