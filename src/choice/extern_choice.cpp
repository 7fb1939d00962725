// make_extern_choice: the registry of library-call kinds this build knows.
#include "ktune/choice/extern_choice.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "choice/openblas_gemm.h"

namespace ktune {

std::vector<std::string> extern_kinds() { return {"openblas.gemm"}; }

Result<ChoicePtr> make_extern_choice(const ExternDesc& desc) {
  if (desc.kind == "openblas.gemm") return make_openblas_gemm(desc);
  return make_error(ErrorCode::kInvalidArgument,
                    fmt::format("extern choice '{}': unknown kind '{}'; known kinds: {}", desc.name,
                                desc.kind, fmt::join(extern_kinds(), ", ")));
}

}  // namespace ktune
