// --devices (ktune/tuning/devices.h): the list parsed, then checked against the machine.
#include "ktune/tuning/devices.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sched.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <optional>
#include <set>

#include "core/build_support.h"
#include "ktune/backend/backend.h"
#if KTUNE_HAVE_OPENCL
#include "backend/opencl_api.h"
#endif
#if KTUNE_HAVE_CUDA
#include "core/cuda_driver.h"
#endif

namespace ktune {
namespace {

Error bad(std::string_view text, std::string_view why) {
  return Error{ErrorCode::kInvalidArgument,
               fmt::format("--devices {}: {} (expected all, or a comma-separated list of "
                           "indices such as 0,1 or, on the CPU, of cores and core ranges such as "
                           "0-3,4-7)",
                           text, why)};
}

std::optional<int> number(std::string_view s) {
  int v = 0;
  if (s.empty()) return std::nullopt;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

// "0-3": 0,1,2,3 as words, for slot names.
std::string core_words(const std::vector<int>& cores) {
  if (cores.size() > 1 && cores.back() - cores.front() + 1 == static_cast<int>(cores.size())) {
    return fmt::format("{}-{}", cores.front(), cores.back());
  }
  return fmt::format("{}", fmt::join(cores, "+"));
}

std::vector<int> allowed_cores() {
  std::vector<int> out;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) out.push_back(c);
  }
  return out;
}

// Each item a single number (GPU and OpenCL device lists take no ranges of one device).
Result<std::vector<int>> single_indices(const DeviceList& list, std::string_view what) {
  std::vector<int> out;
  std::set<int> seen;
  for (const std::vector<int>& item : list.items) {
    for (int i : item) {  // a range of devices means each of them
      if (!seen.insert(i).second) {
        return make_error(ErrorCode::kInvalidArgument,
                          fmt::format("--devices: {} {} is listed twice", what, i));
      }
      out.push_back(i);
    }
  }
  return out;
}

Result<std::vector<DeviceSlot>> opencl_slots(const DeviceList& list, const Backend& backend) {
#if !KTUNE_HAVE_OPENCL
  (void)list, (void)backend;
  return std::unexpected(not_built(BuildFeature::kOpenCL));
#else
  const std::string want = backend.device_fingerprint();
  // The platform of the backend's device (the first with a device of its fingerprint), its
  // device count, and the indices on it of the devices like it.
  std::optional<int> platform;
  std::vector<int> alike;
  int count = 0;
  for (int p = 0; p < 16 && !platform; ++p) {
    for (int d = 0; d < 256; ++d) {
      auto info = opencl_select_device(fmt::format("{}:{}", p, d));
      if (!info) {
        if (info.error().code == ErrorCode::kUnavailable) return std::unexpected(info.error());
        break;  // no device d on platform p (or no platform p)
      }
      if (info->fingerprint() == want) {
        platform = p;
        alike.push_back(d);
      }
      count = d + 1;
    }
  }
  if (!platform) {
    return make_error(ErrorCode::kNotFound,
                      fmt::format("--devices: the OpenCL device ktune compiles for ({}) is not "
                                  "among the devices it can open",
                                  want));
  }
  std::vector<int> chosen = alike;
  if (!list.all) {
    auto picked = single_indices(list, "OpenCL device");
    if (!picked) return std::unexpected(picked.error());
    chosen = *picked;
    for (int d : chosen) {
      if (d >= count) {
        return make_error(ErrorCode::kInvalidArgument,
                          fmt::format("--devices: OpenCL platform {} has {} device(s); there is "
                                      "no device {}",
                                      *platform, count, d));
      }
      if (std::find(alike.begin(), alike.end(), d) == alike.end()) {
        return make_error(ErrorCode::kInvalidArgument,
                          fmt::format("--devices: OpenCL device {}:{} is not the model ktune "
                                      "compiles for ({}); tune each model on its own",
                                      *platform, d, want));
      }
    }
  }
  std::vector<DeviceSlot> out;
  for (int d : chosen) {
    const std::string selector = fmt::format("{}:{}", *platform, d);
    out.push_back({"opencl:" + selector, {{kOpenCLDeviceEnv, selector}}, {}});
  }
  return out;
#endif
}

// The ordinals `list` names among `count` GPUs, each checked to exist and named once.
Result<std::vector<int>> cuda_ordinals(const DeviceList& list, int count) {
  if (count <= 0) {
    return make_error(ErrorCode::kUnavailable, "--devices: no CUDA GPU is visible");
  }
  std::vector<int> ordinals;
  if (list.all) {
    for (int i = 0; i < count; ++i) ordinals.push_back(i);
    return ordinals;
  }
  auto picked = single_indices(list, "GPU");
  if (!picked) return std::unexpected(picked.error());
  for (int i : *picked) {
    if (i >= count) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("--devices: {} GPU(s) visible (0-{}); there is no GPU {}",
                                    count, count - 1, i));
    }
  }
  return picked;
}

std::vector<DeviceSlot> cuda_slots_of(const std::vector<int>& ordinals) {
  std::vector<DeviceSlot> out;
  for (int i : ordinals) {
    out.push_back(
        {fmt::format("cuda:{}", i), {{"CUDA_VISIBLE_DEVICES", cuda_visible_device(i)}}, {}});
  }
  return out;
}

#if KTUNE_HAVE_CUDA
// The GPUs the driver shows this process (0 when it shows none).
Result<int> visible_gpu_count() {
  auto cu = cuda_driver();
  if (!cu) return std::unexpected(cu.error());
  int count = 0;
  if ((*cu)->DeviceGetCount(&count) != CUDA_SUCCESS) count = 0;
  return count;
}
#endif

