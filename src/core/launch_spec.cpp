// LaunchSpec kind names, as they appear in the worker protocol, and a spec's identity as text.
#include "ktune/core/launch_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ktune {
namespace {

constexpr std::pair<LaunchKind, std::string_view> kNames[] = {
    {LaunchKind::kCpuSharedObject, "cpu_so"},       {LaunchKind::kCpuLibrary, "cpu_library"},
    {LaunchKind::kCudaCubin, "cuda_cubin"},         {LaunchKind::kCudaLibrary, "cuda_library"},
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

bool is_library_launch(LaunchKind kind) {
  return kind == LaunchKind::kCudaLibrary || kind == LaunchKind::kCpuLibrary;
}

std::string launch_key(const LaunchSpec& s) {
  std::string key =
      fmt::format("{} {} {} grid={} block={} shared={} {} algo={} bind={} epilogue={}",
                  launch_kind_name(s.kind), s.artifact.string(), s.entry, fmt::join(s.grid, ","),
                  fmt::join(s.block, ","), s.shared_bytes, s.library, s.algo,
                  fmt::join(s.bind, ","), s.library_epilogue);
  if (s.alpha != 1) key += fmt::format(" alpha={}", s.alpha);
  for (const TensorMapDesc& t : s.tensor_maps) {
    key +=
        fmt::format(" tmap=arg{}:{}B:{}x{}:stride{}:box{}x{}:sw{}", t.arg, t.element_bytes,
                    t.dims[0], t.dims[1], t.row_stride_bytes, t.box[0], t.box[1], t.swizzle_bytes);
  }
  for (const LaunchSpec& t : s.then) key += " then " + launch_key(t);
  return key;
}

}  // namespace ktune
