// The CUDA handler: runs kCudaCubin and kCudaLibrary candidates on device 0 of what the process
// sees (a worker sees one GPU through CUDA_VISIBLE_DEVICES). The driver is opened on the first
// request, so that a worker serving only CPU candidates never touches it. Then: the device's
// primary context (cuBLAS, through the runtime, uses it too) and one non-blocking stream.
//
// Per request: the launcher (a loaded cubin's kernel, cached by cubin, entry and shared bytes;
// or a cuBLAS/cuBLASLt runner, cached for the current problem), the prepared problem (device
// buffers with redzones, and the reference's outputs: from the reference launch run here, from
// the parent's file, or none; kept while the problem, seed and reference stay the same), the
// checks of candidate_check.cpp, then the CUDA benchmarker. For problems of kDeviceCheckBytes
// and more, inputs and outputs are checked on the GPU (worker/cuda_check.h) and read back only
// when an output fails there, for the message: copying and comparing on the host took 0.65 s a
// candidate at 4096^3 bf16 on an H100, longer than the tuning itself.
//
// A kernel fault (illegal address, ...) is sticky: the context is unusable, so the response
// sets `restart` and every later request is refused until the worker is replaced.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend/cuda_module.h"
#include "bench/cuda_benchmarker.h"
#include "choice/cublas_gemm.h"
#include "core/cuda_driver.h"
#include "bench/candidate_check.h"
#include "ktune/tensor/compare.h"
#include "worker/device_handler.h"
#include "ktune/tensor/problem_buffers.h"
#include "tensor/cuda_buffers.h"
#include "worker/cuda_check.h"

namespace ktune {
namespace {

// Loaded modules kept at most; past it the cache starts again (modules hold device memory).
constexpr std::size_t kMaxCachedKernels = 256;
// Problems whose buffers hold at least this many bytes are checked on the GPU.
constexpr std::size_t kDeviceCheckBytes = std::size_t{4} << 20;

bool is_output(ArgRole role) { return role == ArgRole::kOut || role == ArgRole::kInOut; }

// Everything of a LaunchSpec, as text: the identity of a reference in the prepared problem's key.
std::string launch_key(const LaunchSpec& s) {
  std::string key =
      fmt::format("{} {} {} grid={} block={} shared={} {} algo={} bind={} epilogue={}",
                  launch_kind_name(s.kind), s.artifact.string(), s.entry, fmt::join(s.grid, ","),
                  fmt::join(s.block, ","), s.shared_bytes, s.library, s.algo,
                  fmt::join(s.bind, ","), s.library_epilogue);
  for (const LaunchSpec& t : s.then) key += " then " + launch_key(t);
  return key;
}

// How one request ends, before it becomes the response.
struct Verdict {
  Outcome outcome = Outcome::kOk;
  std::string message;
  bool restart = false;
  [[nodiscard]] bool ok() const { return outcome == Outcome::kOk; }
};

// check_output_alone of candidate_check.cpp, with its messages: every element written (no
// poison left) and finite. `data` is the start of the storage.
Verdict check_output_alone(const ProblemArg& arg, const std::byte* data) {
  const TensorSpec& spec = arg.tensor;
  const std::size_t size = dtype_size(spec.dtype);
  for (std::int64_t i = 0; i < spec.numel(); ++i) {
    const std::byte* p = data + spec.storage_index(i) * size;
    if (is_poison(spec.dtype, p)) {
      return {Outcome::kUnwrittenOutput,
              fmt::format("output {}: element {} was never written", arg.param.name, i)};
    }
    if (is_floating(spec.dtype) && !std::isfinite(load_element(spec.dtype, p))) {
      return {Outcome::kNanOutput, fmt::format("output {}: element {} is {}", arg.param.name, i,
                                               load_element(spec.dtype, p))};
    }
  }
  return {};
}

// A candidate or reference ready to enqueue on the stream. Shared with the caches, so that
// evicting them never frees what a request still uses.
struct Launcher {
  std::shared_ptr<CudaKernel> kernel;
  std::shared_ptr<CublasGemmRunner> runner;
  LaunchGeometry geometry;
  std::vector<Launcher> then;  // enqueued after this one (LaunchSpec::then)
};

class CudaHandler final : public DeviceHandler {
 public:
  ~CudaHandler() override;
  BenchmarkResponse handle(const BenchmarkRequest& request) override;

