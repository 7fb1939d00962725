// The OpenCL adapter (opencl_device.h).
#include "device/opencl/opencl_device.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend/opencl_api.h"
#include "device/opencl/opencl_buffers.h"
#include "ktune/tensor/problem_buffers.h"

namespace ktune {
namespace {

constexpr std::size_t kMaxFlushBytes = 64u << 20;

bool is_buffer(const ProblemArg& a) { return a.param.role != ArgRole::kScalar; }

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

// The kernels of a LaunchSpec and its `then` launches, in order, with their work sizes.
struct OpenCLLaunch final : DeviceLaunch {
  struct Step {
    cl_kernel kernel = nullptr;  // owned by the device's cache
    LaunchGeometry geometry;
  };
  std::vector<Step> steps;
};

// The scratch buffer the flush overwrites, kept by the device while its size stays.
class Flush {
 public:
  explicit Flush(const OpenCLContext& ctx) : ctx_(ctx) {}
  Flush(const Flush&) = delete;
  Flush& operator=(const Flush&) = delete;
  ~Flush() {
    if (buffer_) ctx_.api().ReleaseMemObject(buffer_);
  }
  // Overwrites a scratch buffer as large as the device's global-memory cache (twice, capped).
  Status run(const BenchOptions& bench) {
    const OpenCLApi& cl = ctx_.api();
    std::size_t bytes = bench.flush_bytes;
    if (bytes == 0) bytes = std::min(2 * ctx_.info().cache_bytes, kMaxFlushBytes);
    if (bytes == 0) return {};
    if (!buffer_ || bytes_ != bytes) {
      if (buffer_) cl.ReleaseMemObject(buffer_);
      cl_int r = CL_SUCCESS;
      buffer_ = cl.CreateBuffer(ctx_.context(), CL_MEM_READ_WRITE, bytes, nullptr, &r);
      if (Status s = cl_status(r, "clCreateBuffer (flush)"); !s) {
        buffer_ = nullptr;
        return s;
      }
      bytes_ = bytes;
    }
    const cl_uint pattern = ++count_;
    if (Status s = cl_status(cl.EnqueueFillBuffer(ctx_.queue(), buffer_, &pattern, sizeof(pattern),
                                                  0, bytes, 0, nullptr, nullptr),
                             "clEnqueueFillBuffer (flush)");
        !s) {
      return s;
    }
    return cl_status(cl.Finish(ctx_.queue()), "clFinish");
  }

 private:
  const OpenCLContext& ctx_;
  cl_mem buffer_ = nullptr;
  std::size_t bytes_ = 0;
  cl_uint count_ = 0;
};

class OpenCLProblem final : public DeviceProblem {
 public:
  OpenCLProblem(const OpenCLContext& ctx, Flush& flush, ProblemBuffers host)
      : ctx_(ctx), flush_(flush), host_(std::move(host)), device_(ctx) {}
  Status allocate() { return device_.allocate(host_); }

  const Problem& problem() const override { return host_.problem(); }
  Status reset() override {
    host_.reset();
    fetched_ = false;
    violations_.clear();
    return device_.upload(host_);
  }
  Status finish() override { return cl_status(ctx_.api().Finish(ctx_.queue()), "clFinish"); }
  Result<std::vector<std::string>> redzone_violations() override {
    if (Status s = fetch(); !s) return std::unexpected(s.error());
    return violations_;
  }
  Result<std::optional<std::string>> modified_input() override {
    if (Status s = fetch(); !s) return std::unexpected(s.error());
    return host_.modified_input();
  }
  Status read_outputs() override { return fetch(); }
  const std::byte* output(std::size_t arg) const override { return host_.buffer(arg).data(); }

  Status enqueue(const DeviceLaunch& launch) override { return enqueue(launch, nullptr); }
  Result<std::unique_ptr<SampleSource>> timer(const DeviceLaunch& launch,
                                              const BenchOptions& options) override;

  // Enqueues every step; `event` (when given) records the last one.
  Status enqueue(const DeviceLaunch& launch, cl_event* event) {
    const auto& l = static_cast<const OpenCLLaunch&>(launch);
    for (std::size_t i = 0; i < l.steps.size(); ++i) {
      const OpenCLLaunch::Step& step = l.steps[i];
      if (Status s = set_args(step.kernel); !s) return s;
      cl_event* e = i + 1 == l.steps.size() ? event : nullptr;
      if (Status s = enqueue_step(step, e); !s) return s;
    }
    return {};
  }
  [[nodiscard]] Flush& flush() { return flush_; }
  [[nodiscard]] const OpenCLApi& api() const { return ctx_.api(); }

 private:
  // The device's bytes into the host buffers, once per run.
  Status fetch() {
    if (fetched_) return {};
    fetched_ = true;
    return device_.download(host_, &violations_);
  }
  Status set_args(cl_kernel k) {
    const Problem& p = host_.problem();
    for (std::size_t i = 0; i < p.args.size(); ++i) {
      const ProblemArg& a = p.args[i];
      const auto index = static_cast<cl_uint>(i);
      cl_int r = is_buffer(a) ? ctx_.api().SetKernelArg(k, index, sizeof(cl_mem), device_.data(i))
                              : ctx_.api().SetKernelArg(k, index, dtype_size(a.param.dtype),
                                                        host_.args()[i]);
      if (r != CL_SUCCESS) {
        return make_error(ErrorCode::kIo, fmt::format("clSetKernelArg {} ('{}'): {}", i,
                                                      a.param.name, cl_error_name(r)));
      }
    }
    return {};
  }
  Status enqueue_step(const OpenCLLaunch::Step& step, cl_event* event) {
    const LaunchGeometry& g = step.geometry;
    cl_uint dims = 1;
    if (g.grid[1] > 1 || g.block[1] > 1) dims = 2;
    if (g.grid[2] > 1 || g.block[2] > 1) dims = 3;
    std::size_t global[3], local[3];
    bool any_local = false;
    for (int d = 0; d < 3; ++d) {
      global[d] = g.grid[d];
      local[d] = g.block[d];
      any_local = any_local || g.block[d] > 1;
    }
    cl_int r = ctx_.api().EnqueueNDRangeKernel(ctx_.queue(), step.kernel, dims, nullptr, global,
                                               any_local ? local : nullptr, 0, nullptr, event);
    return cl_status(r, "clEnqueueNDRangeKernel");
  }

