// The "openblas.gemm" extern choice (private to the choice module; built by make_extern_choice).
#pragma once

#include "ktune/choice/extern_choice.h"

namespace ktune {

// `desc.kind` is "openblas.gemm"; fails (kInvalidArgument) on a missing, unknown or duplicate
// role or a bad literal.
[[nodiscard]] Result<ChoicePtr> make_openblas_gemm(const ExternDesc& desc);

}  // namespace ktune
