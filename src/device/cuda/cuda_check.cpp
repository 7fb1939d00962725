// CudaChecker: the checking kernels (ktune_check.cu: nvcc's fatbin from the build, else compiled
// by NVRTC in the worker) and their launches.
#include "device/cuda/cuda_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "backend/nvrtc_library.h"
#include "core/trace.h"
#include "device/cuda/cuda_check_embedded.h"
#include "ktune/tensor/host_buffer.h"

namespace ktune {
namespace {

constexpr int kThreads = 256;

int screen_index(DType dtype) {
  switch (dtype) {
    case DType::kF16:
      return 0;
    case DType::kBF16:
      return 1;
    case DType::kF32:
      return 2;
    case DType::kF64:
      return 3;
    default:
      return -1;
  }
}

}  // namespace

CudaChecker::CudaChecker(const CudaDriver& cu, int sm_count)
    : cu_(cu), blocks_(std::max(1, sm_count) * 4) {}

CudaChecker::~CudaChecker() {
  if (counters_ != 0) (void)cu_.MemFree(counters_);
  if (span_counters_ != 0) (void)cu_.MemFree(span_counters_);
  if (module_ != nullptr) (void)cu_.ModuleUnload(module_);
}

bool CudaChecker::screens(DType dtype) { return screen_index(dtype) >= 0; }

Result<std::string> CudaChecker::compile(const std::string& arch) {
  Result<const NvrtcLibrary*> nv = nvrtc_library();
  if (!nv) return std::unexpected(nv.error());
  Result<NvrtcCompiled> compiled = nvrtc_compile(**nv, std::string(cuda_check_ktune_check_source()),
                                                 "ktune_check.cu", {"--gpu-architecture=" + arch});
  if (!compiled) return std::unexpected(compiled.error());
  if (compiled->result != NVRTC_SUCCESS || compiled->cubin.empty()) {
    return make_error(ErrorCode::kCompile,
                      fmt::format("the checking kernels do not compile for {}: {}", arch,
                                  compiled->log.empty() ? (*nv)->GetErrorString(compiled->result)
                                                        : compiled->log));
  }
  return std::move(compiled->cubin);
}

Result<std::unique_ptr<CudaChecker>> CudaChecker::create(const CudaDriver& cu,
                                                         const std::string& arch, int sm_count) {
  return create(cu, compile(arch), sm_count);
}

Result<std::unique_ptr<CudaChecker>> CudaChecker::create(const CudaDriver& cu,
                                                         Result<std::string> cubin, int sm_count) {
  if (!cubin) return std::unexpected(cubin.error());
  return from_image(cu, cubin->data(), "ktune_check.cubin", sm_count);
}

Result<std::unique_ptr<CudaChecker>> CudaChecker::load(const CudaDriver& cu, int sm_count) {
  const std::span<const unsigned char> image = cuda_check_fatbin();
  if (image.empty()) {
    return make_error(ErrorCode::kUnavailable,
                      "this build embedded no fatbin of the checking kernels (no nvcc)");
  }
  // Traced as "load checker", with the driver's refusal, if any, as its detail.
  const std::int64_t start = trace::enabled() ? trace::now_us() : 0;
  Result<std::unique_ptr<CudaChecker>> checker =
      from_image(cu, image.data(), "ktune_check.fatbin", sm_count);
  if (trace::enabled()) {
    trace::complete("load checker", "worker", start, trace::now_us() - start,
                    checker ? std::string_view{} : std::string_view{checker.error().message});
  }
  return checker;
}

Result<std::unique_ptr<CudaChecker>> CudaChecker::from_image(const CudaDriver& cu,
                                                             const void* image, const char* name,
                                                             int sm_count) {
  // The driver's answer, naming the image: "the checking kernels (ktune_check.fatbin):
  // cuModuleLoadData: CUDA_ERROR_NO_BINARY_FOR_GPU (...)".
  auto failed = [&](CUresult r, const std::string& what) {
    Status s = cuda_status(cu, r, what.c_str());
    return make_error(s.error().code,
                      fmt::format("the checking kernels ({}): {}", name, s.error().message));
  };
  std::unique_ptr<CudaChecker> checker(new CudaChecker(cu, sm_count));
  CUmodule module = nullptr;
  if (CUresult r = cu.ModuleLoadData(&module, image); r != CUDA_SUCCESS) {
    return failed(r, "ModuleLoadData");
  }
  checker->module_ = module;  // unloaded by the destructor from here on
  const std::pair<const char*, CUfunction*> kernels[] = {
      {"ktune_screen_f16", &checker->screen_[0]}, {"ktune_screen_bf16", &checker->screen_[1]},
      {"ktune_screen_f32", &checker->screen_[2]}, {"ktune_screen_f64", &checker->screen_[3]},
      {"ktune_differ", &checker->differ_},        {"ktune_fill", &checker->fill_},
      {"ktune_pattern", &checker->pattern_}};
  for (const auto& [entry, function] : kernels) {
    if (CUresult r = cu.ModuleGetFunction(function, module, entry); r != CUDA_SUCCESS) {
      return failed(r, fmt::format("ModuleGetFunction {}", entry));
    }
  }
  KTUNE_CU(MemAlloc(&checker->counters_, 3 * sizeof(std::uint64_t)));
  return checker;
}

Status CudaChecker::launch(CUfunction kernel, std::int64_t n, void** params, CUstream stream) {
  const std::int64_t needed = (n + kThreads - 1) / kThreads;
  const auto blocks = static_cast<unsigned int>(std::clamp<std::int64_t>(needed, 1, blocks_));
  if (CUresult r =
          cu_.LaunchKernel(kernel, blocks, 1, 1, kThreads, 1, 1, 0, stream, params, nullptr);
      r != CUDA_SUCCESS) {
    return cuda_status(cu_, r, "LaunchKernel (check)");
  }
  return {};
}

Status CudaChecker::run(CUfunction kernel, std::int64_t n, void** params, CUstream stream) {
  const CudaDriver& cu = cu_;
  KTUNE_CU(MemsetD8Async(counters_, 0, 3 * sizeof(std::uint64_t), stream));
  if (Status s = launch(kernel, n, params, stream); !s) return s;
  KTUNE_CU(StreamSynchronize(stream));
  std::uint64_t host[3] = {0, 0, 0};
  KTUNE_CU(MemcpyDtoH(host, counters_, sizeof(host)));
  std::memcpy(sums_, host, sizeof(sums_));
  bad_ = host[2];
  return {};
}

Status CudaChecker::screen(DType dtype, CUdeviceptr actual, CUdeviceptr expected, std::int64_t n,
                           double atol, double rtol, bool finite_only, CUstream stream) {
  const int index = screen_index(dtype);
  if (index < 0) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("CudaChecker: cannot screen {}", dtype_name(dtype)));
  }
  long long count = n;
  std::uint64_t poison = poison_bits(dtype);
  int finite = finite_only ? 1 : 0;
  void* params[] = {&actual, &expected, &count, &poison, &atol, &rtol, &counters_, &finite};
  return run(screen_[index], n, params, stream);
}

