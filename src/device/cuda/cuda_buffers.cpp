// CudaProblemBuffers: allocation, upload, reset by device-to-device copies, and the read-backs
// that verification needs. Every driver call is checked.
#include "device/cuda/cuda_buffers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <utility>

namespace ktune {
namespace {

// Inputs are compared in chunks so that checking a large input needs little host memory.
constexpr std::size_t kCompareChunkBytes = std::size_t{64} << 20;

bool is_buffer(ArgRole role) { return role != ArgRole::kScalar; }
bool is_output(ArgRole role) { return role == ArgRole::kOut || role == ArgRole::kInOut; }

// True when every byte of `bytes` is the redzone fill.
// Redzones rounded up to 256 bytes, so that data(a) keeps cuMemAlloc's alignment.
std::size_t rounded_redzone(std::size_t bytes) {
  return (std::max<std::size_t>(bytes, 256) + 255) / 256 * 256;
}

bool clean(const std::vector<std::uint8_t>& bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b == kRedzoneByte; });
}

}  // namespace

CudaProblemBuffers::CudaProblemBuffers(const CudaDriver& cu, Problem problem,
                                       std::size_t redzone_bytes)
    : cu_(cu), problem_(std::move(problem)), redzone_bytes_(redzone_bytes) {}

CudaProblemBuffers::~CudaProblemBuffers() {
  // After a sticky error these fail; the worker exits then anyway.
  if (intact_redzone_ != 0) (void)cu_.MemFree(intact_redzone_);
  for (const Arg& a : args_) {
    if (a.base != 0) (void)cu_.MemFree(a.base);
    if (a.pristine != 0) (void)cu_.MemFree(a.pristine);
    if (a.reference != 0) (void)cu_.MemFree(a.reference);
  }
}

Result<std::unique_ptr<CudaProblemBuffers>> CudaProblemBuffers::allocate(
    const CudaDriver& cu, const Problem& problem, std::size_t redzone_bytes,
    const std::function<std::uint64_t(std::size_t)>& scalar,
    const std::function<Status(std::size_t, Arg&)>& seed_pristine) {
  redzone_bytes = rounded_redzone(redzone_bytes);
  // Owns every allocation from the first one on, so that a failure below frees them.
  std::unique_ptr<CudaProblemBuffers> b(new CudaProblemBuffers(cu, problem, redzone_bytes));
  const std::vector<ProblemArg>& args = b->problem_.args;
  const std::size_t n = args.size();
  b->args_.resize(n);
  b->scalars_.assign(n, 0);
  b->ptrs_.assign(n, 0);
  b->params_.assign(n, nullptr);
  KTUNE_CU(MemAlloc(&b->intact_redzone_, redzone_bytes));
  KTUNE_CU(MemsetD8(b->intact_redzone_, kRedzoneByte, redzone_bytes));
  for (std::size_t i = 0; i < n; ++i) {
    const ProblemArg& arg = args[i];
    if (!is_buffer(arg.param.role)) {
      // Each scalar is kept in 8 bytes (the value stored as its dtype, then zeros).
      b->scalars_[i] = scalar(i);
      b->params_[i] = &b->scalars_[i];
      continue;
    }
    Arg& a = b->args_[i];
    a.bytes = arg.tensor.storage_bytes();
    KTUNE_CU(MemAlloc(&a.base, a.bytes + 2 * redzone_bytes));
    if (a.bytes > 0) {
      KTUNE_CU(MemAlloc(&a.pristine, a.bytes));
      if (Status s = seed_pristine(i, a); !s) return std::unexpected(s.error());
    }
    b->ptrs_[i] =
        b->data(a) + static_cast<CUdeviceptr>(arg.tensor.offset) * dtype_size(arg.param.dtype);
    b->params_[i] = &b->ptrs_[i];
  }
  KTUNE_CU(CtxSynchronize());
  if (Status s = b->reset(); !s) return std::unexpected(s.error());
  return b;
}

