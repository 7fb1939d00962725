// Device: which processor a buffer lives on or a kernel runs on, and its fingerprint for cache
// keys.
#pragma once

#include <string>

namespace ktune {

enum class DeviceKind { kCpu, kCuda, kOpenCL };

struct Device {
  DeviceKind kind = DeviceKind::kCpu;
  int index = 0;

  // "cpu", "cuda:0", "opencl:1".
  [[nodiscard]] std::string str() const;
  friend bool operator==(const Device&, const Device&) = default;
};

// Identifies this machine's CPU for tuning-cache keys: model name, logical core count and the
// ISA extensions that -march=native would use. Stable across runs on the same machine.
[[nodiscard]] std::string cpu_fingerprint();

}  // namespace ktune
