// OpenCLBuffers: one problem's buffer arguments on an OpenCL device, each one cl_mem of
// redzone + data + redzone, the kernel getting a sub-buffer of the data (its origin a multiple
// of CL_DEVICE_MEM_BASE_ADDR_ALIGN, which the redzone size is rounded to). The data are
// uploaded from and read back into a host ProblemBuffers, which keeps the seeded inputs, the
// poison and the pristine copies: the host checks then run on what the device wrote.
//
// Internal header (src/): <CL/cl.h> must not reach include/ktune.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "backend/opencl_api.h"
#include "ktune/core/status.h"
#include "ktune/tensor/problem_buffers.h"

namespace ktune {

class OpenCLBuffers {
 public:
  explicit OpenCLBuffers(const OpenCLContext& ctx) : ctx_(&ctx) {}
  OpenCLBuffers(OpenCLBuffers&& o) noexcept;
  OpenCLBuffers(const OpenCLBuffers&) = delete;
  OpenCLBuffers& operator=(const OpenCLBuffers&) = delete;
  ~OpenCLBuffers();

  // One per argument of `host`'s problem (empty entries for scalars).
  [[nodiscard]] Status allocate(const ProblemBuffers& host);
  // The kernel argument of buffer argument `arg`: its data sub-buffer.
  [[nodiscard]] const cl_mem* data(std::size_t arg) const { return &bufs_[arg].data; }
  // Redzones refilled, data written from the host buffers' storage.
  [[nodiscard]] Status upload(const ProblemBuffers& host);
  // Every buffer's data read back into the host storage (so that modified_input() and the
  // output checks see the device's bytes); names of changed redzones into `violations`.
  [[nodiscard]] Status download(ProblemBuffers& host, std::vector<std::string>* violations);

 private:
  // One buffer argument: `whole` holds redzone + data + redzone, `data` is what the kernel sees.
  struct Buffer {
    cl_mem whole = nullptr;
    cl_mem data = nullptr;
    std::size_t redzone = 0;
    std::size_t bytes = 0;  // the storage, offset included
  };
  const OpenCLContext* ctx_;
  std::vector<Buffer> bufs_;
  std::vector<std::string> names_;
};

}  // namespace ktune
