// CudaProblemBuffers: one problem's arguments in GPU memory, mirroring a host ProblemBuffers:
// per buffer argument one allocation of its storage with a redzone on each side, a device-side
// pristine copy of its reset state (inputs seeded, outputs poisoned), and the launch parameters.
// The checks of candidate_check.cpp read the device back: redzones, inputs, outputs.
//
// Internal header (src/): <cuda.h> must not reach include/ktune. The context the buffers were
// allocated in must be current on the calling thread for every call, the destructor included.
//
// Ordering: reset() and the read-backs use the synchronous driver calls, which run on the legacy
// default stream and do not order with a non-blocking stream, so each of them synchronises the
// whole context before it starts and reset() again before it returns. Callers need not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/cuda_driver.h"
#include "ktune/core/problem.h"
#include "ktune/core/status.h"
#include "ktune/tensor/host_buffer.h"
#include "ktune/tensor/problem_buffers.h"

namespace ktune {

// Redzone on each side of every device buffer. 64 KiB catches a write one row (of up to 16 Ki
// f32) past either end; a multiple of 256 keeps every data start 256-byte aligned like
// cuMemAlloc's own pointers (cuBLASLt and vector loads care). The fill byte is the host's
// kRedzoneByte.
inline constexpr std::size_t kCudaRedzoneBytes = std::size_t{64} << 10;

class CudaProblemBuffers {
 public:
  // Copies `host` (as ProblemBuffers::create left it: inputs seeded, outputs poisoned) to the
  // GPU and resets. kIo with the driver's error on failure (CUDA_ERROR_OUT_OF_MEMORY for a
  // problem too big for the GPU); everything allocated so far is freed.
  [[nodiscard]] static Result<std::unique_ptr<CudaProblemBuffers>> create(
      const CudaDriver& cu, const ProblemBuffers& host,
      std::size_t redzone_bytes = kCudaRedzoneBytes);
  // Writes argument `arg`'s reset state into `pristine` (`bytes` of it, already poisoned) on the
  // GPU: create_on_device()'s seeding.
  using DeviceFill =
      std::function<Status(std::size_t arg, CUdeviceptr pristine, std::size_t bytes)>;
  // The same buffers made on the GPU, with no host copy: `poison` fills each buffer's pristine
  // storage with its dtype's poison pattern, then `fill` seeds each input and in-out. Inputs
  // are then compared with their pristine copies on the GPU (CudaChecker::equal);
  // modified_input() has no host copy to compare with and says so.
  [[nodiscard]] static Result<std::unique_ptr<CudaProblemBuffers>> create_on_device(
      const CudaDriver& cu, const Problem& problem, const DeviceFill& poison,
      const DeviceFill& fill, std::size_t redzone_bytes = kCudaRedzoneBytes);
  // The device memory create() holds for `problem`: pristine copies and redzones included.
  [[nodiscard]] static std::size_t device_bytes_for(const Problem& problem,
                                                    std::size_t redzone_bytes = kCudaRedzoneBytes);
  ~CudaProblemBuffers();
  CudaProblemBuffers(const CudaProblemBuffers&) = delete;
  CudaProblemBuffers& operator=(const CudaProblemBuffers&) = delete;

  [[nodiscard]] const Problem& problem() const { return problem_; }
  // kernelParams for cuLaunchKernel: one pointer per argument, to its CUdeviceptr (the view's
  // first element: data start + offset) or to the scalar's value stored as its dtype.
  [[nodiscard]] void** params() { return params_.data(); }
  // One per argument: the view's first element, 0 for scalars (CublasGemmRunner::run's layout).
  [[nodiscard]] const std::vector<CUdeviceptr>& device_args() const { return ptrs_; }
  [[nodiscard]] std::size_t redzone_bytes() const { return redzone_bytes_; }