  const OpenCLContext& ctx_;
  Flush& flush_;
  ProblemBuffers host_;  // seeded inputs, poison, pristine copies; the device's bytes after fetch
  OpenCLBuffers device_;
  bool fetched_ = false;
  std::vector<std::string> violations_;
};

// Profiling events on the in-order queue: each run's END - START.
class OpenCLTimer final : public SampleSource {
 public:
  OpenCLTimer(OpenCLProblem& problem, const DeviceLaunch& launch, const BenchOptions& options)
      : problem_(problem), launch_(launch), options_(options) {}
  Status warm_up(int count) override {
    for (int i = 0; i < count; ++i) {
      if (Result<double> t = timed_run(); !t) return std::unexpected(t.error());
    }
    return {};
  }
  Status sample(int count, std::vector<double>* ns) override {
    for (int i = 0; i < count; ++i) {
      if (options_.flush_cache) {
        if (Status s = problem_.flush().run(options_); !s) return s;
      }
      Result<double> t = timed_run();
      if (!t) return std::unexpected(t.error());
      ns->push_back(*t);
    }
    return {};
  }

 private:
  Result<double> timed_run() {
    const OpenCLApi& cl = problem_.api();
    cl_event event = nullptr;
    if (Status s = problem_.enqueue(launch_, &event); !s) return std::unexpected(s.error());
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

  OpenCLProblem& problem_;
  const DeviceLaunch& launch_;
  BenchOptions options_;
};

Result<std::unique_ptr<SampleSource>> OpenCLProblem::timer(const DeviceLaunch& launch,
                                                           const BenchOptions& options) {
  return std::make_unique<OpenCLTimer>(*this, launch, options);
}

class OpenCLDevice final : public DeviceAdapter {
 public:
  ~OpenCLDevice() override {
    flush_.reset();
    kernels_.clear();
    programs_.clear();
  }
  std::string_view name() const override { return "OpenCL"; }
  Status open() override {
    if (ctx_) return {};
    Result<OpenCLDeviceInfo> info = opencl_select_device("");
    if (!info) return std::unexpected(info.error());
    Result<OpenCLContext> ctx = OpenCLContext::create(*info);
    if (!ctx) return std::unexpected(ctx.error());
    ctx_.emplace(std::move(*ctx));
    flush_ = std::make_unique<Flush>(*ctx_);
    return {};
  }
  Result<std::unique_ptr<DeviceProblem>> allocate(const Problem& problem, std::uint64_t seed,
                                                  DataSet set) override {
    for (const ProblemArg& a : problem.args) {
      if (is_buffer(a) && a.tensor.offset != 0) {
        return make_error(ErrorCode::kInvalidArgument,
                          fmt::format("tensor {}: offset {} elements; the OpenCL device passes "
                                      "buffers without offsets, expected 0",
                                      a.param.name, a.tensor.offset));
      }
    }
    Result<ProblemBuffers> host = ProblemBuffers::try_create(problem, seed, set);
    if (!host) return std::unexpected(host.error());
    auto p = std::make_unique<OpenCLProblem>(*ctx_, *flush_, std::move(*host));
    if (Status s = p->allocate(); !s) return std::unexpected(s.error());
    return std::unique_ptr<DeviceProblem>(std::move(p));
  }
  Result<std::shared_ptr<const DeviceLaunch>> load(const LaunchSpec& spec,
                                                   const Problem& problem) override {
    auto launch = std::make_shared<OpenCLLaunch>();
    for (const LaunchSpec* s = &spec; s != nullptr;) {
      Result<cl_kernel> k = kernel(*s);
      if (!k) return std::unexpected(k.error());
      launch->steps.push_back({*k, LaunchGeometry{s->grid, s->block, s->shared_bytes, {}}});
      if (s->then.size() > 1) {
        return make_error(ErrorCode::kInvalidArgument,
                          "the OpenCL device runs one launch after another, not a tree");
      }
      s = s->then.empty() ? nullptr : &s->then.front();
    }
    (void)problem;
    return std::shared_ptr<const DeviceLaunch>(std::move(launch));
  }
  // Any failure may have cost the context: a fresh worker serves the next request.
  Fault fault(std::string message) override {
    lost_ = true;
    return {std::move(message), true};
  }
  bool lost() const override { return lost_; }

 private:
  Result<cl_kernel> kernel(const LaunchSpec& spec) {
    if (spec.kind != LaunchKind::kOpenCLProgram) {
      return make_error(
          ErrorCode::kUnavailable,
          fmt::format("the OpenCL device cannot run launch kind {}", launch_kind_name(spec.kind)));
    }
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

  // Declared first: destroyed last, after everything that holds its handles.
  std::optional<OpenCLContext> ctx_;
  std::map<std::string, OpenCLProgram> programs_;
  std::map<std::string, std::unique_ptr<Kernel>> kernels_;
  std::unique_ptr<Flush> flush_;
  bool lost_ = false;
};

}  // namespace

std::unique_ptr<DeviceAdapter> make_opencl_device() { return std::make_unique<OpenCLDevice>(); }

}  // namespace ktune
