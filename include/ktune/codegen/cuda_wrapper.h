// The CUDA wrapper codegen (`ktune compile --device cuda`): the twin of emit_wrapper() for a
// graph whose gemm picks are CUDA launches (pick_cuda_gemms). One readable CUDA C++ source:
//   - the picks' cubins embedded as byte arrays (loaded with cuModuleLoadData), cuBLAS and
//     cuBLASLt calls set up as ktune's worker measured them (the same descriptors, preferences,
//     32 MiB workspace and heuristic answer index), a library GEMM's separate epilogue kernel
//     after it;
//   - the other nodes as generated kernels templated on the element type (float, __half,
//     __nv_bfloat16; math in fp32), pointwise ones with 16-byte accesses where the shape allows;
//   - intermediates at the offsets of plan_memory(kArena, kCudaArenaAlignment); the outputs are
//     the caller's buffers (PlanBuffer::external) and never in the arena;
//   - the C ABI below: the forward is captured once into a CUDA graph on a private stream and
//     replayed on the caller's stream (the legacy default stream included), captured again
//     (cudaGraphExecUpdate) when the tensors' addresses change.
//
//   struct KtuneCudaTensor { void* data; int dtype; /* 0 f32, 1 f16, 2 bf16 */ int device;
//                            int ndim; int64_t sizes[8]; int64_t strides[8]; };
//   int  <graph>_create(<graph>_program** out);   // on the current device: ONE cudaMalloc of
//                                                 // <graph>_arena_bytes() (plan + workspace)
//   int  <graph>_run(<graph>_program*, const KtuneCudaTensor* inputs, int num_inputs,
//                    const KtuneCudaTensor* outputs, int num_outputs, cudaStream_t stream);
//   const char* <graph>_last_error(const <graph>_program*);
//   void <graph>_destroy(<graph>_program*);
//   size_t <graph>_arena_bytes(void);
//
// run() checks every tensor's count, dtype, sizes, row-major strides, device and 16-byte
// alignment and answers nonzero with a message naming the tensor, expected against got. Built
// with -DKTUNE_BENCHMARK_MAIN the source has a main(): `<graph> [RUNS [SEED]]` times RUNS graph
// replays with CUDA events and prints the median and the arena's size. The text depends only on
// the graph and the picks (the cubins' bytes included): no dates, paths or timings.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <string>

#include "ktune/codegen/graph_tuning.h"
#include "ktune/codegen/wrapper_codegen.h"
#include "ktune/core/status.h"

namespace ktune::codegen {

// Bytes of the cuBLAS / cuBLASLt workspace at the arena's end when a library GEMM is used: the
// worker's (cublas_gemm_runner.cpp), since cuBLASLt's heuristic answers depend on it.
inline constexpr std::size_t kCudaWorkspaceBytes = std::size_t{32} << 20;

// `picks`: one per gemm node, each with `launch` (a kCudaCubin, or a kCudaLibrary "cublas" /
// "cublaslt" launch with C, A, B, M, N, K bound as arguments 0..5 and cuBLASLt's bias as 6,
// and `then` launches of cubins). kInvalidArgument, naming the gemm, for anything else (a CPU
// pick, another launch kind or library, an epilogue that does not match the fused nodes), kIo
// when a cubin cannot be read. Wrapper::plan is the arena plan (outputs external).
[[nodiscard]] Result<Wrapper> emit_cuda_wrapper(const Graph& graph,
                                                const std::map<std::string, GemmPick>& picks);

struct CudaBuildOptions {
  // $KTUNE_NVCC when set, else the CUDA toolkit's (<root>/bin/nvcc of $CUDA_HOME, $CUDA_PATH or
  // /usr/local/cuda) when present, else "nvcc" from PATH.
  std::string nvcc = default_nvcc();
  std::string arch = "sm_90a";  // sm_XY[a]: -gencode arch=compute_XY[a],code=sm_XY[a]
  std::chrono::milliseconds timeout{300'000};  // per nvcc run

  [[nodiscard]] static std::string default_nvcc();
};

// The nvcc command lines for `wrapper` written as <dir>/<graph>.cu.
[[nodiscard]] WrapperFiles cuda_wrapper_files(const Graph& graph, const std::filesystem::path& dir,
                                              const CudaBuildOptions& options);
// Writes <dir>/<graph>.cu (the folder created when missing); with `build`, compiles
// lib<graph>.so and the benchmark <graph> (kCompile with nvcc's output tail, kTimeout past the
// deadline).
[[nodiscard]] Result<WrapperFiles> write_cuda_wrapper(const Graph& graph, const Wrapper& wrapper,
                                                      const std::filesystem::path& dir,
                                                      const CudaBuildOptions& options, bool build);

}  // namespace ktune::codegen
