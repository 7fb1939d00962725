// Private to the codegen module: a graph with CUDA picks as the CUDA codegen sees it (the picks'
// launches checked and flattened, the cubins read, the arena planned), built by
// emit_cuda_wrapper() (cuda_wrapper.cpp) and written out by the functions below
// (cuda_wrapper_program.cpp, cuda_wrapper_run.cpp, cuda_wrapper_main.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ktune/codegen/graph_fusion.h"
#include "ktune/codegen/memory_plan.h"
#include "ktune/core/launch_spec.h"

namespace ktune::codegen::detail {

// One launch of a gemm node's pick: its LaunchSpec first, then each of its `then` launches.
struct CudaStep {
  enum class Kind { kCubin, kCublas, kCublasLt };
  Kind kind = Kind::kCubin;
  LaunchSpec spec;     // without `then`
  std::size_t fn = 0;  // kCubin: index into CudaProgram::functions
  std::size_t lt = 0;  // kCublasLt: index into CudaProgram::lt
  std::string bias;    // kCublasLt with a bias epilogue: the graph value it reads
};

struct CudaModule {
  std::string choice;  // the pick that brought it (the first one, when several share it)
  std::string bytes;   // the cubin
};
struct CudaFunction {
  std::size_t module = 0;
  std::string entry;
  std::uint32_t shared_bytes = 0;  // the largest dynamic shared memory it is launched with
};
struct CudaLtGemm {
  std::string node;
  std::string type;  // "CUDA_R_16BF"
  std::int64_t m = 0, n = 0, k = 0;
  int epilogue = 0;  // cublasLtEpilogue_t
  int algo = 0;
};

struct CudaProgram {
  FusedGraph fg;  // apply_fusions()'s, with a scale that only a softmax reads folded into it
  MemoryPlan plan;
  std::map<std::string, TensorSpec> specs;             // every graph value
  std::map<std::string, std::vector<CudaStep>> gemms;  // by node name
  std::map<std::string, double> softmax_scale;         // row_softmax nodes with a folded scale
  std::map<std::string, std::string> folded;           // softmax node -> the scale it absorbed
  std::vector<CudaModule> modules;
  std::vector<CudaFunction> functions;
  std::vector<CudaLtGemm> lt;
  bool uses_cublas = false;
  std::size_t workspace_offset = 0;  // in the arena, after the plan's buffers
  std::size_t workspace_bytes = 0;   // 0 without library GEMMs or template workspaces
  // The largest LaunchSpec::workspace_bytes of a cubin step (shares the library workspace's
  // bytes: the steps run in order on one stream).
  std::size_t template_workspace_bytes = 0;
  std::size_t arena_bytes = 0;  // the one allocation: the plan's buffers and the workspace
};

// "float", "__half", "__nv_bfloat16"; the KtuneCudaTensor code 0, 1, 2; "CUDA_R_32F", ...
[[nodiscard]] std::string cuda_ctype(DType dtype);
[[nodiscard]] int cuda_dtype_code(DType dtype);
[[nodiscard]] std::string cuda_data_type(DType dtype);

// `bytes` as `alignas(64) static const unsigned char name[] = {...};`.
[[nodiscard]] std::string cuda_byte_array(const std::string& name, const std::string& bytes);
// The program struct, create(), destroy(), last_error() and arena_bytes().
[[nodiscard]] std::string emit_cuda_program(const CudaProgram& p);
// <graph>_forward (the steps on a stream), <graph>_capture and <graph>_run.
[[nodiscard]] std::string emit_cuda_run(const CudaProgram& p);
// The benchmark main(), under #ifdef KTUNE_BENCHMARK_MAIN.
[[nodiscard]] std::string emit_cuda_main(const CudaProgram& p);

}  // namespace ktune::codegen::detail
