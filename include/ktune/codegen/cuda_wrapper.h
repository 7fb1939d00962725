// The CUDA wrapper codegen (`ktune compile --device cuda`): the twin of emit_wrapper() for a
// graph whose gemm picks are CUDA launches (pick_cuda_gemms). Two readable sources:
//   - <graph>.cpp, host code for a C++ compiler: the picks' cubins embedded as byte arrays
//     (loaded with cuModuleLoadData), cuBLAS and cuBLASLt calls set up as ktune's worker
//     measured them (the same descriptors, preferences, 32 MiB workspace and heuristic answer
//     index), a library GEMM's separate epilogue kernel after it; every kernel launched through
//     the driver API (cuLaunchKernel);
//   - <graph>_kernels.cu, for nvcc -cubin: the other nodes as generated kernels, extern "C"
//     instances of templates on the element type (float, __half, __nv_bfloat16; math in fp32),
//     pointwise ones with 16-byte accesses where the shape allows. It depends on the graph (and
//     whether chains fuse), never on the picks: predict_cuda_kernels() gives it before tuning,
//     so that nvcc runs while the gemms are tuned. <graph>_kernels.S embeds the cubin in the
//     library and the benchmark (.incbin);
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
// with -DKTUNE_BENCHMARK_MAIN the host code has a main(): `<graph> [RUNS [SEED]]` times RUNS
// graph replays with CUDA events and prints the median and the arena's size. The texts depend
// only on the graph and the picks (the cubins' bytes included): no dates, paths or timings.
#pragma once

#include <chrono>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <string>

#include "ktune/codegen/graph_tuning.h"
#include "ktune/codegen/wrapper_codegen.h"
#include "ktune/core/status.h"

namespace ktune::codegen {

// Bytes of the cuBLAS / cuBLASLt workspace at the arena's end when a library GEMM is used: the
// worker's (cublas_gemm_runner.cpp), since cuBLASLt's heuristic answers depend on it.
inline constexpr std::size_t kCudaWorkspaceBytes = std::size_t{32} << 20;

struct CudaWrapper {
  std::string host;     // <graph>.cpp
  std::string kernels;  // <graph>_kernels.cu; empty when every step is a gemm
  MemoryPlan plan;
};

// `picks`: one per gemm node, each with `launch` (a kCudaCubin, or a kCudaLibrary "cublas" /
// "cublaslt" launch with C, A, B, M, N, K bound as arguments 0..5 and cuBLASLt's bias as 6,
// and `then` launches of cubins). kInvalidArgument, naming the gemm, for anything else (a CPU
// pick, another launch kind or library, an epilogue that does not match the fused nodes), kIo
// when a cubin cannot be read. CudaWrapper::plan is the arena plan (outputs external).
[[nodiscard]] Result<CudaWrapper> emit_cuda_wrapper(const Graph& graph,
                                                    const std::map<std::string, GemmPick>& picks);
// CudaWrapper::kernels of the program emit_cuda_wrapper() will write for `graph` with
// pick_cuda_gemms()'s picks under CudaPickOptions::fuse = `fuse`, whatever they are.
[[nodiscard]] Result<std::string> predict_cuda_kernels(const Graph& graph, bool fuse);

struct CudaBuildOptions {
  // $KTUNE_NVCC when set, else the CUDA toolkit's (<root>/bin/nvcc of $CUDA_HOME, $CUDA_PATH or
  // /usr/local/cuda) when present, else "nvcc" from PATH.
  std::string nvcc = default_nvcc();
  // The host code's compiler: $CXX when set, else "c++". Headers and libraries are the
  // toolkit's, found from nvcc (<root>/bin/nvcc: <root>/targets/<cpu>-linux or <root>).
  std::string cxx = WrapperBuildOptions::default_cxx();
  std::string arch = "sm_90a";  // sm_XY[a]: -gencode arch=compute_XY[a],code=sm_XY[a]
  std::chrono::milliseconds timeout{300'000};  // per compiler run

  [[nodiscard]] static std::string default_nvcc();
};

struct CudaWrapperFiles {
  std::filesystem::path host;        // <dir>/<graph>.cpp
  std::filesystem::path kernels;     // <dir>/<graph>_kernels.cu   (these three: empty when the
  std::filesystem::path cubin;       // <dir>/<graph>_kernels.cubin  program has no kernels of
  std::filesystem::path embed;       // <dir>/<graph>_kernels.S      its own)
  std::filesystem::path library;     // <dir>/lib<graph>.so
  std::filesystem::path executable;  // <dir>/<graph>: the benchmark
};

// The parts of a program's build that do not depend on the picks, started before tuning in a
// private temporary folder, side by side: the kernels' nvcc run (from predict_cuda_kernels();
// none when that is empty) and the host code's precompiled prelude (its includes and fixed
// helpers, the same for every program: a .gch for the C++ compiler). write_cuda_wrapper() takes
// the cubin when the program's kernels are the same text (else it builds its own) and compiles
// the host code with the prelude precompiled when that is ready (without it when it is not, or
// failed). The destructor waits for the compilers and removes the folder.
class CudaEarlyBuild {
 public:
  [[nodiscard]] static Result<std::unique_ptr<CudaEarlyBuild>> start(
      const std::string& graph_name, std::string kernels, const CudaBuildOptions& options);
  ~CudaEarlyBuild();
  CudaEarlyBuild(const CudaEarlyBuild&) = delete;
  CudaEarlyBuild& operator=(const CudaEarlyBuild&) = delete;

  [[nodiscard]] const std::string& kernels() const { return kernels_; }
  // nvcc's status; the cubin's bytes when it succeeded. Waits for nvcc.
  [[nodiscard]] Result<std::string> cubin();
  // The prelude header with its precompiled copy beside it; empty while the compiler still runs
  // (the host code is compiled without it then, not later) or when it failed. Never waits.
  [[nodiscard]] std::filesystem::path prelude();

 private:
  CudaEarlyBuild() = default;
  std::string kernels_;
  std::filesystem::path dir_;
  std::future<Status> nvcc_, pch_;
  Status nvcc_status_, pch_status_;  // once waited for
};

// Writes <dir>/<graph>.cpp, and <graph>_kernels.cu and .S when the program has kernels (the
// folder created when missing); with `build`, compiles the kernels with nvcc (or takes `early`'s
// cubin) and the host code with the C++ compiler (with `early`'s precompiled prelude) into
// lib<graph>.so and the benchmark <graph>, the compilers side by side (kCompile with a
// compiler's output tail, kTimeout past the deadline).
[[nodiscard]] Result<CudaWrapperFiles> write_cuda_wrapper(
    const Graph& graph, const CudaWrapper& wrapper, const std::filesystem::path& dir,
    const CudaBuildOptions& options, bool build, CudaEarlyBuild* early = nullptr);

}  // namespace ktune::codegen