Result<std::unique_ptr<CudaProblemBuffers>> CudaProblemBuffers::create(const CudaDriver& cu,
                                                                       const ProblemBuffers& host,
                                                                       std::size_t redzone_bytes) {
  const Problem& problem = host.problem();
  return allocate(
      cu, problem, redzone_bytes,
      // ProblemBuffers keeps each scalar in 8 bytes; its args() entry points at them.
      [&](std::size_t i) {
        std::uint64_t bits = 0;
        std::memcpy(&bits, host.args()[i], sizeof bits);
        return bits;
      },
      [&](std::size_t i, Arg& a) -> Status {
        const HostBuffer& src = host.buffer(i);
        KTUNE_CHECK(src.bytes() == a.bytes);
        // Pageable memory: returns once staged, before the DMA is done (allocate() syncs).
        KTUNE_CU(MemcpyHtoD(a.pristine, src.data(), a.bytes));
        if (problem.args[i].param.role == ArgRole::kIn) a.seeded = src.clone();
        return {};
      });
}

Result<std::unique_ptr<CudaProblemBuffers>> CudaProblemBuffers::create_on_device(
    const CudaDriver& cu, const Problem& problem, const DeviceFill& poison, const DeviceFill& fill,
    std::size_t redzone_bytes) {
  return allocate(
      cu, problem, redzone_bytes, [&](std::size_t i) { return scalar_bits(problem.args[i]); },
      [&](std::size_t i, Arg& a) -> Status {
        if (Status s = poison(i, a.pristine, a.bytes); !s) return s;
        const ArgRole role = problem.args[i].param.role;
        if (role == ArgRole::kIn || role == ArgRole::kInOut) return fill(i, a.pristine, a.bytes);
        return {};
      });
}

std::size_t CudaProblemBuffers::device_bytes_for(const Problem& problem,
                                                 std::size_t redzone_bytes) {
  redzone_bytes = rounded_redzone(redzone_bytes);
  std::size_t total = 0;
  for (const ProblemArg& arg : problem.args) {
    if (!is_buffer(arg.param.role)) continue;
    total += 2 * arg.tensor.storage_bytes() + 2 * redzone_bytes;
  }
  return total;
}

Status CudaProblemBuffers::reset() {
  const CudaDriver& cu = cu_;
  KTUNE_CU(CtxSynchronize());
  for (const Arg& a : args_) {
    if (a.base == 0) continue;
    if (a.bytes > 0) KTUNE_CU(MemcpyDtoD(data(a), a.pristine, a.bytes));
    KTUNE_CU(MemsetD8(a.base, kRedzoneByte, redzone_bytes_));
    KTUNE_CU(MemsetD8(data(a) + a.bytes, kRedzoneByte, redzone_bytes_));
  }
  // Device-to-device copies and memsets may return before they are done, on the legacy stream
  // that a non-blocking stream does not wait for.
  KTUNE_CU(CtxSynchronize());
  return {};
}

Status CudaProblemBuffers::reset_outputs(CUstream stream) {
  const CudaDriver& cu = cu_;
  for (std::size_t i = 0; i < args_.size(); ++i) {
    const Arg& a = args_[i];
    // Scratch buffers too: poisoned again before each timed run, as before each checked one.
    const ArgRole role = problem_.args[i].param.role;
    if ((is_output(role) || role == ArgRole::kScratch) && a.bytes > 0) {
      KTUNE_CU(MemcpyDtoDAsync(data(a), a.pristine, a.bytes, stream));
    }
  }
  return {};
}

std::vector<CudaProblemBuffers::Zone> CudaProblemBuffers::redzones() const {
  std::vector<Zone> zones;
  for (std::size_t i = 0; i < args_.size(); ++i) {
    const Arg& a = args_[i];
    if (a.base == 0) continue;
    const std::string& name = problem_.args[i].param.name;
    zones.push_back({a.base, fmt::format("{} (before the start)", name)});
    zones.push_back({data(a) + a.bytes, fmt::format("{} (after the end)", name)});
  }
  return zones;
}

