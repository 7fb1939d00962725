// What the Hopper GEMM template tests share (cuda_gemm_wgmma_test.cpp, cuda_gemm_wgmma_align_test,
// cuda_gemm_tma_test.cpp): the template by name prefix, a config's integer parameter, an
// epilogue from text, and whether NVRTC is installed.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <variant>

#include "ktune/backend/cuda_backend.h"
#include "ktune/ops/cuda_gemm.h"
#include "support/temp_dir.h"

namespace ktune::test {

// The Hopper template set's template whose name starts with `prefix` ("cuda_gemm_tma_").
inline std::shared_ptr<KernelTemplate> hopper_template(std::string_view prefix, DType dtype,
                                                       const Epilogue& e = {}) {
  for (std::shared_ptr<KernelTemplate>& t : cuda_gemm_templates(dtype, e, true)) {
    if (t->desc().name.starts_with(prefix)) return t;
  }
  return nullptr;
}

inline std::int64_t param(const Config& c, std::string_view name) {
  return std::get<std::int64_t>(*c.find(name));
}

inline Epilogue parse(const char* text) {
  Result<Epilogue> e = Epilogue::parse(text);
  KTUNE_CHECK(e.has_value());
  return *e;
}

inline bool nvrtc_missing() {
  TempDir cache("cuda-hopper-probe");
  Result<CudaBackend> backend = CudaBackend::create({.arch = "sm_90a"}, cache.path());
  return !backend && backend.error().code == ErrorCode::kUnavailable;
}

}  // namespace ktune::test
