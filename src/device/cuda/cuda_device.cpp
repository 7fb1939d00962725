// The CUDA adapter (cuda_device.h).
#include "device/cuda/cuda_device.h"

#include <fmt/format.h>

#include <cmath>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend/cuda_module.h"
#include "backend/cuda_tensor_map.h"
#include "choice/cublas_gemm_runner.h"
#include "choice/cublas_library.h"
#include "core/cuda_driver.h"
#include "core/trace.h"
#include "device/cuda/cuda_buffers.h"
#include "device/cuda/cuda_check.h"
#include "device/cuda/cuda_timer.h"
#include "ktune/tensor/compare.h"
#include "ktune/tensor/problem_buffers.h"

namespace ktune {
namespace {

// Loaded modules kept at most; past it the cache starts again (modules hold device memory).
constexpr std::size_t kMaxCachedKernels = 256;
// Problems whose buffers hold at least this many bytes are checked on the GPU, and seeded there
// when their inputs allow it (seeds_on_device).
constexpr std::size_t kDeviceCheckBytes = std::size_t{4} << 20;

bool is_output(ArgRole role) { return role == ArgRole::kOut || role == ArgRole::kInOut; }

// True when the GPU can make every input's data itself (CudaChecker::fill): ktune's seeded
// values (no init of the user's) in dense row-major views. Other problems are seeded on the host
// and copied over.
bool seeds_on_device(const Problem& problem) {
  for (const ProblemArg& arg : problem.args) {
    const ArgRole role = arg.param.role;
    if (role != ArgRole::kIn && role != ArgRole::kInOut) continue;
    if (arg.init.kind != InitKind::kRandom || !view_is_row_major_dense(arg.tensor)) return false;
  }
  return true;
}

// A candidate or reference ready to enqueue on the stream. Shares the cached kernels and
// runners, so that evicting them never frees what a request still uses.
struct Launcher final : DeviceLaunch {
  std::shared_ptr<CudaKernel> kernel;
  std::shared_ptr<CublasGemmRunner> runner;
  LaunchGeometry geometry;
  std::shared_ptr<CudaScratch> workspace;  // the chain's (LaunchSpec::workspace_bytes), shared
  std::vector<Launcher> then;              // enqueued after this one (LaunchSpec::then)
};

class CudaProblem final : public DeviceProblem {
 public:
  CudaProblem(const CudaDriver& cu, CUstream stream, CudaFlush& flush,
              std::unique_ptr<CudaProblemBuffers> buffers, CudaChecker* checker)
      : cu_(cu), stream_(stream), flush_(flush), b_(std::move(buffers)), checker_(checker) {}

  const Problem& problem() const override { return b_->problem(); }
  Status reset() override { return b_->reset(); }
  Status reset_outputs() override { return b_->reset_outputs(stream_); }
  Status finish() override {
    return cuda_status(cu_, cu_.StreamSynchronize(stream_), "StreamSynchronize");
  }
  Result<std::vector<std::string>> redzone_violations() override;
  Result<std::optional<std::string>> modified_input() override;
  Result<bool> outputs_pass(const ReferenceOutputs& reference) override;
  Status keep_outputs_as_reference() override {
    return checker_ ? b_->keep_outputs_as_reference() : Status{};
  }
  Result<bool> reference_passes(std::vector<double>* rms) override;
  Status read_reference(std::size_t arg, HostBuffer* out) override {
    return b_->copy_reference_to_host(arg, out);
  }
  Status read_outputs() override { return b_->copy_outputs_to_host(&actual_); }
  const std::byte* output(std::size_t arg) const override { return actual_[arg].data(); }