Result<bool> CudaChecker::outputs_pass(DType dtype, CUdeviceptr actual, CUdeviceptr expected,
                                       std::int64_t n, const Tolerance& tolerance,
                                       CUstream stream) {
  if (Status s = screen(dtype, actual, expected, n, tolerance.atol, tolerance.rtol, false, stream);
      !s) {
    return std::unexpected(s.error());
  }
  if (bad_ > 0) return false;
  // compare(): with an all-zero reference the absolute norm stands in for the relative one.
  const double rel_l2 = sums_[1] > 0 ? std::sqrt(sums_[0] / sums_[1]) : std::sqrt(sums_[0]);
  return rel_l2 <= tolerance.max_rel_l2;
}

Result<bool> CudaChecker::sound(DType dtype, CUdeviceptr values, std::int64_t n, CUstream stream,
                                double* sum_of_squares) {
  // Against itself, with no tolerance: every written, finite element passes and adds its square.
  if (Status s = screen(dtype, values, values, n, 0, 0, true, stream); !s) {
    return std::unexpected(s.error());
  }
  *sum_of_squares = sums_[1];
  return bad_ == 0;
}

Result<std::vector<bool>> CudaChecker::equal_each(const std::vector<CUdeviceptr>& spans,
                                                  CUdeviceptr b, std::size_t bytes,
                                                  CUstream stream) {
  const CudaDriver& cu = cu_;
  const std::size_t need = 3 * sizeof(std::uint64_t) * std::max<std::size_t>(spans.size(), 1);
  if (span_counters_bytes_ < need) {
    if (span_counters_ != 0) KTUNE_CU(MemFree(span_counters_));
    span_counters_ = 0;
    span_counters_bytes_ = 0;
    KTUNE_CU(MemAlloc(&span_counters_, need));
    span_counters_bytes_ = need;
  }
  KTUNE_CU(MemsetD8Async(span_counters_, 0, need, stream));
  long long words = static_cast<long long>(bytes / 4);
  int tail = static_cast<int>(bytes % 4);
  for (std::size_t i = 0; i < spans.size(); ++i) {
    CUdeviceptr a = spans[i];
    CUdeviceptr counters = span_counters_ + 3 * sizeof(std::uint64_t) * i;
    void* params[] = {&a, &b, &words, &tail, &counters};
    if (Status s = launch(differ_, std::max<long long>(words, 1), params, stream); !s)
      return std::unexpected(s.error());
  }
  KTUNE_CU(StreamSynchronize(stream));
  std::vector<std::uint64_t> host(3 * spans.size());
  if (!host.empty())
    KTUNE_CU(MemcpyDtoH(host.data(), span_counters_, host.size() * sizeof(host[0])));
  std::vector<bool> same(spans.size());
  for (std::size_t i = 0; i < spans.size(); ++i) same[i] = host[3 * i + 2] == 0;
  return same;
}

Result<bool> CudaChecker::equal(CUdeviceptr a, CUdeviceptr b, std::size_t bytes, CUstream stream) {
  Result<std::vector<bool>> same = equal_each({a}, b, bytes, stream);
  if (!same) return std::unexpected(same.error());
  return same->front();
}

}  // namespace ktune

namespace ktune {

Status CudaChecker::fill(CUdeviceptr out, DType dtype, std::int64_t n, std::uint64_t seed,
                         DataSet set, CUstream stream) {
  if (n <= 0) return {};
  long long count = n;
  int code = static_cast<int>(dtype);  // DType's order is the kernel's
  int stress = set == DataSet::kStress ? 1 : 0;
  void* params[] = {&out, &count, &seed, &code, &stress};
  return launch(fill_, n, params, stream);
}

Status CudaChecker::poison(CUdeviceptr p, std::size_t bytes, DType dtype, CUstream stream) {
  if (bytes == 0) return {};
  long long count = static_cast<long long>(bytes);
  std::uint64_t pattern = poison_bits(dtype);
  int size = static_cast<int>(dtype_size(dtype));
  void* params[] = {&p, &count, &pattern, &size};
  return launch(pattern_, count, params, stream);
}

}  // namespace ktune
