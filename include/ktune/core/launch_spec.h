// LaunchSpec: how a worker runs one candidate, with no pointers: what the parent sends in a
// BenchmarkRequest instead of a function. Each device kind's worker handler reads the kinds it
// knows and answers kUnsupported for the others.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace ktune {

enum class LaunchKind {
  kCpuSharedObject,  // artifact: a shared object exporting ktune_entry (CpuBackend)
  kCpuLibrary,       // library + entry + bind: a CPU library call (OpenBLAS)
  kCudaCubin,        // artifact: a cubin; entry: the __global__ function (extern "C")
  kCudaLibrary,      // library + algo: a vendor library call (cuBLAS, cuBLASLt)
  kOpenCLProgram,    // artifact: program binary or source; entry: the kernel
};

[[nodiscard]] std::string_view launch_kind_name(LaunchKind kind);  // "cpu_so", "cuda_cubin", ...
[[nodiscard]] bool parse_launch_kind(std::string_view name, LaunchKind* out);
// kCudaLibrary and kCpuLibrary.
[[nodiscard]] bool is_library_launch(LaunchKind kind);

// A TMA descriptor (CUtensorMap) a CUDA kernel takes by value after the problem's arguments:
// everything but the address, which only the launching process knows. The launcher (worker,
// Dispatcher, generated program) encodes it with cuTensorMapEncodeTiled from the device address
// of argument `arg` (offset included) and appends it to the kernel's parameters, in order.
// A 2-D row-major view of 16-bit elements: `dims` and `box` innermost first, in elements;
// `row_stride_bytes` between rows (a multiple of 16); `swizzle_bytes` 0, 32, 64 or 128.
struct TensorMapDesc {
  // `arg` naming the launch's workspace (LaunchSpec::workspace_bytes) instead of an argument:
  // the map addresses workspace + workspace_offset.
  static constexpr int kWorkspace = -2;
  int arg = -1;
  std::uint64_t workspace_offset = 0;
  std::uint32_t element_bytes = 2;
  std::array<std::uint64_t, 2> dims{0, 0};
  std::uint64_t row_stride_bytes = 0;
  std::array<std::uint32_t, 2> box{0, 0};
  std::uint32_t swizzle_bytes = 128;

  friend bool operator==(const TensorMapDesc&, const TensorMapDesc&) = default;
};

// Where and how wide a device kernel runs; computed per problem by a template's launch hook.
struct LaunchGeometry {
  std::array<std::uint64_t, 3> grid{1, 1, 1};
  std::array<std::uint64_t, 3> block{1, 1, 1};
  std::uint32_t shared_bytes = 0;
  std::vector<TensorMapDesc> tensor_maps;  // kCudaCubin: trailing TMA descriptor parameters
  std::uint64_t workspace_bytes = 0;       // kCudaCubin: LaunchSpec::workspace_bytes
};

struct LaunchSpec {
  LaunchKind kind = LaunchKind::kCpuSharedObject;
  std::filesystem::path artifact;
  std::string entry;
  // CUDA: grid in blocks and block in threads; OpenCL: global and local work sizes.
  std::array<std::uint64_t, 3> grid{1, 1, 1};
  std::array<std::uint64_t, 3> block{1, 1, 1};
  std::uint32_t shared_bytes = 0;  // dynamic shared memory (CUDA)
  // kCudaCubin: TMA descriptors passed after the problem's arguments (TensorMapDesc).
  std::vector<TensorMapDesc> tensor_maps;
  // kCudaCubin: device scratch the launcher allocates (once per loaded launch, not per call) for
  // this launch and the others of its chain (`then`, and the launch it follows): one buffer of
  // the largest size any of them asks for, shared, since they run in order on one stream. A
  // launch asking for one gets its address as one more kernel parameter, after its tensor maps.
  std::uint64_t workspace_bytes = 0;
  // kCudaLibrary: "cublas" (cublasGemmEx) or "cublaslt" (the algo-th result of the heuristic).
  // kCpuLibrary: "openblas", with `entry` the call and its literal arguments, e.g.
  // "gemm NT alpha=1 beta=0" (op(A) op(B) and the scalars of C = alpha op(A) op(B) + beta C).
  std::string library;
  int algo = -1;
  // Library calls: which problem arguments play which role, by argument index, e.g. for a GEMM
  // {c, a, b, m, n, k} (and a bias with library_epilogue); fixed per library.
  std::vector<int> bind;
  // kCudaLibrary "cublaslt": the library's own fused epilogue (a cublasLtEpilogue_t value,
  // CUBLASLT_EPILOGUE_RELU_BIAS say); 0 (none) by default.
  int library_epilogue = 0;
  // kCudaLibrary: C = alpha * A B (then the library epilogue): an epilogue's leading scale folded
  // into the library call, computed in fp32 as a separate scale would be; 1 by default.
  double alpha = 1;
  // Launches run after this one, in order, on the same arguments and stream: a library GEMM
  // followed by a generated epilogue kernel is one candidate. Run by the same handler.
  std::vector<LaunchSpec> then;

  friend bool operator==(const LaunchSpec&, const LaunchSpec&) = default;
};

// Every field of `spec` (and of its `then` launches) as one line of text: its identity, e.g. in
// the key of a prepared problem whose reference it is.
[[nodiscard]] std::string launch_key(const LaunchSpec& spec);

}  // namespace ktune