  Status enqueue(const DeviceLaunch& launch) override {
    const auto& l = static_cast<const Launcher&>(launch);
    Status s = l.kernel ? launch_kernel(l) : l.runner->run(b_->device_args());
    for (const Launcher& t : l.then) {
      if (!s) break;
      s = enqueue(t);
    }
    return s;
  }
  // The kernel on the problem's buffers, with its TMA descriptors (encoded at each launch from
  // the buffers' addresses: host work only, it does not show in the timed stream) after them.
  Status launch_kernel(const Launcher& l) {
    void** params = b_->params();
    std::vector<void*> with_extra;
    CUtensorMap maps[kMaxTensorMaps];
    CUdeviceptr workspace = 0;
    if (!l.geometry.tensor_maps.empty() || l.geometry.workspace_bytes > 0) {
      const std::vector<CUdeviceptr>& args = b_->device_args();
      void* extra[kMaxTensorMaps + 1];
      Result<std::size_t> n =
          trailing_params(cu_, l.geometry, args, l.workspace.get(), maps, &workspace, extra);
      if (!n) return std::unexpected(n.error());
      with_extra.assign(params, params + args.size());
      with_extra.insert(with_extra.end(), extra, extra + *n);
      params = with_extra.data();
    }
    return cuda_status(cu_, l.kernel->launch(l.geometry, stream_, params), "LaunchKernel");
  }

  Result<std::unique_ptr<SampleSource>> timer(const DeviceLaunch& launch,
                                              const BenchOptions& options) override {
    Result<std::unique_ptr<CudaTimer>> t = CudaTimer::create(
        cu_, stream_, flush_, options, [this, &launch] { return enqueue(launch); });
    if (!t) return std::unexpected(t.error());
    return std::unique_ptr<SampleSource>(std::move(*t));
  }

 private:
  const CudaDriver& cu_;
  CUstream stream_;
  CudaFlush& flush_;
  std::unique_ptr<CudaProblemBuffers> b_;
  CudaChecker* checker_;            // set when inputs and outputs are checked on the GPU
  std::vector<HostBuffer> actual_;  // the last run's outputs read back, by argument index
};

// With the checker: every redzone against an intact one on the GPU, one synchronisation for
// all (each timed run's check makes this comparison; read back, it took one copy per redzone).
Result<std::vector<std::string>> CudaProblem::redzone_violations() {
  if (!checker_) return b_->redzone_violations();
  std::vector<CudaProblemBuffers::Zone> zones = b_->redzones();
  std::vector<CUdeviceptr> at;
  for (const CudaProblemBuffers::Zone& z : zones) at.push_back(z.at);
  Result<std::vector<bool>> same =
      checker_->equal_each(at, b_->intact_redzone(), b_->redzone_bytes(), stream_);
  if (!same) return std::unexpected(same.error());
  std::vector<std::string> names;
  for (std::size_t i = 0; i < zones.size(); ++i) {
    if (!(*same)[i]) names.push_back(std::move(zones[i].name));
  }
  return names;
}

Result<std::optional<std::string>> CudaProblem::modified_input() {
  if (!checker_) return b_->modified_input();
  const Problem& problem = b_->problem();
  for (std::size_t i = 0; i < problem.args.size(); ++i) {
    if (problem.args[i].param.role != ArgRole::kIn || b_->storage_bytes(i) == 0) continue;
    Result<bool> same =
        checker_->equal(b_->storage(i), b_->pristine(i), b_->storage_bytes(i), stream_);
    if (!same) return std::unexpected(same.error());
    if (!*same) return problem.args[i].param.name;
  }
  return std::nullopt;
}

// Every output screened on the GPU against the reference's device copy.
Result<bool> CudaProblem::outputs_pass(const ReferenceOutputs& reference) {
  if (!checker_) return false;
  const Problem& problem = b_->problem();
  for (std::size_t i = 0; i < problem.args.size(); ++i) {
    const ProblemArg& arg = problem.args[i];
    if (!is_output(arg.param.role)) continue;
    const TensorSpec& t = arg.tensor;
    // Dense views only: the screen walks the storage, which must be exactly the view (a view
    // with gaps is read back, where the storage around it is checked too).
    // An output where NaN is legal is compared on the host, which knows nan_ok (the screen
    // fails any NaN).
    if (b_->reference_output(i) == 0 || !CudaChecker::screens(arg.param.dtype) ||
        !view_is_dense(t) || t.numel() == 0 || reference.tolerances[i].nan_ok) {
      return false;
    }
    // The tolerance's rms_atol is already folded into atol (serve.cpp, per request); one that is
    // not screens stricter, and the host comparison, which folds it, then decides.
    Result<bool> ok =
        checker_->outputs_pass(arg.param.dtype, b_->storage(i), b_->reference_output(i), t.numel(),
                               reference.tolerances[i], stream_);
    if (!ok || !*ok) return ok;
  }
  return true;
}

// The reference's outputs screened where they are (written, finite) with their sums of squares,
// so that a large reference never comes to the host: the same conditions as outputs_pass().
Result<bool> CudaProblem::reference_passes(std::vector<double>* rms) {
  if (!checker_) return false;
  const Problem& problem = b_->problem();
  rms->assign(problem.args.size(), 0.0);
  for (std::size_t i = 0; i < problem.args.size(); ++i) {
    const ProblemArg& arg = problem.args[i];
    if (!is_output(arg.param.role)) continue;
    const TensorSpec& t = arg.tensor;
    if (!CudaChecker::screens(arg.param.dtype) || !view_is_dense(t) || t.numel() == 0 ||
        arg.nan_ok) {
      return false;
    }
    double sum_of_squares = 0;
    Result<bool> sound =
        checker_->sound(arg.param.dtype, b_->storage(i), t.numel(), stream_, &sum_of_squares);
    if (!sound || !*sound) return sound;
    (*rms)[i] = std::sqrt(sum_of_squares / static_cast<double>(t.numel()));
  }
  return true;
}

class CudaDevice final : public DeviceAdapter {
 public:
  ~CudaDevice() override;
  std::string_view name() const override { return "CUDA"; }
  Status open() override {
    if (!opened_) opened_ = open_device();
    if (*opened_) {
      if (CUresult r = cu_->CtxSetCurrent(context_); r != CUDA_SUCCESS) {
        return cuda_status(*cu_, r, "CtxSetCurrent");
      }
    }
    return *opened_;
  }
  Result<std::unique_ptr<DeviceProblem>> allocate(const Problem& problem, std::uint64_t seed,
                                                  DataSet set) override;
  Result<std::shared_ptr<const DeviceLaunch>> load(const LaunchSpec& spec,
                                                   const Problem& problem) override {
    Result<Launcher> l = launcher(spec, problem);
    if (!l) return std::unexpected(l.error());
    return std::make_shared<const Launcher>(std::move(*l));
  }
  Fault fault(std::string message) override;
  bool lost() const override { return lost_; }

