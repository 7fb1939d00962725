// The "openblas.gemm" extern choice (built by make_extern_choice) and its launch, which the CPU
// device (src/device/cpu) loads.
#pragma once

#include "ktune/choice/extern_choice.h"

namespace ktune {

// `desc.kind` is "openblas.gemm"; fails (kInvalidArgument) on a missing, unknown or duplicate
// role or a bad literal.
[[nodiscard]] Result<ChoicePtr> make_openblas_gemm(const ExternDesc& desc);

// A kCpuLibrary LaunchSpec of library "openblas" (what the choice's launch_spec() gives) as the
// call on `problem`'s arguments: how a worker or the CPU device runs it. kUnavailable for
// another library or without OpenBLAS, kInvalidArgument for a spec that does not fit.
[[nodiscard]] Result<KernelFn> load_openblas_launch(const LaunchSpec& spec, const Problem& problem);

}  // namespace ktune
