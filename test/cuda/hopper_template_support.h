// What the Hopper GEMM template tests share (cuda_gemm_wgmma_test.cpp, cuda_gemm_wgmma_align_test,
// cuda_gemm_tma_test.cpp): the template by name prefix, a config's integer parameter, an
// epilogue from text, whether NVRTC is installed, and compiling many choices for sm_90a.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/thread_pool.h"
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

// Compiles each (choice, problem) of `work` for sm_90a on 2 threads and builds its launch spec
// for the problem; "name: message" for each failure, `launch_ok`'s refusal of a spec included.
inline std::vector<std::string> compile_all_sm90a(
    std::vector<std::pair<ChoicePtr, Problem>>& work,
    const std::function<bool(const LaunchSpec&)>& launch_ok) {
  TempDir cache("cuda-hopper-compile");
  Result<CudaBackend> backend = CudaBackend::create({.arch = "sm_90a"}, cache.path());
  if (!backend) return {"backend: " + backend.error().message};
  std::vector<std::string> failures;
  std::mutex mu;
  {
    ThreadPool pool(2);
    for (auto& [choice, problem] : work) {
      pool.submit([&, c = choice.get(), p = &problem] {
        std::string failure;
        if (Status s = c->compile(*backend); !s) {
          failure = s.error().message;
        } else if (Result<LaunchSpec> spec = c->launch_spec(*p); !spec) {
          failure = spec.error().message;
        } else if (!launch_ok(*spec)) {
          failure = "unexpected launch spec";
        }
        if (!failure.empty()) {
          std::lock_guard lock(mu);
          failures.push_back(c->name() + ": " + failure);
        }
      });
    }
    pool.wait_idle();
  }
  return failures;
}

}  // namespace ktune::test
