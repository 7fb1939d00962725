// `ktune compile`'s flags, shared by the CPU path (cmd_compile.cpp) and the CUDA one
// (compile_cuda.cpp, built with CUDA support only).
#pragma once

#include <string>

#include "cli.h"
#include "ktune/core/status.h"
#include "options.h"

namespace ktune::cli {

struct CompileFlags {
  std::string graph;
  std::string output;
  std::string planner = "pool";
  bool planner_set = false;
  bool no_build = false;
  std::string gemm_spec;
  std::string force_pick;
  bool no_fuse = false;
  SelectorFlags selector;  // over compile_defaults() (CPU) or cuda_gemm_selector_defaults()
  std::string cxx;
  // --device cpu | cuda | cuda:N, and what applies to cuda only.
  std::string device = "cpu";
  std::string arch;
  bool arch_set = false;
  std::string nvcc;
  bool nvcc_set = false;
  int cublaslt_algos = 8;
  bool cublaslt_algos_set = false;
};

struct CompileDevice {
  bool cuda = false;
  int index = 0;  // cuda:N
};
// "cpu", "cuda", "cuda:N" (N in 0..1023); the error says what is accepted.
[[nodiscard]] Result<CompileDevice> parse_compile_device(const std::string& text);

// ktune compile --device cuda (compile_cuda.cpp).
[[nodiscard]] int run_compile_cuda(const CompileFlags& flags, int device, const CliContext& ctx);

}  // namespace ktune::cli
