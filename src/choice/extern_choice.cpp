// make_extern_choice: the registry of library-call kinds this build knows.
#include "ktune/choice/extern_choice.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>

#include "choice/openblas_gemm.h"
#include "core/build_support.h"
#if KTUNE_HAVE_CUDA
#include "ktune/choice/cublas_choice.h"
#endif

namespace ktune {

namespace {

#if KTUNE_HAVE_CUDA
// cublas.gemm: the roles resolved to argument indices, in make_cublas_gemm_choice's order.
Result<ChoicePtr> make_cublas_extern(const ExternDesc& desc) {
  constexpr const char* kRoles[] = {"c", "a", "b", "m", "n", "k"};
  std::vector<int> bind;
  for (const char* role : kRoles) {
    auto it = std::find_if(desc.bind.begin(), desc.bind.end(),
                           [&](const auto& kv) { return kv.first == role; });
    if (it == desc.bind.end()) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("extern choice '{}': cublas.gemm needs the role '{}' "
                                    "(roles: c, a, b, m, n, k)",
                                    desc.name, role));
    }
    auto arg = std::find(desc.arg_names.begin(), desc.arg_names.end(), it->second);
    if (arg == desc.arg_names.end()) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("extern choice '{}': {}: '{}' is not an argument; cublas.gemm "
                                    "binds each role to an argument",
                                    desc.name, role, it->second));
    }
    bind.push_back(static_cast<int>(arg - desc.arg_names.begin()));
  }
  for (const auto& [role, value] : desc.bind) {
    if (std::find_if(std::begin(kRoles), std::end(kRoles),
                     [&](const char* r) { return role == r; }) == std::end(kRoles)) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("extern choice '{}': unknown role '{}'; cublas.gemm has the "
                                    "roles c, a, b, m, n, k (no transposes, alpha 1, beta 0)",
                                    desc.name, role));
    }
  }
  return make_cublas_gemm_choice(std::move(bind), desc.name);
}
#endif

}  // namespace

std::vector<std::string> extern_kinds() {
  std::vector<std::string> kinds{"openblas.gemm"};
  if constexpr (kBuiltWithCuda) kinds.push_back("cublas.gemm");
  return kinds;
}

std::string extern_kind_language(std::string_view kind) {
  if (kind == "openblas.gemm") return "c++";
  if (kind == "cublas.gemm" && kBuiltWithCuda) return "cuda";
  return {};
}

Result<ChoicePtr> make_extern_choice(const ExternDesc& desc) {
  if (desc.kind == "openblas.gemm") return make_openblas_gemm(desc);
#if KTUNE_HAVE_CUDA
  if (desc.kind == "cublas.gemm") return make_cublas_extern(desc);
#endif
  return make_error(ErrorCode::kInvalidArgument,
                    fmt::format("extern choice '{}': unknown kind '{}'; known kinds: {}", desc.name,
                                desc.kind, fmt::join(extern_kinds(), ", ")));
}

}  // namespace ktune
