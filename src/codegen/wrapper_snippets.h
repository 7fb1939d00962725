// Private to the codegen module: the fixed parts of a generated wrapper program (the tensor type
// and its checks, allocation, the pointwise and row kernels, the OpenBLAS loader, the benchmark
// helpers), as C++ text. wrapper_codegen.cpp writes the parts that depend on the graph.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "ktune/codegen/graph.h"
#include "ktune/core/status.h"

namespace ktune::codegen::detail {

// Includes the wrapper itself needs (kernels' own includes are added to these).
inline constexpr std::string_view kWrapperIncludes[] = {
    "<algorithm>", "<chrono>",  "<cmath>",   "<cstddef>",          "<cstdint>",
    "<cstdio>",    "<cstdlib>", "<cstring>", "<initializer_list>", "<vector>",
};

// KtuneTensor, ktune_check, ktune_alloc, ktune_tensor.
[[nodiscard]] std::string_view runtime_snippet();
// The OpenBLAS loader and ktune_openblas::gemm (needs <dlfcn.h>).
[[nodiscard]] std::string_view openblas_snippet();
// The loop kernel of a pointwise or row op (empty for gemm).
[[nodiscard]] std::string_view op_snippet(OpKind op);
// ktune_random_fill and ktune_median_ms, for the benchmark main().
[[nodiscard]] std::string_view benchmark_snippet();
// The benchmark's usage text (kUsage) for the program `name`: `name [RUNS [SEED]]`.
[[nodiscard]] std::string benchmark_usage(std::string_view name);
// The opening of the benchmark's main(): --help, RUNS and SEED parsed into `runs` and `seed`,
// anything else refused with the usage and exit 2. The CPU and CUDA programs' mains go on from
// there.
[[nodiscard]] std::string_view benchmark_main_args();

// Runs a compiler command line (wrapper_build.cpp; the CUDA codegen's nvcc too): kCompile with
// its output's tail when it fails, kTimeout past `timeout`. The last argument names the output.
[[nodiscard]] Status run_compiler(const std::vector<std::string>& argv,
                                  std::chrono::milliseconds timeout);

}  // namespace ktune::codegen::detail
