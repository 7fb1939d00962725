// LaunchSpec kind names, as they appear in the worker protocol.
#include "ktune/core/launch_spec.h"

namespace ktune {
namespace {

constexpr std::pair<LaunchKind, std::string_view> kNames[] = {
    {LaunchKind::kCpuSharedObject, "cpu_so"},
    {LaunchKind::kCudaCubin, "cuda_cubin"},
    {LaunchKind::kCudaLibrary, "cuda_library"},
    {LaunchKind::kOpenCLProgram, "opencl_program"},
};

}  // namespace

std::string_view launch_kind_name(LaunchKind kind) {
  for (const auto& [k, name] : kNames) {
    if (k == kind) return name;
  }
  return "?";
}

bool parse_launch_kind(std::string_view name, LaunchKind* out) {
  for (const auto& [k, n] : kNames) {
    if (n == name) {
      *out = k;
      return true;
    }
  }
  return false;
}

}  // namespace ktune