Result<std::vector<DeviceSlot>> cuda_slots(const DeviceList& list, const Backend& backend) {
#if !KTUNE_HAVE_CUDA
  (void)list, (void)backend;
  return std::unexpected(not_built(BuildFeature::kCuda));
#else
  auto count = visible_gpu_count();
  if (!count) return std::unexpected(count.error());
  auto ordinals = cuda_ordinals(list, *count);
  if (!ordinals) return std::unexpected(ordinals.error());
  // Every GPU of the list must be the model the kernels are compiled and keyed for.
  const std::string want = backend.device_fingerprint();
  for (int i : *ordinals) {
    auto info = cuda_device_info(i);
    if (!info) return std::unexpected(info.error());
    if (info->fingerprint() != want) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("--devices: GPU {} is {}, not the GPU ktune compiles and "
                                    "keys its picks for ({}); tune each model on its own",
                                    i, info->fingerprint(), want));
    }
  }
  return cuda_slots_of(*ordinals);
#endif
}

}  // namespace

Result<DeviceList> parse_device_list(std::string_view text) {
  DeviceList out;
  if (text == "all") {
    out.all = true;
    return out;
  }
  if (text.empty()) return std::unexpected(bad(text, "empty"));
  std::size_t at = 0;
  while (at <= text.size()) {
    std::size_t end = text.find(',', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view item = text.substr(at, end - at);
    const std::size_t dash = item.find('-');
    std::vector<int> numbers;
    if (dash == std::string_view::npos) {
      auto n = number(item);
      if (!n) return std::unexpected(bad(text, fmt::format("'{}' is not an index", item)));
      numbers.push_back(*n);
    } else {
      auto a = number(item.substr(0, dash));
      auto b = number(item.substr(dash + 1));
      if (!a || !b || *a > *b) {
        return std::unexpected(bad(text, fmt::format("'{}' is not a range a-b with a <= b", item)));
      }
      if (*b - *a >= 4096) return std::unexpected(bad(text, fmt::format("'{}' is too wide", item)));
      for (int i = *a; i <= *b; ++i) numbers.push_back(i);
    }
    out.items.push_back(std::move(numbers));
    at = end + 1;
  }
  return out;
}

Result<std::vector<DeviceSlot>> cpu_device_slots(const DeviceList& list,
                                                 const std::vector<int>& allowed) {
  if (list.all) return std::vector<DeviceSlot>{{"cpu:" + core_words(allowed), {}, allowed}};
  std::vector<DeviceSlot> out;
  std::set<int> used;
  for (const std::vector<int>& cores : list.items) {
    for (int c : cores) {
      if (std::find(allowed.begin(), allowed.end(), c) == allowed.end()) {
        return make_error(ErrorCode::kInvalidArgument,
                          fmt::format("--devices: core {} is not one ktune may run on ({})", c,
                                      core_words(allowed)));
      }
      if (!used.insert(c).second) {
        return make_error(ErrorCode::kInvalidArgument,
                          fmt::format("--devices: core {} is in two devices; each device's "
                                      "cores must be its own",
                                      c));
      }
    }
    // Picks are made for a device's core count: every device must have the same.
    if (cores.size() != list.items.front().size()) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("--devices: cpu:{} has {} core(s), cpu:{} has {}; every CPU "
                                    "device must have as many cores (the picks are for that "
                                    "many)",
                                    core_words(list.items.front()), list.items.front().size(),
                                    core_words(cores), cores.size()));
    }
    out.push_back({"cpu:" + core_words(cores), {}, cores});
  }
  return out;
}

Result<std::vector<DeviceSlot>> cuda_device_slots(const DeviceList& list, int count) {
  auto ordinals = cuda_ordinals(list, count);
  if (!ordinals) return std::unexpected(ordinals.error());
  return cuda_slots_of(*ordinals);
}

std::string cuda_visible_device(int ordinal) {
  const char* env = std::getenv("CUDA_VISIBLE_DEVICES");
  if (env == nullptr || *env == '\0') return std::to_string(ordinal);
  std::string_view list(env);
  for (int i = 0; !list.empty(); ++i) {
    const std::size_t comma = list.find(',');
    const std::string_view entry = list.substr(0, comma);
    if (i == ordinal) return std::string(entry);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return std::to_string(ordinal);
}

Status precheck_devices(std::string_view text, DeviceKind kind) {
  if (text.empty()) return {};
  auto list = parse_device_list(text);
  if (!list) return std::unexpected(list.error());
  if (kind != DeviceKind::kCuda) return {};
#if !KTUNE_HAVE_CUDA
  return std::unexpected(not_built(BuildFeature::kCuda));
#else
  auto count = visible_gpu_count();
  if (!count) return std::unexpected(count.error());
  if (auto ordinals = cuda_ordinals(*list, *count); !ordinals) {
    return std::unexpected(ordinals.error());
  }
  return {};
#endif
}

int first_listed_device(std::string_view devices, int fallback) {
  if (devices.empty()) return fallback;
  auto list = parse_device_list(devices);
  if (!list || list->all || list->items.empty() || list->items.front().empty()) return fallback;
  return list->items.front().front();
}

Result<std::vector<DeviceSlot>> device_slots(std::string_view text, const Backend& backend) {
  if (text.empty()) return std::vector<DeviceSlot>{};
  auto list = parse_device_list(text);
  if (!list) return std::unexpected(list.error());
  switch (backend.kind()) {
    case DeviceKind::kCpu:
      return cpu_device_slots(*list, allowed_cores());
    case DeviceKind::kCuda:
      return cuda_slots(*list, backend);
    case DeviceKind::kOpenCL:
      return opencl_slots(*list, backend);
  }
  return make_error(ErrorCode::kInvalidArgument, "--devices: unknown device kind");
}

}  // namespace ktune
