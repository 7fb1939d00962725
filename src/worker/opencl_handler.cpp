// The OpenCL handler: one context with an in-order profiling queue on the device that
// $KTUNE_OPENCL_DEVICE names (one worker per device), programs cached by artifact path, and the
// problem's buffers on the device with redzones.
//
// Each buffer argument is one cl_mem of redzone + data + redzone; the kernel gets a sub-buffer
// of the data (its origin a multiple of CL_DEVICE_MEM_BASE_ADDR_ALIGN, which the redzone size
// is rounded to). A checked run uploads the host ProblemBuffers (inputs seeded, outputs
// poisoned), refills the redzones, launches, waits, reads every buffer back and checks the
// redzones, so that check_candidate() verifies exactly as on the CPU. Timing: profiling events
// (END - START) on the in-order queue, through OpenCLBenchmarker.
//
// The reference: a file written by the parent (request.expected), or a launch of the reference
// kernel in this worker (request.reference) before the first candidate of a problem.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend/opencl_api.h"
#include "bench/opencl_benchmarker.h"
#include "bench/candidate_check.h"
#include "worker/device_handler.h"
#include "ktune/tensor/problem_buffers.h"

namespace ktune {
namespace {

constexpr std::size_t kMaxFlushBytes = 64u << 20;

bool is_buffer(const ProblemArg& a) { return a.param.role != ArgRole::kScalar; }

// One buffer argument on the device: `whole` holds redzone + data + redzone, `data` is the
// sub-buffer the kernel sees.
struct DeviceBuffer {
  cl_mem whole = nullptr;
  cl_mem data = nullptr;
  std::size_t redzone = 0;
  std::size_t bytes = 0;  // the storage, offset included
};

class DeviceBuffers {
 public:
  DeviceBuffers(const OpenCLContext& ctx) : ctx_(&ctx) {}
  DeviceBuffers(DeviceBuffers&& o) noexcept
      : ctx_(o.ctx_), bufs_(std::move(o.bufs_)), names_(std::move(o.names_)) {
    o.bufs_.clear();
  }
  DeviceBuffers(const DeviceBuffers&) = delete;
  DeviceBuffers& operator=(const DeviceBuffers&) = delete;
  ~DeviceBuffers() {
    for (DeviceBuffer& b : bufs_) {
      if (b.data) ctx_->api().ReleaseMemObject(b.data);
      if (b.whole) ctx_->api().ReleaseMemObject(b.whole);
    }
  }

  // One per argument of `host`'s problem (empty entries for scalars).
  Status allocate(const ProblemBuffers& host) {
    const OpenCLApi& cl = ctx_->api();
    const std::size_t align = ctx_->info().base_addr_align_bytes;
    const std::size_t rz = (kDefaultRedzoneBytes + align - 1) / align * align;
    const Problem& p = host.problem();
    bufs_.resize(p.args.size());
    names_.resize(p.args.size());
    for (std::size_t i = 0; i < p.args.size(); ++i) {
      names_[i] = p.args[i].param.name;
      if (!is_buffer(p.args[i])) continue;
      DeviceBuffer& b = bufs_[i];
      b.redzone = rz;
      b.bytes = host.buffer(i).bytes();
      const std::size_t data_bytes = std::max<std::size_t>(b.bytes, 1);
      cl_int r = CL_SUCCESS;
      b.whole =
          cl.CreateBuffer(ctx_->context(), CL_MEM_READ_WRITE, 2 * rz + data_bytes, nullptr, &r);
      if (Status s = cl_status(r, "clCreateBuffer"); !s) return s;
      cl_buffer_region region{rz, data_bytes};
      b.data =
          cl.CreateSubBuffer(b.whole, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &r);
      if (Status s = cl_status(r, "clCreateSubBuffer"); !s) return s;
    }
    return {};
  }

  [[nodiscard]] const cl_mem* data(std::size_t arg) const { return &bufs_[arg].data; }