 private:
  // The inputs, scratch for read-backs and the reference's outputs of the last problem.
  struct Prepared {
    std::string key;
    std::unique_ptr<CudaProblemBuffers> buffers;
    std::optional<ReferenceOutputs> reference;
    std::vector<HostBuffer> actual;  // the last run's outputs, by argument index
    CudaChecker* checker = nullptr;  // set when inputs and outputs are checked on the GPU
  };

  Verdict serve(const BenchmarkRequest& request, BenchmarkResponse* response);
  Status open();
  Status open_device();
  Result<Launcher> launcher(const LaunchSpec& spec, const Problem& problem);
  Result<Launcher> launcher_alone(const LaunchSpec& spec, const Problem& problem);
  Status enqueue(const Launcher& l, CudaProblemBuffers& buffers);
  Verdict device_failure(const std::string& message);
  // The checker, created on first use; null where it cannot be (the host checks stand in).
  CudaChecker* checker();
  Verdict run_and_check_integrity(const Launcher& l, Prepared& p, bool read_outputs);
  Verdict verify_on_device(const BenchmarkRequest& request, bool* passed);
  Verdict prepare(const BenchmarkRequest& request);
  Verdict verify(const Launcher& l, const BenchmarkRequest& request);
  Verdict measure(const Launcher& l, const BenchmarkRequest& request, BenchmarkResponse* response);

  std::optional<Status> opened_;  // the first open()'s result, kept
  const CudaDriver* cu_ = nullptr;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;  // the primary context, retained
  CUstream stream_ = nullptr;
  std::size_t l2_bytes_ = 0;
  std::string arch_;  // "sm_90a", for the checker's kernels
  int sm_count_ = 0;
  bool lost_ = false;  // a sticky error happened: the context is unusable

