// Graph tuning: the pick for every gemm node of a graph. The candidates come from a spec (the
// graph's gemm_spec: a kernel template and extern library calls, e.g. examples/matmul_cpu), each
// distinct gemm shape is tuned once through the Selector and the tuning cache, and the winner is
// kept in the form the wrapper codegen emits: the rendered template source with its defines, or
// the library call.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ktune/backend.h"
#include "ktune/graph.h"
#include "ktune/selector.h"
#include "ktune/spec.h"

namespace ktune::codegen {

// What the template's entry receives in each parameter position.
enum class GemmOperand { kC, kA, kB, kM, kN, kK };

struct GemmPick {
  std::string choice;                 // the winner's name: "matmul_VEC8_MR4_..." or "openblas"
  std::string info;                   // its parameters, or the library function
  bool is_extern = false;             // an openblas.gemm library call
  KernelSource source;                // template picks: rendered, parameters as defines
  std::vector<GemmOperand> operands;  // template picks: one per entry parameter
  bool from_cache = false;            // the Selector answered from the tuning cache
};

// The spec of a graph's gemms, checked to compute C[M,N] = A[M,K] B[K,N].
struct GemmSpec {
  Spec spec;
  SpecChoices choices;
  std::vector<GemmOperand> operands;    // of the template's entry, in signature order
  std::size_t template_candidates = 0;  // candidates[0, n) are template configs, then externs
};

// kInvalidArgument (naming the spec's file and argument) when the spec's arguments are not
// C (out, [M, N]), A (in, [M, K]), B (in, [K, N]) and scalars M, N, K, all f32, or an extern is
// not an untransposed openblas.gemm over them.
[[nodiscard]] Result<GemmSpec> load_gemm_spec(const std::filesystem::path& file);

// The pick of candidate `index` of the spec (a template config or an extern), without tuning.
[[nodiscard]] Result<GemmPick> make_gemm_pick(const GemmSpec& spec, std::size_t index);
// The candidate called `name` (kNotFound listing a few names when none is).
[[nodiscard]] Result<std::size_t> find_candidate(const GemmSpec& spec, const std::string& name);

// The pick for every gemm node, by node name. Without `force`, each distinct shape is tuned
// with `selector` (a cache hit the second time); with it, that candidate is used everywhere.
[[nodiscard]] Result<std::map<std::string, GemmPick>> pick_gemms(
    const Graph& graph, GemmSpec& spec, Selector* selector,
    const std::optional<std::string>& force = std::nullopt);

}  // namespace ktune::codegen
