// OpenCLBuffers: allocation, upload with fresh redzones, read-back with the redzone check.
#include "device/opencl/opencl_buffers.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace ktune {
namespace {

bool is_buffer(const ProblemArg& a) { return a.param.role != ArgRole::kScalar; }

}  // namespace

OpenCLBuffers::OpenCLBuffers(OpenCLBuffers&& o) noexcept
    : ctx_(o.ctx_), bufs_(std::move(o.bufs_)), names_(std::move(o.names_)) {
  o.bufs_.clear();
}

OpenCLBuffers::~OpenCLBuffers() {
  for (Buffer& b : bufs_) {
    if (b.data) ctx_->api().ReleaseMemObject(b.data);
    if (b.whole) ctx_->api().ReleaseMemObject(b.whole);
  }
}

Status OpenCLBuffers::allocate(const ProblemBuffers& host) {
  const OpenCLApi& cl = ctx_->api();
  const std::size_t align = ctx_->info().base_addr_align_bytes;
  const std::size_t rz = (kDefaultRedzoneBytes + align - 1) / align * align;
  const Problem& p = host.problem();
  bufs_.resize(p.args.size());
  names_.resize(p.args.size());
  for (std::size_t i = 0; i < p.args.size(); ++i) {
    names_[i] = p.args[i].param.name;
    if (!is_buffer(p.args[i])) continue;
    Buffer& b = bufs_[i];
    b.redzone = rz;
    b.bytes = host.buffer(i).bytes();
    const std::size_t data_bytes = std::max<std::size_t>(b.bytes, 1);
    cl_int r = CL_SUCCESS;
    b.whole = cl.CreateBuffer(ctx_->context(), CL_MEM_READ_WRITE, 2 * rz + data_bytes, nullptr, &r);
    if (Status s = cl_status(r, "clCreateBuffer"); !s) return s;
    cl_buffer_region region{rz, data_bytes};
    b.data =
        cl.CreateSubBuffer(b.whole, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &r);
    if (Status s = cl_status(r, "clCreateSubBuffer"); !s) return s;
  }
  return {};
}

Status OpenCLBuffers::upload(const ProblemBuffers& host) {
  const OpenCLApi& cl = ctx_->api();
  const cl_uchar pattern = kRedzoneByte;
  for (std::size_t i = 0; i < bufs_.size(); ++i) {
    Buffer& b = bufs_[i];
    if (!b.whole) continue;
    const std::size_t tail = b.redzone + std::max<std::size_t>(b.bytes, 1);
    for (std::size_t offset : {std::size_t{0}, tail}) {
      if (Status s = cl_status(cl.EnqueueFillBuffer(ctx_->queue(), b.whole, &pattern, 1, offset,
                                                    b.redzone, 0, nullptr, nullptr),
                               "clEnqueueFillBuffer");
          !s) {
        return s;
      }
    }
    if (b.bytes == 0) continue;
    if (Status s = cl_status(cl.EnqueueWriteBuffer(ctx_->queue(), b.data, CL_TRUE, 0, b.bytes,
                                                   host.buffer(i).data(), 0, nullptr, nullptr),
                             "clEnqueueWriteBuffer");
        !s) {
      return s;
    }
  }
  return {};
}

Status OpenCLBuffers::download(ProblemBuffers& host, std::vector<std::string>* violations) {
  const OpenCLApi& cl = ctx_->api();
  const Problem& p = host.problem();
  std::vector<unsigned char> zone;
  for (std::size_t i = 0; i < bufs_.size(); ++i) {
    Buffer& b = bufs_[i];
    if (!b.whole) continue;
    if (b.bytes > 0) {
      // args() points at storage + offset; the storage start is what the device holds.
      auto* storage = static_cast<std::byte*>(host.args()[i]) -
                      p.args[i].tensor.offset * dtype_size(p.args[i].param.dtype);
      if (Status s = cl_status(cl.EnqueueReadBuffer(ctx_->queue(), b.data, CL_TRUE, 0, b.bytes,
                                                    storage, 0, nullptr, nullptr),
                               "clEnqueueReadBuffer");
          !s) {
        return s;
      }
    }
    const std::size_t offsets[2] = {0, b.redzone + std::max<std::size_t>(b.bytes, 1)};
    const char* where[2] = {"before the start", "after the end"};
    zone.resize(b.redzone);
    for (int side = 0; side < 2; ++side) {
      if (Status s = cl_status(cl.EnqueueReadBuffer(ctx_->queue(), b.whole, CL_TRUE, offsets[side],
                                                    b.redzone, zone.data(), 0, nullptr, nullptr),
                               "clEnqueueReadBuffer");
          !s) {
        return s;
      }
      if (std::any_of(zone.begin(), zone.end(),
                      [](unsigned char c) { return c != kRedzoneByte; })) {
        violations->push_back(fmt::format("{} ({})", names_[i], where[side]));
      }
    }
  }
  return {};
}

}  // namespace ktune