  // Every buffer back to its pristine contents (DtoD, so cheap for big problems), redzones
  // refilled. Work queued on any stream of the context finishes first.
  [[nodiscard]] Status reset();
  // Only the outputs (poisoned) and in-outs (seeded) back to their pristine contents, before
  // each timed run; inputs and redzones stay as the last run left them for the next check.
  // Enqueued on `stream`, in order with the runs there: no synchronisation.
  [[nodiscard]] Status reset_outputs(CUstream stream);
  // "C (after the end)", "A (before the start)": each damaged redzone.
  [[nodiscard]] Result<std::vector<std::string>> redzone_violations() const;
  // Every redzone (two per buffer: before its storage, after it) with its name as
  // redzone_violations() gives it, and an intact one on the device, for a comparison there
  // (CudaChecker::equal_each).
  struct Zone {
    CUdeviceptr at = 0;
    std::string name;
  };
  [[nodiscard]] std::vector<Zone> redzones() const;
  [[nodiscard]] CUdeviceptr intact_redzone() const { return intact_redzone_; }
  // The first kIn argument whose bytes differ from the seeded contents (in-outs are outputs).
  [[nodiscard]] Result<std::optional<std::string>> modified_input() const;
  // Each out/inout argument's storage bytes into (*outputs)[arg] (resized to the argument
  // count; in and scalar entries left empty), reusing buffers of the right size: what
  // compare() and the reference's ReferenceOutputs take.
  [[nodiscard]] Status copy_outputs_to_host(std::vector<HostBuffer>* outputs) const;

  // For checks on the device (device/cuda/cuda_check.h): argument `arg`'s data start (its storage,
  // before the view's offset), its pristine copy and its storage bytes; 0 for scalars.
  [[nodiscard]] CUdeviceptr storage(std::size_t arg) const;
  [[nodiscard]] CUdeviceptr pristine(std::size_t arg) const { return args_[arg].pristine; }
  [[nodiscard]] std::size_t storage_bytes(std::size_t arg) const { return args_[arg].bytes; }
  // Keeps a device copy of every output as it is now (after the reference ran), which
  // reference_output() then returns; 0 before, and for other arguments.
  [[nodiscard]] Status keep_outputs_as_reference();
  [[nodiscard]] CUdeviceptr reference_output(std::size_t arg) const { return args_[arg].reference; }
  // Output `arg`'s kept reference (its storage bytes) read back into *out; kInternal when none
  // was kept.
  [[nodiscard]] Status copy_reference_to_host(std::size_t arg, HostBuffer* out) const;

 private:
  struct Arg {
    CUdeviceptr base = 0;       // redzone, data, redzone; 0 for scalars
    CUdeviceptr pristine = 0;   // `bytes` of reset state; 0 when bytes == 0
    CUdeviceptr reference = 0;  // outputs: the reference's result (keep_outputs_as_reference)
    std::size_t bytes = 0;      // the storage bytes of the TensorSpec
    HostBuffer seeded;          // kIn only: the seeded bytes, for modified_input() (create())
  };
  CudaProblemBuffers(const CudaDriver& cu, Problem problem, std::size_t redzone_bytes);
  // create()'s allocation of every buffer (redzones, pristine copy) and of the scalars'
  // parameters from `scalar`; `seed_pristine` then writes each buffer's pristine bytes.
  [[nodiscard]] static Result<std::unique_ptr<CudaProblemBuffers>> allocate(
      const CudaDriver& cu, const Problem& problem, std::size_t redzone_bytes,
      const std::function<std::uint64_t(std::size_t)>& scalar,
      const std::function<Status(std::size_t, Arg&)>& seed_pristine);
  [[nodiscard]] CUdeviceptr data(const Arg& a) const { return a.base + redzone_bytes_; }

  const CudaDriver& cu_;
  Problem problem_;
  std::size_t redzone_bytes_;
  CUdeviceptr intact_redzone_ = 0;      // redzone_bytes_ of the fill, never handed out
  std::vector<Arg> args_;               // by argument index
  std::vector<std::uint64_t> scalars_;  // by argument index: the value's bytes
  std::vector<CUdeviceptr> ptrs_;       // by argument index
  std::vector<void*> params_;           // by argument index
};

}  // namespace ktune