  // Redzones refilled, data written from the host buffers' storage.
  Status upload(const ProblemBuffers& host) {
    const OpenCLApi& cl = ctx_->api();
    const cl_uchar pattern = kRedzoneByte;
    for (std::size_t i = 0; i < bufs_.size(); ++i) {
      DeviceBuffer& b = bufs_[i];
      if (!b.whole) continue;
      const std::size_t tail = b.redzone + std::max<std::size_t>(b.bytes, 1);
      if (Status s = cl_status(cl.EnqueueFillBuffer(ctx_->queue(), b.whole, &pattern, 1, 0,
                                                    b.redzone, 0, nullptr, nullptr),
                               "clEnqueueFillBuffer");
          !s) {
        return s;
      }
      if (Status s = cl_status(cl.EnqueueFillBuffer(ctx_->queue(), b.whole, &pattern, 1, tail,
                                                    b.redzone, 0, nullptr, nullptr),
                               "clEnqueueFillBuffer");
          !s) {
        return s;
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

  // Every buffer's data read back into the host storage (so that modified_input() and the
  // output checks see the device's bytes); names of changed redzones into `violations`.
  Status download(ProblemBuffers& host, std::vector<std::string>* violations) {
    const OpenCLApi& cl = ctx_->api();
    const Problem& p = host.problem();
    std::vector<unsigned char> zone;
    for (std::size_t i = 0; i < bufs_.size(); ++i) {
      DeviceBuffer& b = bufs_[i];
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
        if (Status s =
                cl_status(cl.EnqueueReadBuffer(ctx_->queue(), b.whole, CL_TRUE, offsets[side],
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

 private:
  const OpenCLContext* ctx_;
  std::vector<DeviceBuffer> bufs_;
  std::vector<std::string> names_;
};

// A kernel object of a built program; owns its cl_kernel.
struct Kernel {
  const OpenCLApi* api = nullptr;
  cl_kernel kernel = nullptr;
  Kernel(const OpenCLApi* a, cl_kernel k) : api(a), kernel(k) {}
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;
  ~Kernel() {
    if (kernel) api->ReleaseKernel(kernel);
  }
};

class OpenCLHandler final : public DeviceHandler {
 public:
  BenchmarkResponse handle(const BenchmarkRequest& request) override {
    BenchmarkResponse response;
    response.id = request.id;
    auto answer = [&](Outcome outcome, std::string message) {
      response.outcome = outcome;
      response.message = std::move(message);
      // A failed enqueue or wait may leave the context unusable (a GPU's lost context): the
      // next candidate gets a fresh worker.
      response.restart = outcome == Outcome::kLaunchError;
      return response;
    };
    if (Status s = open(); !s) {
      return answer(Outcome::kUnsupported,
                    fmt::format("{}: no OpenCL device: {}", request.candidate, s.error().message));
    }
    Result<cl_kernel> kernel = load(request.launch);
    if (!kernel) {
      return answer(Outcome::kLoadError,
                    fmt::format("{}: {}", request.candidate, kernel.error().message));
    }
    Result<Prepared*> prepared = prepare(request);
    if (!prepared) {
      return answer(Outcome::kUnsupported,
                    fmt::format("{}: no reference to verify against: {}", request.candidate,
                                prepared.error().message));
    }
    Prepared& pr = **prepared;
    const LaunchSpec& spec = request.launch;

    if (request.verify) {
      std::vector<std::string> violations;
      const KernelFn fn = [&](void* const*) { return checked_run(pr, *kernel, spec, &violations); };
      CheckResult check = check_candidate(fn, pr.host, pr.reference ? &*pr.reference : nullptr);
      if (!violations.empty()) {
        return answer(Outcome::kRedzoneViolation,
                      fmt::format("wrote outside the buffer of {}", fmt::join(violations, ", ")));
      }
      if (check.outcome != Outcome::kOk) return answer(check.outcome, std::move(check.message));
    }
    if (!request.measure) return response;

    pr.host.reset();
    if (Status s = pr.device.upload(pr.host); !s)
      return answer(Outcome::kLaunchError, s.error().message);
    if (Status s = set_args(pr, *kernel); !s)
      return answer(Outcome::kLaunchError, s.error().message);
    OpenCLBenchmarker bench(request.bench);
    Result<BenchStats> stats = bench.measure([&] { return timed_launch(*kernel, spec); },
                                             [&] { return flush(request.bench); });
    if (!stats) return answer(Outcome::kLaunchError, stats.error().message);
    response.stats = *stats;
    return response;
  }

 private:
  struct Prepared {
    std::string key;
    ProblemBuffers host;
    DeviceBuffers device;
    std::optional<ReferenceOutputs> reference;
  };

  Status open() {
    if (ctx_) return {};
    Result<OpenCLDeviceInfo> info = opencl_select_device("");
    if (!info) return std::unexpected(info.error());
    Result<OpenCLContext> ctx = OpenCLContext::create(*info);
    if (!ctx) return std::unexpected(ctx.error());
    ctx_.emplace(std::move(*ctx));
    return {};
  }

  Result<cl_kernel> load(const LaunchSpec& spec) {
    const std::string key = spec.artifact.string() + "#" + spec.entry;
    if (auto it = kernels_.find(key); it != kernels_.end()) return it->second->kernel;
    auto pit = programs_.find(spec.artifact.string());
    if (pit == programs_.end()) {
      Result<OpenCLProgram> program = load_opencl_artifact(*ctx_, spec.artifact.string());
      if (!program) return std::unexpected(program.error());
      pit = programs_.emplace(spec.artifact.string(), std::move(*program)).first;
    }
    cl_int r = CL_SUCCESS;
    cl_kernel k = ctx_->api().CreateKernel(pit->second.get(), spec.entry.c_str(), &r);
    if (r != CL_SUCCESS) {
      return make_error(ErrorCode::kIo,
                        fmt::format("clCreateKernel '{}': {}", spec.entry, cl_error_name(r)));
    }
    kernels_.emplace(key, std::make_unique<Kernel>(&ctx_->api(), k));
    return k;
  }

  Result<Prepared*> prepare(const BenchmarkRequest& request) {
    const std::string key = fmt::format(
        "{} seed={} expected={} reference={}", request.problem.key(), request.seed,
        request.expected.string(), request.reference ? request.reference->artifact.string() : "");
    if (prepared_ && prepared_->key == key) return &*prepared_;
    prepared_.reset();  // free the last problem's memory first
    for (const ProblemArg& a : request.problem.args) {
      if (!is_buffer(a)) continue;
      const std::size_t off = a.tensor.offset * dtype_size(a.param.dtype);
      if (off != 0) {
        return make_error(ErrorCode::kInvalidArgument,
                          fmt::format("tensor {}: offset {} elements; the OpenCL handler passes "
                                      "buffers without offsets, expected 0",
                                      a.param.name, a.tensor.offset));
      }
    }
    Prepared pr{key, ProblemBuffers::create(request.problem, request.seed), DeviceBuffers(*ctx_),
                std::nullopt};
    if (Status s = pr.device.allocate(pr.host); !s) return std::unexpected(s.error());
    if (!request.expected.empty()) {
      auto ref = read_reference_file(request.expected, request.problem, request.tolerance);
      if (!ref) return std::unexpected(ref.error());
      pr.reference = std::move(*ref);
    } else if (request.reference) {
      Result<cl_kernel> k = load(*request.reference);
      if (!k) return std::unexpected(k.error());
      std::vector<std::string> violations;
      const LaunchSpec& spec = *request.reference;
      const KernelFn fn = [&](void* const*) { return checked_run(pr, *k, spec, &violations); };
      const Tolerance* tol = request.tolerance ? &*request.tolerance : nullptr;
      Result<ReferenceOutputs> ref = run_reference(fn, pr.host, tol);
      if (!violations.empty()) {
        return make_error(
            ErrorCode::kInvalidArgument,
            fmt::format("reference wrote outside the buffer of {}", fmt::join(violations, ", ")));
      }
      if (!ref) return std::unexpected(ref.error());
      pr.reference = std::move(*ref);
    }
    prepared_.emplace(std::move(pr));
    return &*prepared_;
  }

  Status set_args(Prepared& pr, cl_kernel k) {
    const Problem& p = pr.host.problem();
    for (std::size_t i = 0; i < p.args.size(); ++i) {
      const ProblemArg& a = p.args[i];
      cl_int r = is_buffer(a)
                     ? ctx_->api().SetKernelArg(k, static_cast<cl_uint>(i), sizeof(cl_mem),
                                                pr.device.data(i))
                     : ctx_->api().SetKernelArg(k, static_cast<cl_uint>(i),
                                                dtype_size(a.param.dtype), pr.host.args()[i]);
      if (r != CL_SUCCESS) {
        return make_error(ErrorCode::kIo, fmt::format("clSetKernelArg {} ('{}'): {}", i,
                                                      a.param.name, cl_error_name(r)));
      }
    }
    return {};
  }

  Status enqueue(cl_kernel k, const LaunchSpec& spec, cl_event* event) {
    cl_uint dims = 1;
    if (spec.grid[1] > 1 || spec.block[1] > 1) dims = 2;
    if (spec.grid[2] > 1 || spec.block[2] > 1) dims = 3;
    std::size_t global[3], local[3];
    bool any_local = false;
    for (int d = 0; d < 3; ++d) {
      global[d] = spec.grid[d];
      local[d] = spec.block[d];
      any_local = any_local || spec.block[d] > 1;
    }
    cl_int r = ctx_->api().EnqueueNDRangeKernel(ctx_->queue(), k, dims, nullptr, global,
                                                any_local ? local : nullptr, 0, nullptr, event);
    return cl_status(r, "clEnqueueNDRangeKernel");
  }

  // The host buffers (reset by the caller) to the device, one launch, everything back.
  Status checked_run(Prepared& pr, cl_kernel k, const LaunchSpec& spec,
                     std::vector<std::string>* violations) {
    if (Status s = pr.device.upload(pr.host); !s) return s;
    if (Status s = set_args(pr, k); !s) return s;
    if (Status s = enqueue(k, spec, nullptr); !s) return s;
    if (Status s = cl_status(ctx_->api().Finish(ctx_->queue()), "clFinish"); !s) return s;
    return pr.device.download(pr.host, violations);
  }

  Result<double> timed_launch(cl_kernel k, const LaunchSpec& spec) {
    const OpenCLApi& cl = ctx_->api();
    cl_event event = nullptr;
    if (Status s = enqueue(k, spec, &event); !s) return std::unexpected(s.error());
    cl_int r = cl.WaitForEvents(1, &event);
    cl_ulong start = 0, end = 0;
    if (r == CL_SUCCESS) {
      r = cl.GetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof(start), &start,
                                   nullptr);
    }
    if (r == CL_SUCCESS) {
      r = cl.GetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof(end), &end, nullptr);
    }
    cl.ReleaseEvent(event);
    if (Status s = cl_status(r, "kernel event"); !s) return std::unexpected(s.error());
    return static_cast<double>(end - start);
  }

  // Overwrites a scratch buffer as large as the device's global-memory cache (twice, capped).
  Status flush(const BenchOptions& bench) {
    const OpenCLApi& cl = ctx_->api();
    std::size_t bytes = bench.flush_bytes;
    if (bytes == 0) bytes = std::min(2 * ctx_->info().cache_bytes, kMaxFlushBytes);
    if (bytes == 0) return {};
    if (!flush_buffer_ || flush_bytes_ != bytes) {
      if (flush_buffer_) cl.ReleaseMemObject(flush_buffer_);
      cl_int r = CL_SUCCESS;
      flush_buffer_ = cl.CreateBuffer(ctx_->context(), CL_MEM_READ_WRITE, bytes, nullptr, &r);
      if (Status s = cl_status(r, "clCreateBuffer (flush)"); !s) {
        flush_buffer_ = nullptr;
        return s;
      }
      flush_bytes_ = bytes;
    }
    const cl_uint pattern = ++flush_count_;
    if (Status s = cl_status(cl.EnqueueFillBuffer(ctx_->queue(), flush_buffer_, &pattern,
                                                  sizeof(pattern), 0, bytes, 0, nullptr, nullptr),
                             "clEnqueueFillBuffer (flush)");
        !s) {
      return s;
    }
    return cl_status(cl.Finish(ctx_->queue()), "clFinish");
  }

  // Declared first: destroyed last, after everything that holds its handles.
  std::optional<OpenCLContext> ctx_;
  std::map<std::string, OpenCLProgram> programs_;
  std::map<std::string, std::unique_ptr<Kernel>> kernels_;
  std::optional<Prepared> prepared_;
  cl_mem flush_buffer_ = nullptr;
  std::size_t flush_bytes_ = 0;
  cl_uint flush_count_ = 0;

 public:
  ~OpenCLHandler() override {
    prepared_.reset();
    if (flush_buffer_) ctx_->api().ReleaseMemObject(flush_buffer_);
  }
};

}  // namespace

std::unique_ptr<DeviceHandler> make_opencl_handler() { return std::make_unique<OpenCLHandler>(); }

}  // namespace ktune
