// Device names and the CPU fingerprint used in tuning-cache keys.
#include "ktune/core/device.h"

#include <fmt/format.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>

namespace ktune {

std::string Device::str() const {
  switch (kind) {
    case DeviceKind::kCpu:
      return "cpu";
    case DeviceKind::kCuda:
      return fmt::format("cuda:{}", index);
    case DeviceKind::kOpenCL:
      return fmt::format("opencl:{}", index);
  }
  return "unknown";
}

std::string cpu_fingerprint() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  std::string model = "unknown-cpu";
  std::string isa;
  // Only the extensions that change generated code under -march=native: a change of any of
  // them must miss the cache, the rest (bugs, power flags) must not.
  static const std::set<std::string> kIsa = {
      "sse4_2",      "avx",         "avx2",     "fma",      "avx512f", "avx512bw", "avx512vl",
      "avx512_fp16", "avx512_bf16", "amx_tile", "amx_bf16", "asimd",   "sve"};
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    if (key == "model name" && model == "unknown-cpu") model = value;
    if ((key == "flags" || key == "Features") && isa.empty()) {
      std::istringstream words(value);
      std::string w;
      while (words >> w) {
        if (kIsa.contains(w)) isa += (isa.empty() ? "" : ",") + w;
      }
    }
  }
  return fmt::format("{} x{} [{}]", model, std::thread::hardware_concurrency(), isa);
}

}  // namespace ktune