 private:
  Status open_device();
  // The launches of `spec` and its `then` chain, sharing one workspace (allocated here when
  // any of them asks for one).
  Result<Launcher> launcher(const LaunchSpec& spec, const Problem& problem);
  Result<Launcher> chain_launcher(const LaunchSpec& spec, const Problem& problem,
                                  const std::shared_ptr<CudaScratch>& workspace);
  Result<Launcher> launcher_alone(const LaunchSpec& spec, const Problem& problem);
  // The checker, created on first use; null where it cannot be (the host checks stand in).
  CudaChecker* checker();

  std::optional<Status> opened_;  // the first open()'s result, kept
  const CudaDriver* cu_ = nullptr;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;  // the primary context, retained
  CUstream stream_ = nullptr;
  std::string arch_;  // "sm_90a", for the checker's kernels
  int sm_count_ = 0;
  bool lost_ = false;  // a sticky error happened: the context is unusable

  std::unique_ptr<CudaFlush> flush_;
  std::map<std::string, std::shared_ptr<CudaKernel>> kernels_;
  std::string runners_problem_;  // the problem key the runners were created for
  std::map<std::string, std::shared_ptr<CublasGemmRunner>> runners_;
  // Set by open() when the build's fatbin loads, else by the first checker() call (null when
  // neither gave one: the checks then run on the host).
  std::optional<std::unique_ptr<CudaChecker>> checker_;
  // Without the fatbin: the checker's cubin, compiled in the background from open() on (NVRTC
  // needs no context), while the first request loads its candidate and the libraries.
  std::future<Result<std::string>> checker_cubin_;
  // cuBLAS and cuBLASLt opened in the background from open() on (tens of milliseconds of
  // dlopen, beside the driver's context creation), for the GEMM requests and references that
  // use them; their loaders keep the answer.
  std::future<void> libraries_;
};

CudaDevice::~CudaDevice() {
  if (checker_cubin_.valid()) checker_cubin_.wait();
  if (libraries_.valid()) libraries_.wait();
  if (cu_ == nullptr || context_ == nullptr) return;
  // Everything below frees device memory or library handles in this context. The request
  // flow has dropped its problem (and with it every launch) before the device goes.
  (void)cu_->CtxSetCurrent(context_);
  if (!lost_ && stream_ != nullptr) (void)cu_->StreamSynchronize(stream_);
  flush_.reset();
  checker_.reset();
  runners_.clear();
  kernels_.clear();
  if (stream_ != nullptr) (void)cu_->StreamDestroy(stream_);
  (void)cu_->DevicePrimaryCtxRelease(device_);
}

Status CudaDevice::open_device() {
  trace::Span span("open", "worker", "CUDA");
  Result<const CudaDriver*> driver = cuda_driver();
  if (!driver) return std::unexpected(driver.error());
  cu_ = *driver;
  const CudaDriver& cu = *cu_;
  KTUNE_CU(DeviceGet(&device_, 0));
  libraries_ = std::async(std::launch::async, [] {
    trace::Span libraries_span("open cuBLAS", "worker");
    (void)cublas_api();
    (void)cublaslt_api();
  });
  KTUNE_CU(DevicePrimaryCtxRetain(&context_, device_));
  KTUNE_CU(CtxSetCurrent(context_));
  // Non-blocking: graph capture refuses the legacy stream, and nothing else in the process
  // (cuBLAS's own work on the legacy stream) serialises with ours.
  KTUNE_CU(StreamCreate(&stream_, CU_STREAM_NON_BLOCKING));
  Result<CudaDeviceInfo> info = cuda_device_info(0);
  if (!info) return std::unexpected(info.error());
  const std::size_t l2 = info->l2_bytes > 0 ? static_cast<std::size_t>(info->l2_bytes) : 0;
  flush_ = std::make_unique<CudaFlush>(cu, stream_, l2);
  arch_ = info->arch();
  sm_count_ = info->sm_count;
  // The checking kernels: the fatbin nvcc compiled with the build, where there is one and the
  // driver takes it (one module load, traced as "load checker"; under 1 ms on the H200);
  // otherwise NVRTC compiles them on a thread (it needs no context; 0.1-0.4 s) while the first
  // request loads its candidate and the libraries.
  if (Result<std::unique_ptr<CudaChecker>> loaded = CudaChecker::load(cu, sm_count_)) {
    checker_ = std::move(*loaded);
  } else {
    checker_cubin_ = std::async(std::launch::async, [arch = arch_] {
      trace::Span compile_span("compile checker", "worker", arch);
      return CudaChecker::compile(arch);
    });
  }
  return {};
}

CudaChecker* CudaDevice::checker() {
  if (!checker_) {
    trace::Span span("checker", "worker");
    Result<std::unique_ptr<CudaChecker>> c =
        checker_cubin_.valid() ? CudaChecker::create(*cu_, checker_cubin_.get(), sm_count_)
                               : CudaChecker::create(*cu_, arch_, sm_count_);
    checker_ = c ? std::move(*c) : nullptr;
  }
  return checker_->get();
}

Result<std::unique_ptr<DeviceProblem>> CudaDevice::allocate(const Problem& problem,
                                                            std::uint64_t seed, DataSet set) {
  const bool large = CudaProblemBuffers::device_bytes_for(problem) >= kDeviceCheckBytes;
  CudaChecker* check = large ? checker() : nullptr;
  Result<std::unique_ptr<CudaProblemBuffers>> buffers = [&] {
    if (check && seeds_on_device(problem)) {
      // Made on the GPU: no host pass over the data, no copy.
      trace::Span span("seed on device", "worker");
      const Problem& p = problem;
      return CudaProblemBuffers::create_on_device(
          *cu_, problem,
          [&](std::size_t arg, CUdeviceptr pristine, std::size_t bytes) {
            return check->poison(pristine, bytes, p.args[arg].param.dtype, stream_);
          },
          [&](std::size_t arg, CUdeviceptr pristine, std::size_t) {
            const TensorSpec& t = p.args[arg].tensor;
            const CUdeviceptr first =
                pristine + static_cast<CUdeviceptr>(t.offset) * dtype_size(t.dtype);
            return check->fill(first, t.dtype, t.numel(), argument_seed(seed, arg, set), set,
                               stream_);
          });
    }
    // The host copy is needed only to seed the device: it goes when this returns.
    trace::Span span("seed on host", "worker");
    Result<ProblemBuffers> host = ProblemBuffers::try_create(problem, seed, set);
    if (!host) return Result<std::unique_ptr<CudaProblemBuffers>>(std::unexpected(host.error()));
    return CudaProblemBuffers::create(*cu_, *host);
  }();
  if (!buffers) return std::unexpected(buffers.error());
  return std::make_unique<CudaProblem>(*cu_, stream_, *flush_, std::move(*buffers), check);
}

DeviceAdapter::Fault CudaDevice::fault(std::string message) {
  // A kernel's fault is sticky: every later call returns it, so one probe tells whether the
  // context is lost, whichever call reported the failure first (a library's own status, say).
  const CUresult probe = cu_->CtxSynchronize();
  if (!cuda_error_is_sticky(probe)) return {std::move(message), false};
  lost_ = true;
  const char* name = nullptr;
  (void)cu_->GetErrorName(probe, &name);
  const std::string error = name ? name : fmt::format("CUresult {}", static_cast<int>(probe));
  if (message.find(error) != std::string::npos) {
    return {fmt::format("{}; the worker restarts", message), true};
  }
  return {fmt::format("{}; then the context was lost: {}; the worker restarts", message, error),
          true};
}

Result<Launcher> CudaDevice::launcher(const LaunchSpec& spec, const Problem& problem) {
  Result<std::shared_ptr<CudaScratch>> workspace = CudaScratch::for_chain(*cu_, spec);
  if (!workspace) return std::unexpected(workspace.error());
  return chain_launcher(spec, problem, *workspace);
}

Result<Launcher> CudaDevice::chain_launcher(const LaunchSpec& spec, const Problem& problem,
                                            const std::shared_ptr<CudaScratch>& workspace) {
  Result<Launcher> first = launcher_alone(spec, problem);
  if (!first) return first;
  first->workspace = workspace;
  for (const LaunchSpec& t : spec.then) {
    Result<Launcher> next = chain_launcher(t, problem, workspace);
    if (!next) return next;
    first->then.push_back(std::move(*next));
  }
  return first;
}

Result<Launcher> CudaDevice::launcher_alone(const LaunchSpec& spec, const Problem& problem) {
  Launcher l;
  switch (spec.kind) {
    case LaunchKind::kCudaCubin: {
      const std::string key =
          fmt::format("{} {} {}", spec.artifact.string(), spec.entry, spec.shared_bytes);
      auto it = kernels_.find(key);
      if (it == kernels_.end()) {
        Result<std::unique_ptr<CudaKernel>> k =
            CudaKernel::load(*cu_, spec.artifact, spec.entry, spec.shared_bytes);
        if (!k) return std::unexpected(k.error());
        if (kernels_.size() >= kMaxCachedKernels) kernels_.clear();
        it = kernels_.emplace(key, std::move(*k)).first;
      }
      l.kernel = it->second;
      l.geometry = LaunchGeometry{spec.grid, spec.block, spec.shared_bytes, spec.tensor_maps,
                                  spec.workspace_bytes};
      return l;
    }
    case LaunchKind::kCudaLibrary: {
      // A runner holds descriptors of one problem: the runners of the last problem go.
      const std::string problem_key = problem.key();
      if (runners_problem_ != problem_key) {
        runners_.clear();
        runners_problem_ = problem_key;
      }
      const std::string key = launch_key(spec);
      auto it = runners_.find(key);
      if (it == runners_.end()) {
        Result<std::unique_ptr<CublasGemmRunner>> r =
            CublasGemmRunner::create(spec, problem, stream_);
        if (!r) return std::unexpected(r.error());
        it = runners_.emplace(key, std::move(*r)).first;
      }
      l.runner = it->second;
      return l;
    }
    case LaunchKind::kCpuSharedObject:
    case LaunchKind::kCpuLibrary:
    case LaunchKind::kOpenCLProgram:
      break;
  }
  return make_error(
      ErrorCode::kUnavailable,
      fmt::format("the CUDA device cannot run launch kind {}", launch_kind_name(spec.kind)));
}

}  // namespace

std::unique_ptr<DeviceAdapter> make_cuda_device() { return std::make_unique<CudaDevice>(); }

}  // namespace ktune