Result<std::vector<std::string>> CudaProblemBuffers::redzone_violations() const {
  const CudaDriver& cu = cu_;
  KTUNE_CU(CtxSynchronize());
  std::vector<std::string> names;
  std::vector<std::uint8_t> bytes(redzone_bytes_);
  for (Zone& zone : redzones()) {
    KTUNE_CU(MemcpyDtoH(bytes.data(), zone.at, redzone_bytes_));
    if (!clean(bytes)) names.push_back(std::move(zone.name));
  }
  return names;
}

Result<std::optional<std::string>> CudaProblemBuffers::modified_input() const {
  const CudaDriver& cu = cu_;
  KTUNE_CU(CtxSynchronize());
  std::vector<std::byte> chunk;
  for (std::size_t i = 0; i < args_.size(); ++i) {
    const Arg& a = args_[i];
    if (problem_.args[i].param.role != ArgRole::kIn || a.bytes == 0) continue;
    if (a.seeded.bytes() != a.bytes) {
      return make_error(ErrorCode::kInternal,
                        fmt::format("input {} was seeded on the GPU: it is compared there",
                                    problem_.args[i].param.name));
    }
    chunk.resize(std::min(a.bytes, kCompareChunkBytes));
    for (std::size_t off = 0; off < a.bytes; off += chunk.size()) {
      const std::size_t n = std::min(chunk.size(), a.bytes - off);
      KTUNE_CU(MemcpyDtoH(chunk.data(), data(a) + off, n));
      if (std::memcmp(chunk.data(), a.seeded.data() + off, n) != 0) {
        return std::optional<std::string>(problem_.args[i].param.name);
      }
    }
  }
  return std::optional<std::string>();
}

Status CudaProblemBuffers::copy_outputs_to_host(std::vector<HostBuffer>* outputs) const {
  const CudaDriver& cu = cu_;
  KTUNE_CU(CtxSynchronize());
  outputs->resize(args_.size());
  for (std::size_t i = 0; i < args_.size(); ++i) {
    const Arg& a = args_[i];
    if (!is_output(problem_.args[i].param.role)) continue;
    HostBuffer& out = (*outputs)[i];
    if (out.data() == nullptr || out.bytes() != a.bytes) out = HostBuffer::allocate(a.bytes, 0);
    if (a.bytes > 0) KTUNE_CU(MemcpyDtoH(out.data(), data(a), a.bytes));
  }
  return {};
}

Status CudaProblemBuffers::copy_reference_to_host(std::size_t arg, HostBuffer* out) const {
  const CudaDriver& cu = cu_;
  const Arg& a = args_[arg];
  if (a.reference == 0) {
    return make_error(ErrorCode::kInternal,
                      fmt::format("no reference kept for {}", problem_.args[arg].param.name));
  }
  KTUNE_CU(CtxSynchronize());
  *out = HostBuffer::allocate(a.bytes, 0);
  KTUNE_CU(MemcpyDtoH(out->data(), a.reference, a.bytes));
  return {};
}

CUdeviceptr CudaProblemBuffers::storage(std::size_t arg) const {
  const Arg& a = args_[arg];
  return a.base == 0 ? 0 : data(a);
}

Status CudaProblemBuffers::keep_outputs_as_reference() {
  const CudaDriver& cu = cu_;
  KTUNE_CU(CtxSynchronize());
  for (std::size_t i = 0; i < args_.size(); ++i) {
    Arg& a = args_[i];
    if (!is_output(problem_.args[i].param.role) || a.bytes == 0) continue;
    if (a.reference == 0) KTUNE_CU(MemAlloc(&a.reference, a.bytes));
    KTUNE_CU(MemcpyDtoD(a.reference, data(a), a.bytes));
  }
  KTUNE_CU(CtxSynchronize());
  return {};
}

}  // namespace ktune
