// Private to the codegen module: a graph with CUDA picks as the CUDA codegen sees it (the picks'
// launches checked and flattened, the cubins read, the arena planned), built by
// emit_cuda_wrapper() (cuda_wrapper.cpp) and written out by the functions below
// (cuda_wrapper_program.cpp, cuda_wrapper_run.cpp, cuda_wrapper_main.cpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ktune/codegen/graph_fusion.h"
#include "ktune/codegen/memory_plan.h"
#include "ktune/core/launch_spec.h"
#include "ktune/core/status.h"

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

// A generated kernel of the program: an extern "C" instance of one of the templates of
// cuda_kernels_snippet() for one element type and shape class, loaded from <graph>_kernels.cubin
// by name.
struct CudaKernel {
  std::string name;        // "ktune_pointwise_gelu_bf16_v"
  std::string definition;  // its extern "C" __global__ text
};
// A node that is not a gemm, as a launch of one of the program's kernels.
struct CudaLaunch {
  std::size_t kernel = 0;  // index into CudaProgram::kernels
  std::array<std::int64_t, 3> grid{1, 1, 1};
  std::array<std::int64_t, 3> block{1, 1, 1};
  // C++ expressions of exactly the kernel parameters' types, in order ("x", "4096LL", "64",
  // "0.125f"): ktune_launch() passes each by address to cuLaunchKernel.
  std::vector<std::string> args;
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
  std::vector<CudaKernel> kernels;             // the generated kernels, each once
  std::map<std::string, CudaLaunch> launches;  // by node name: every node that is not a gemm
  bool uses_cublas = false;
  std::size_t workspace_offset = 0;  // in the arena, after the plan's buffers
  std::size_t workspace_bytes = 0;   // 0 without library GEMMs or template workspaces
  // The largest LaunchSpec::workspace_bytes of a cubin step (shares the library workspace's
  // bytes: the steps run in order on one stream).
  std::size_t template_workspace_bytes = 0;
  std::size_t arena_bytes = 0;  // the one allocation: the plan's buffers and the workspace
};

// A graph with its fusions applied (apply_fusions) as the CUDA codegen runs it: a scale that
// only a row_softmax reads folded into it, every value's spec; no gemm steps yet (add_gemm).
[[nodiscard]] Result<CudaProgram> cuda_program(const Graph& graph,
                                               const std::map<std::string, GemmPick>& picks);
// Every node that is not a gemm as a launch of a generated kernel (CudaProgram::launches,
// ::kernels): the instance, grid and block follow from the node's op, dtype and shape alone.
void plan_kernels(CudaProgram& p);
// <graph>_kernels.cu: the kernel templates and the program's instances (empty without any).
[[nodiscard]] std::string emit_cuda_kernels(const CudaProgram& p);

// v as a C++ float literal that reads back as the same float ("0.5f", "1e-05f").
[[nodiscard]] std::string cuda_float_literal(double v);
// "float", "__half", "__nv_bfloat16"; the KtuneCudaTensor code 0, 1, 2; "CUDA_R_32F", ...
[[nodiscard]] std::string cuda_ctype(DType dtype);
[[nodiscard]] int cuda_dtype_code(DType dtype);
[[nodiscard]] std::string cuda_data_type(DType dtype);

// `bytes` as `alignas(64) static const unsigned char name[] = {...};`.
[[nodiscard]] std::string cuda_byte_array(const std::string& name, const std::string& bytes);
// The symbol of <graph>_kernels.cubin's bytes in the program (<graph>_kernels.S defines it).
[[nodiscard]] std::string kernels_symbol(const std::string& graph);
// The program struct, create(), destroy(), last_error() and arena_bytes().
[[nodiscard]] std::string emit_cuda_program(const CudaProgram& p);
// <graph>_forward (the steps on a stream), <graph>_capture and <graph>_run.
[[nodiscard]] std::string emit_cuda_run(const CudaProgram& p);
// The benchmark main(), under #ifdef KTUNE_BENCHMARK_MAIN.
[[nodiscard]] std::string emit_cuda_main(const CudaProgram& p);

}  // namespace ktune::codegen::detail
