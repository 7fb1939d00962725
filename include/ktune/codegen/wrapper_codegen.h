// Wrapper codegen (Inductor's WrapperCodeGen for the CPU): one readable C++ source for a graph
// with its picks and a memory plan. It holds the chosen kernels (each winning template's rendered
// source in a namespace named after the choice, with its parameters as #defines, or a call to
// OpenBLAS's cblas_sgemm opened with dlopen), plain loops for the pointwise and row kernels, and
//   extern "C" int <graph>_run(const KtuneTensor* inputs, int num_inputs,
//                              KtuneTensor* outputs, int num_outputs);
// which checks every input's sizes and strides, allocates, calls the kernels in graph order (one
// line per step; a gemm with a fused epilogue is one call that writes its chain's last node),
// frees or reuses buffers as the plan says and returns the outputs (the caller frees them with
// <graph>_free_outputs(outputs, num_outputs)). Built with -DKTUNE_BENCHMARK_MAIN it also has a
// main() that runs the graph on seeded random inputs and prints the median time (Inductor's
// benchmark harness). The text depends only on the graph, the picks and the planner: no dates,
// paths or timings, so that it can be golden-tested.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "ktune/codegen/graph.h"
#include "ktune/codegen/graph_fusion.h"
#include "ktune/codegen/graph_tuning.h"
#include "ktune/codegen/memory_plan.h"
#include "ktune/core/status.h"

namespace ktune::codegen {

// The planner's view of a graph: one buffer per node (outputs marked), one step per node.
[[nodiscard]] PlanInput plan_input(const Graph& graph);

struct Wrapper {
  std::string source;  // the whole program
  MemoryPlan plan;
  std::vector<std::string> flags;  // the kernels' extra compiler flags (e.g. -fopenmp), in order
};

// `picks` must hold one pick per gemm node (pick_gemms()); fused picks are applied first
// (apply_fusions()): one call per chain, a comment naming the nodes it computes, and the memory
// plan over the fused program.
[[nodiscard]] Result<Wrapper> emit_wrapper(const Graph& graph,
                                           const std::map<std::string, GemmPick>& picks,
                                           Planner planner);

struct WrapperBuildOptions {
  std::string compiler = default_cxx();  // $CXX when set, else "c++"
  [[nodiscard]] static std::string default_cxx();
  std::vector<std::string> flags = {"-O3", "-march=native", "-std=c++17"};
  std::chrono::milliseconds timeout{300'000};  // per compiler run
};

struct WrapperFiles {
  std::filesystem::path source;      // <dir>/<graph>.cpp
  std::filesystem::path library;     // <dir>/lib<graph>.so
  std::filesystem::path executable;  // <dir>/<graph>: the benchmark
  std::vector<std::string> library_command;
  std::vector<std::string> executable_command;
};

// The compiler command lines for `wrapper` written as `files.source`.
[[nodiscard]] WrapperFiles wrapper_files(const Graph& graph, const Wrapper& wrapper,
                                         const std::filesystem::path& dir,
                                         const WrapperBuildOptions& options);
// Writes the source into `dir` (created when missing); with `build`, compiles the shared library
// and the executable (kCompile with the compiler's output tail, kTimeout past the deadline).
[[nodiscard]] Result<WrapperFiles> write_wrapper(const Graph& graph, const Wrapper& wrapper,
                                                 const std::filesystem::path& dir,
                                                 const WrapperBuildOptions& options, bool build);

}  // namespace ktune::codegen
