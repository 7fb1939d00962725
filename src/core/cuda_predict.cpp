// predict_cuda_device: NVML through dlopen; the thread's device hint.
#include "core/cuda_predict.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace ktune {
namespace {

thread_local const ScopedCudaDeviceHint* t_top = nullptr;  // the innermost hint

// The NVML functions used, by their exported names; every one returns nvmlReturn_t (0: success).
struct Nvml {
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*count)(unsigned*) = nullptr;
  int (*handle)(unsigned, void**) = nullptr;
  int (*name)(void*, char*, unsigned) = nullptr;
  int (*capability)(void*, int*, int*) = nullptr;
  int (*cores)(void*, unsigned*) = nullptr;
  int (*mig_mode)(void*, unsigned*, unsigned*) = nullptr;
  int (*driver_version)(int*) = nullptr;
};

std::optional<Nvml> open_nvml() {
  void* lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (lib == nullptr) return std::nullopt;
  Nvml n;
  const auto get = [lib](auto& fn, const char* symbol) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(lib, symbol));
    return fn != nullptr;
  };
  const bool all =
      get(n.init, "nvmlInit_v2") && get(n.shutdown, "nvmlShutdown") &&
      get(n.count, "nvmlDeviceGetCount_v2") && get(n.handle, "nvmlDeviceGetHandleByIndex_v2") &&
      get(n.name, "nvmlDeviceGetName") && get(n.capability, "nvmlDeviceGetCudaComputeCapability") &&
      get(n.cores, "nvmlDeviceGetNumGpuCores") && get(n.mig_mode, "nvmlDeviceGetMigMode") &&
      get(n.driver_version, "nvmlSystemGetCudaDriverVersion_v2");
  if (!all) return std::nullopt;
  return n;
}

// The model's facts of one NVML device; nullopt when a query fails or MIG is on.
std::optional<CudaDeviceInfo> nvml_facts(const Nvml& n, unsigned i) {
  void* dev = nullptr;
  if (n.handle(i, &dev) != 0) return std::nullopt;
  unsigned mig = 0, pending = 0;
  // NVML_ERROR_NOT_SUPPORTED (3): a GPU without MIG.
  if (const int r = n.mig_mode(dev, &mig, &pending); r == 0 ? mig != 0 : r != 3) {
    return std::nullopt;
  }
  CudaDeviceInfo info;
  char name[96] = {};
  unsigned cores = 0;
  if (n.name(dev, name, sizeof name) != 0 ||
      n.capability(dev, &info.cc_major, &info.cc_minor) != 0 || n.cores(dev, &cores) != 0) {
    return std::nullopt;
  }
  const int per_sm = cuda_cores_per_sm(info.cc_major, info.cc_minor);
  if (per_sm == 0 || cores == 0 || cores % per_sm != 0) return std::nullopt;
  info.name = name;
  info.sm_count = static_cast<int>(cores / per_sm);
  return info;
}

}  // namespace

int cuda_cores_per_sm(int cc_major, int cc_minor) {
  switch (cc_major) {
    case 6:
      return cc_minor == 0 ? 64 : 128;
    case 7:
      return 64;
    case 8:
      return cc_minor == 0 ? 64 : 128;
    case 9:
    case 10:
    case 12:
      return 128;
    default:
      return 0;
  }
}

std::optional<unsigned> cuda_visible_count(const char* visible, unsigned count) {
  if (visible == nullptr) return count;
  unsigned n = 0;
  std::string_view rest = visible;
  while (n < count) {
    const std::size_t comma = rest.find(',');
    std::string_view entry = rest.substr(0, comma);
    while (!entry.empty() && entry.front() == ' ') entry.remove_prefix(1);
    while (!entry.empty() && entry.back() == ' ') entry.remove_suffix(1);
    if (entry.starts_with("MIG-")) return std::nullopt;
    unsigned i = 0;
    const auto [end, ec] = std::from_chars(entry.data(), entry.data() + entry.size(), i);
    const bool index = !entry.empty() && ec == std::errc() && end == entry.data() + entry.size();
    if (!(index && i < count) && !entry.starts_with("GPU-")) break;  // the list ends here
    ++n;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return n;
}

std::string prediction_text(const CudaDeviceInfo& predicted) {
  return fmt::format("{} ({}, {} SMs, from NVML)", predicted.name, predicted.arch(),
                     predicted.sm_count);
}

std::optional<CudaDeviceInfo> predict_cuda_device(int index) {
  static const std::optional<Nvml> nvml = open_nvml();
  if (!nvml || index < 0) return std::nullopt;
  if (nvml->init() != 0) return std::nullopt;
  std::optional<CudaDeviceInfo> out;
  unsigned count = 0;
  int driver = 0;
  std::optional<unsigned> visible;
  if (nvml->count(&count) == 0)
    visible = cuda_visible_count(std::getenv("CUDA_VISIBLE_DEVICES"), count);
  if (visible && static_cast<unsigned>(index) < *visible && nvml->driver_version(&driver) == 0) {
    // Every device alike, so that which one CUDA calls `index` does not matter.
    for (unsigned i = 0; i < count; ++i) {
      std::optional<CudaDeviceInfo> f = nvml_facts(*nvml, i);
      const bool same =
          f && (i == 0 || (f->name == out->name && f->cc_major == out->cc_major &&
                           f->cc_minor == out->cc_minor && f->sm_count == out->sm_count));
      if (!same) {
        out.reset();
        break;
      }
      if (i == 0) out = std::move(f);
    }
  }
  nvml->shutdown();
  if (out) {
    out->index = index;
    out->driver_version = driver;
  }
  return out;
}

ScopedCudaDeviceHint::ScopedCudaDeviceHint(CudaDeviceInfo facts)
    : previous_(t_top), facts_(std::move(facts)) {
  t_top = this;
}

ScopedCudaDeviceHint::~ScopedCudaDeviceHint() { t_top = previous_; }

const CudaDeviceInfo* cuda_device_hint(int index) {
  for (const ScopedCudaDeviceHint* h = t_top; h != nullptr; h = h->previous_) {
    if (h->facts_.index == index) return &h->facts_;
  }
  return nullptr;
}

}  // namespace ktune