  std::map<std::string, std::shared_ptr<CudaKernel>> kernels_;
  std::string runners_problem_;  // the problem key the runners were created for
  std::map<std::string, std::shared_ptr<CublasGemmRunner>> runners_;
  std::optional<Prepared> prepared_;
  std::unique_ptr<CudaBenchmarker> bench_;
  std::optional<std::unique_ptr<CudaChecker>> checker_;  // set by the first checker() call
};

CudaHandler::~CudaHandler() {
  if (cu_ == nullptr || context_ == nullptr) return;
  // Everything below frees device memory or library handles in this context.
  (void)cu_->CtxSetCurrent(context_);
  if (!lost_ && stream_ != nullptr) (void)cu_->StreamSynchronize(stream_);
  bench_.reset();
  prepared_.reset();
  checker_.reset();
  runners_.clear();
  kernels_.clear();
  if (stream_ != nullptr) (void)cu_->StreamDestroy(stream_);
  (void)cu_->DevicePrimaryCtxRelease(device_);
}

BenchmarkResponse CudaHandler::handle(const BenchmarkRequest& request) {
  BenchmarkResponse response;
  response.id = request.id;
  Verdict v = serve(request, &response);
  response.outcome = v.outcome;
  response.restart = v.restart;
  if (!v.ok()) {
    response.message = std::move(v.message);
    response.stats.reset();
  }
  return response;
}

Status CudaHandler::open() {
  if (!opened_) opened_ = open_device();
  return *opened_;
}

Status CudaHandler::open_device() {
  Result<const CudaDriver*> driver = cuda_driver();
  if (!driver) return std::unexpected(driver.error());
  cu_ = *driver;
  const CudaDriver& cu = *cu_;
  KTUNE_CU(DeviceGet(&device_, 0));
  KTUNE_CU(DevicePrimaryCtxRetain(&context_, device_));
  KTUNE_CU(CtxSetCurrent(context_));
  // Non-blocking: graph capture refuses the legacy stream, and nothing else in the process
  // (cuBLAS's own work on the legacy stream) serialises with ours.
  KTUNE_CU(StreamCreate(&stream_, CU_STREAM_NON_BLOCKING));
  Result<CudaDeviceInfo> info = cuda_device_info(0);
  if (!info) return std::unexpected(info.error());
  l2_bytes_ = info->l2_bytes > 0 ? static_cast<std::size_t>(info->l2_bytes) : 0;
  arch_ = info->arch();
  sm_count_ = info->sm_count;
  return {};
}

CudaChecker* CudaHandler::checker() {
  if (!checker_) {
    Result<std::unique_ptr<CudaChecker>> c = CudaChecker::create(*cu_, arch_, sm_count_);
    checker_ = c ? std::move(*c) : nullptr;
  }
  return checker_->get();
}

Verdict CudaHandler::serve(const BenchmarkRequest& request, BenchmarkResponse* response) {
  if (lost_) {
    return {Outcome::kLaunchError,
            "the CUDA context was lost to an earlier candidate's fault; the worker restarts", true};
  }
  if (Status s = open(); !s) {
    return {Outcome::kUnsupported,
            fmt::format("{}: cannot run on the GPU: {}", request.candidate, s.error().message)};
  }
  if (CUresult r = cu_->CtxSetCurrent(context_); r != CUDA_SUCCESS) {
    return device_failure(cuda_status(*cu_, r, "CtxSetCurrent").error().message);
  }

  Result<Launcher> candidate = launcher(request.launch, request.problem);
  if (!candidate) {
    // A missing library is this machine's lack, and a library that cannot run the problem (or
    // has fewer heuristic algorithms than the choice's index) does not support it: neither is
    // a broken candidate.
    const ErrorCode code = candidate.error().code;
    const bool unsupported =
        code == ErrorCode::kUnavailable ||
        (request.launch.kind == LaunchKind::kCudaLibrary && code == ErrorCode::kInvalidArgument);
    return {unsupported ? Outcome::kUnsupported : Outcome::kLoadError, candidate.error().message};
  }
  if (Verdict v = prepare(request); !v.ok()) return v;
  if (request.verify) {
    if (Verdict v = verify(*candidate, request); !v.ok()) return v;
  }
  if (!request.measure) return {};
  return measure(*candidate, request, response);
}

Result<Launcher> CudaHandler::launcher(const LaunchSpec& spec, const Problem& problem) {
  Result<Launcher> first = launcher_alone(spec, problem);
  if (!first) return first;
  for (const LaunchSpec& t : spec.then) {
    Result<Launcher> next = launcher(t, problem);
    if (!next) return next;
    first->then.push_back(std::move(*next));
  }
  return first;
}

Result<Launcher> CudaHandler::launcher_alone(const LaunchSpec& spec, const Problem& problem) {
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
      l.geometry = LaunchGeometry{spec.grid, spec.block, spec.shared_bytes};
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
    case LaunchKind::kOpenCLProgram:
      break;
  }
  return make_error(
      ErrorCode::kUnavailable,
      fmt::format("the CUDA handler cannot run launch kind {}", launch_kind_name(spec.kind)));
}

Status CudaHandler::enqueue(const Launcher& l, CudaProblemBuffers& buffers) {
  Status s = l.kernel ? cuda_status(*cu_, l.kernel->launch(l.geometry, stream_, buffers.params()),
                                    "LaunchKernel")
                      : l.runner->run(buffers.device_args());
  for (const Launcher& t : l.then) {
    if (!s) break;
    s = enqueue(t, buffers);
  }
  return s;
}

Verdict CudaHandler::device_failure(const std::string& message) {
  // A kernel's fault is sticky: every later call returns it, so one probe tells whether the
  // context is lost, whichever call reported the failure first (a library's own status, say).
  const CUresult probe = cu_->CtxSynchronize();
  if (!cuda_error_is_sticky(probe)) return {Outcome::kLaunchError, message};
  lost_ = true;
  const char* name = nullptr;
  (void)cu_->GetErrorName(probe, &name);
  const std::string error = name ? name : fmt::format("CUresult {}", static_cast<int>(probe));
  if (message.find(error) != std::string::npos) {
    return {Outcome::kLaunchError, fmt::format("{}; the worker restarts", message), true};
  }
  return {Outcome::kLaunchError,
          fmt::format("{}; then the context was lost: {}; the worker restarts", message, error),
          true};
}

// run_and_check_integrity of candidate_check.cpp on the device: reset, one run, synchronise,
// redzones, inputs; with `read_outputs`, the outputs are read back into p.actual.
Verdict CudaHandler::run_and_check_integrity(const Launcher& l, Prepared& p, bool read_outputs) {
  CudaProblemBuffers& b = *p.buffers;
  if (Status s = b.reset(); !s) return device_failure(s.error().message);
  if (Status s = enqueue(l, b); !s) return device_failure(s.error().message);
  if (CUresult r = cu_->StreamSynchronize(stream_); r != CUDA_SUCCESS) {
    return device_failure(cuda_status(*cu_, r, "StreamSynchronize").error().message);
  }
  Result<std::vector<std::string>> bad = b.redzone_violations();
  if (!bad) return device_failure(bad.error().message);
  if (!bad->empty()) {
    return {Outcome::kRedzoneViolation,
            fmt::format("wrote outside the buffer of {}", fmt::join(*bad, ", "))};
  }
  if (p.checker) {
    const Problem& problem = b.problem();
    for (std::size_t i = 0; i < problem.args.size(); ++i) {
      if (problem.args[i].param.role != ArgRole::kIn || b.storage_bytes(i) == 0) continue;
      Result<bool> same =
          p.checker->equal(b.storage(i), b.pristine(i), b.storage_bytes(i), stream_);
      if (!same) return device_failure(same.error().message);
      if (!*same) {
        return {Outcome::kInputModified,
                fmt::format("wrote into input {}", problem.args[i].param.name)};
      }
    }
  } else {
    Result<std::optional<std::string>> input = b.modified_input();
    if (!input) return device_failure(input.error().message);
    if (*input) return {Outcome::kInputModified, fmt::format("wrote into input {}", **input)};
  }
  if (read_outputs) {
    if (Status s = b.copy_outputs_to_host(&p.actual); !s) return device_failure(s.error().message);
  }
  return {};
}

Verdict CudaHandler::prepare(const BenchmarkRequest& request) {
  const std::string key = fmt::format("{} seed={} expected={} reference={}", request.problem.key(),
                                      request.seed, request.expected.string(),
                                      request.reference ? launch_key(*request.reference) : "none");
  if (prepared_ && prepared_->key == key) return {};
  prepared_.reset();  // free the last problem's device memory first
  auto no_reference = [&](const std::string& why) {
    return Verdict{Outcome::kUnsupported,
                   fmt::format("{}: no reference to verify against: {}", request.candidate, why)};
  };

  Prepared p;
  p.key = key;
  {
    // The host copy is needed only to seed the device: it goes at the end of this scope.
    const ProblemBuffers host = ProblemBuffers::create(request.problem, request.seed);
    Result<std::unique_ptr<CudaProblemBuffers>> buffers = CudaProblemBuffers::create(*cu_, host);
    if (!buffers) {
      Verdict v = device_failure(buffers.error().message);
      if (v.restart) return v;
      const bool oom = v.message.find("CUDA_ERROR_OUT_OF_MEMORY") != std::string::npos;
      return {
          oom ? Outcome::kResourceExhausted : Outcome::kUnsupported,
          fmt::format("{}: cannot put the problem on the GPU: {}", request.candidate, v.message)};
    }
    p.buffers = std::move(*buffers);
  }
  if (p.buffers->device_bytes() >= kDeviceCheckBytes) p.checker = checker();

  if (request.reference) {
    Result<Launcher> ref = launcher(*request.reference, request.problem);
    if (!ref) return no_reference(fmt::format("reference does not load: {}", ref.error().message));
    Verdict v = run_and_check_integrity(*ref, p, true);
    const Problem& problem = request.problem;
    for (std::size_t i = 0; v.ok() && i < problem.args.size(); ++i) {
      // The reference must write every output and produce no NaN itself.
      if (is_output(problem.args[i].param.role)) {
        v = check_output_alone(problem.args[i], p.actual[i].data());
      }
    }
    if (!v.ok()) {
      Verdict r =
          no_reference(fmt::format("reference: {}: {}", outcome_name(v.outcome), v.message));
      r.restart = v.restart;
      return r;
    }
    if (p.checker) {
      if (Status s = p.buffers->keep_outputs_as_reference(); !s) {
        return device_failure(s.error().message);
      }
    }
    ReferenceOutputs out;
    out.outputs = std::move(p.actual);
    out.tolerances.resize(problem.args.size());  // set per request in verify()
    p.actual.clear();
    p.reference = std::move(out);
  } else if (!request.expected.empty()) {
    Result<ReferenceOutputs> ref =
        read_reference_file(request.expected, request.problem, request.tolerance);
    if (!ref) return no_reference(ref.error().message);
    p.reference = std::move(*ref);
  }
  prepared_ = std::move(p);
  return {};
}

// check_candidate of candidate_check.cpp on the device.
Verdict CudaHandler::verify(const Launcher& l, const BenchmarkRequest& request) {
  Prepared& p = *prepared_;
  if (Verdict v = run_and_check_integrity(l, p, p.checker == nullptr); !v.ok()) return v;
  if (p.checker) {
    bool passed = false;
    if (Verdict v = verify_on_device(request, &passed); !v.ok() || passed) return v;
    // Something differs, or cannot be screened: the host comparison says what.
    if (Status s = p.buffers->copy_outputs_to_host(&p.actual); !s) {
      return device_failure(s.error().message);
    }
  }
  const Problem& problem = request.problem;
  for (std::size_t i = 0; i < problem.args.size(); ++i) {
    const ProblemArg& arg = problem.args[i];
    if (!is_output(arg.param.role)) continue;
    const std::byte* actual = p.actual[i].data();
    if (!p.reference) {
      if (Verdict v = check_output_alone(arg, actual); !v.ok()) return v;
      continue;
    }
    const Tolerance tolerance =
        request.tolerance ? *request.tolerance : default_tolerance(arg.param.dtype);
    Comparison c = compare(arg.tensor, actual, p.reference->outputs[i].data(), tolerance);
    if (c.outcome != Outcome::kOk) {
      return {c.outcome, fmt::format("output {}: {}", arg.param.name, c.message)};
    }
  }
  return {};
}

// Every output screened on the GPU against the reference's device copy: *passed when all pass.
Verdict CudaHandler::verify_on_device(const BenchmarkRequest& request, bool* passed) {
  Prepared& p = *prepared_;
  const Problem& problem = request.problem;
  *passed = false;
  for (std::size_t i = 0; i < problem.args.size(); ++i) {
    const ProblemArg& arg = problem.args[i];
    if (!is_output(arg.param.role)) continue;
    const TensorSpec& t = arg.tensor;
    // Dense views only: the screen walks the storage, which must be exactly the view.
    if (p.buffers->reference_output(i) == 0 || !CudaChecker::screens(arg.param.dtype) ||
        t.offset != 0 || t.storage_elements() != t.numel()) {
      return {};
    }
    const Tolerance tolerance =
        request.tolerance ? *request.tolerance : default_tolerance(arg.param.dtype);
    Result<bool> ok =
        p.checker->outputs_pass(arg.param.dtype, p.buffers->storage(i),
                                p.buffers->reference_output(i), t.numel(), tolerance, stream_);
    if (!ok) return device_failure(ok.error().message);
    if (!*ok) return {};
  }
  *passed = true;
  return {};
}

Verdict CudaHandler::measure(const Launcher& l, const BenchmarkRequest& request,
                             BenchmarkResponse* response) {
  CudaProblemBuffers& b = *prepared_->buffers;
  if (Status s = b.reset(); !s) return device_failure(s.error().message);
  if (!bench_) {
    bench_ = std::make_unique<CudaBenchmarker>(*cu_, request.bench, stream_, l2_bytes_);
  } else {
    bench_->set_options(request.bench);
  }
  Result<BenchStats> stats = bench_->measure([&] { return enqueue(l, b); });
  if (!stats) return device_failure(stats.error().message);
  // measure() synchronised after its last batch; a fault of the last sample shows here at the
  // latest, and no response is ok while one is pending.
  if (CUresult r = cu_->StreamSynchronize(stream_); r != CUDA_SUCCESS) {
    return device_failure(cuda_status(*cu_, r, "StreamSynchronize").error().message);
  }
  response->stats = *stats;
  response->message = bench_->note();
  return {};
}

}  // namespace

std::unique_ptr<DeviceHandler> make_cuda_handler() { return std::make_unique<CudaHandler>(); }

}  // namespace ktune
