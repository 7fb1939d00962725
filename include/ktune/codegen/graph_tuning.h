// Graph tuning: the pick for every gemm node of a graph. The candidates come from a spec (the
// graph's gemm_spec: a kernel template and extern library calls, e.g. examples/matmul_cpu), each
// distinct gemm shape is tuned once through the Selector and the tuning cache, and the winner is
// kept in the form the wrapper codegen emits: the rendered template source with its defines, or
// the library call.
//
// Fusion (Inductor's epilogue fusion of a template buffer): a gemm followed by pointwise nodes
// that map onto Epilogue steps (find_fusions) is also tuned as one fused problem, the gemm spec
// with that epilogue. When a template config with the epilogue in its store wins, the gemm's
// pick computes the whole chain; when `<extern>+epilogue` (the library, then a separate pass)
// wins, the graph keeps the plain gemm and its pointwise nodes.
#pragma once

#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ktune/backend/backend.h"
#include "ktune/codegen/graph.h"
#include "ktune/core/epilogue.h"
#include "ktune/core/launch_spec.h"
#include "ktune/select/selector.h"
#include "ktune/spec/spec.h"

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
  // A fused pick (a template config with an epilogue): the call also computes these pointwise
  // nodes, in order, takes `epilogue_args` (graph values, in Epilogue::operands() order) after
  // M, N, K and writes the last fused node's buffer. Empty: a plain gemm.
  std::vector<std::string> fused;
  std::vector<std::string> epilogue_args;
  // For a gemm with a fusible chain, tuned with fusion on: "h+h_bias+a", and why it was fused
  // ("1.16x the best unfused pair") or not ("openblas+epilogue won"). Empty otherwise.
  std::string chain;
  std::string fusion;
  // CUDA picks (pick_cuda_gemms, ktune compile --device cuda): the winner's launch, bound to the
  // problem's arguments C, A, B, M, N, K, then the epilogue's operands (cuda_gemm_problem): a
  // cubin from the code cache with its grid, or a cuBLAS / cuBLASLt call (algo: the index in
  // cuBLASLt's heuristic answer; library_epilogue: its own fused epilogue), with `then`: the
  // separate epilogue kernel after a library GEMM. `epilogue` is what the launch computes after
  // the product: every candidate of a fused CUDA problem computes the whole chain.
  std::optional<LaunchSpec> launch;
  Epilogue epilogue;
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
// not an untransposed openblas.gemm over them, or the spec has an epilogue of its own.
[[nodiscard]] Result<GemmSpec> load_gemm_spec(const std::filesystem::path& file);

// The pick of candidate `index` of the spec (a template config or an extern), without tuning.
[[nodiscard]] Result<GemmPick> make_gemm_pick(const GemmSpec& spec, std::size_t index);
// The candidate called `name` (kNotFound listing a few names when none is).
[[nodiscard]] Result<std::size_t> find_candidate(const GemmSpec& spec, const std::string& name);

struct PickOptions {
  // This candidate for every gemm, without tuning. With fusion, its twin in the fused spec (same
  // index: a template config with the epilogue, or `<extern>+epilogue`) decides, so that a
  // forced template fuses every chain and a forced extern none: deterministic, for tests.
  std::optional<std::string> force;
  bool fuse = true;               // false: no fusion (ktune compile --no-fuse)
  std::FILE* progress = nullptr;  // one line per fusion decision ("ktune: fused h+h_bias+a: ...")
};

// The pick for every gemm node, by node name. Without `force`, each distinct problem is tuned
// with `selector` (a cache hit the second time): with fusion, the fused problem of each chain
// first, then the plain gemm when the chain is not fused.
[[nodiscard]] Result<std::map<std::string, GemmPick>> pick_gemms(const Graph& graph, GemmSpec& spec,
                                                                 Selector* selector,
                                                                 const PickOptions& options = {});

}  // namespace ktune::codegen
