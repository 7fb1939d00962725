// emit_cuda_wrapper: the picks checked and flattened into launches, the arena planned, and the
// program assembled: the host code (the fixed snippets, the embedded cubins, the program object
// of cuda_wrapper_program.cpp, the forward, capture and run() of cuda_wrapper_run.cpp, the
// benchmark main of cuda_wrapper_main.cpp) and its own kernels (cuda_wrapper_launches.cpp), which
// predict_cuda_kernels() gives before any pick. Building is in cuda_wrapper_build.cpp.
#include "ktune/codegen/cuda_wrapper.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "backend/artifact_digest.h"
#include "codegen/cuda_wrapper_emit.h"
#include "codegen/cuda_wrapper_snippets.h"
#include "codegen/wrapper_snippets.h"
#include "core/file_util.h"

namespace ktune::codegen {
namespace {

using detail::CudaProgram;
using detail::CudaStep;

// cuBLASLt's CUBLASLT_EPILOGUE_BIAS bit (cublasLt.h is not included here: this file builds
// without the CUDA toolkit).
constexpr int kLtBiasBit = 4;

// A row_softmax reading a scale that nothing else reads (and that is not an output) computes it:
// softmax(alpha x) in one pass, the scaled matrix never written.
void fold_scales(CudaProgram& p) {
  Graph& g = p.fg.graph;
  std::map<std::string, int> readers;
  for (const GraphNode& n : g.nodes)
    for (const std::string& x : n.inputs) ++readers[x];
  std::map<std::string, const GraphNode*> scales;
  for (const GraphNode& n : g.nodes) {
    const bool output = std::find(g.outputs.begin(), g.outputs.end(), n.name) != g.outputs.end();
    if (n.op == OpKind::kScale && readers[n.name] == 1 && !output) scales.emplace(n.name, &n);
  }
  std::vector<std::string> gone;
  for (GraphNode& n : g.nodes) {
    if (n.op != OpKind::kRowSoftmax) continue;
    auto s = scales.find(n.inputs[0]);
    if (s == scales.end()) continue;
    p.softmax_scale[n.name] = s->second->alpha;
    p.folded[n.name] = s->first;
    n.inputs[0] = s->second->inputs[0];
    gone.push_back(s->first);
  }
  std::erase_if(g.nodes, [&](const GraphNode& n) {
    return std::find(gone.begin(), gone.end(), n.name) != gone.end();
  });
}

std::unexpected<Error> bad_pick(const Graph& g, const std::string& node, const GemmPick& pick,
                                const std::string& what) {
  return make_error(
      ErrorCode::kInvalidArgument,
      fmt::format("{}: gemm '{}' (pick '{}'): {}", g.file.string(), node, pick.choice, what));
}

void flatten(const LaunchSpec& s, std::vector<const LaunchSpec*>& out) {
  out.push_back(&s);
  for (const LaunchSpec& t : s.then) flatten(t, out);
}

Status add_cubin(CudaProgram& p, const GraphNode& n, const GemmPick& pick, CudaStep& step) {
  const LaunchSpec& s = step.spec;
  const auto zero = [](const std::array<std::uint64_t, 3>& v) {
    return std::find(v.begin(), v.end(), 0) != v.end();
  };
  if (s.entry.empty() || zero(s.grid) || zero(s.block)) {
    return bad_pick(p.fg.graph, n.name, pick, "a cubin launch without an entry, grid or block");
  }
  // Through the code cache's check (its recorded SHA-256, the file's owner and mode): a cubin
  // swapped in the cache after it was verified and measured is refused, never embedded.
  auto bytes = read_verified_artifact(s.artifact);
  if (!bytes) {
    return make_error(bytes.error().code,
                      fmt::format("{}: gemm '{}' (pick '{}'): {}", p.fg.graph.file.string(), n.name,
                                  pick.choice, bytes.error().message));
  }
  auto m = std::find_if(p.modules.begin(), p.modules.end(),
                        [&](const detail::CudaModule& x) { return x.bytes == *bytes; });
  if (m == p.modules.end()) {
    p.modules.push_back({pick.choice, std::move(*bytes)});
    m = p.modules.end() - 1;
  }
  const auto module = static_cast<std::size_t>(m - p.modules.begin());
  auto f = std::find_if(p.functions.begin(), p.functions.end(),
                        [&](const auto& x) { return x.module == module && x.entry == s.entry; });
  if (f == p.functions.end()) {
    p.functions.push_back({module, s.entry, 0});
    f = p.functions.end() - 1;
  }
  f->shared_bytes = std::max(f->shared_bytes, s.shared_bytes);
  p.template_workspace_bytes =
      std::max(p.template_workspace_bytes, static_cast<std::size_t>(s.workspace_bytes));
  step.kind = CudaStep::Kind::kCubin;
  step.fn = static_cast<std::size_t>(f - p.functions.begin());
  return {};
}

// A library launch binds C, A, B, M, N, K to the problem's arguments 0..5 (cuda_gemm_candidates
// does), and cuBLASLt's bias to one of the epilogue's operands.
Status add_library(CudaProgram& p, const GraphNode& n, const GemmPick& pick, CudaStep& step) {
  const LaunchSpec& s = step.spec;
  const Graph& g = p.fg.graph;
  const std::vector<int> plain = {0, 1, 2, 3, 4, 5};
  const bool bias = (s.library_epilogue & kLtBiasBit) != 0;
  if (s.bind.size() < 6 || !std::equal(plain.begin(), plain.end(), s.bind.begin()) ||
      s.bind.size() != (bias ? 7u : 6u)) {
    return bad_pick(g, n.name, pick,
                    fmt::format("bind {{{}}}; the CUDA codegen takes {{0, 1, 2, 3, 4, 5}} (C, A, "
                                "B, M, N, K), with cuBLASLt's bias epilogue one more",
                                fmt::join(s.bind, ", ")));
  }
  if (s.library == "cublas") {
    if (s.library_epilogue != 0) {
      return bad_pick(g, n.name, pick, "library epilogues are cuBLASLt's; cublas has none");
    }
    step.kind = CudaStep::Kind::kCublas;
    p.uses_cublas = true;
    return {};
  }
  if (s.library != "cublaslt") {
    return bad_pick(
        g, n.name, pick,
        fmt::format("library '{}'; the CUDA codegen calls cublas and cublaslt", s.library));
  }
  if (s.algo < 0) return bad_pick(g, n.name, pick, "cublaslt needs algo >= 0");
  if (bias) {
    const std::size_t operand = static_cast<std::size_t>(s.bind[6]);
    if (operand < 6 || operand - 6 + 2 >= n.inputs.size()) {
      return bad_pick(
          g, n.name, pick,
          fmt::format("the bias is bound to argument {}; not an epilogue operand", s.bind[6]));
    }
    step.bias = n.inputs[operand - 6 + 2];
  }
  const TensorSpec& a = p.specs.at(n.inputs[0]);
  step.kind = CudaStep::Kind::kCublasLt;
  step.lt = p.lt.size();
  p.lt.push_back({n.name, detail::cuda_data_type(n.out.dtype), n.out.sizes[0], n.out.sizes[1],
                  a.sizes[1], s.library_epilogue, s.algo});
  return {};
}

Status add_gemm(CudaProgram& p, const GraphNode& n) {
  const Graph& g = p.fg.graph;
  auto it = p.fg.picks.find(n.name);
  if (it == p.fg.picks.end()) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: gemm '{}' has no pick", g.file.string(), n.name));
  }
  const GemmPick& pick = it->second;
  if (!pick.launch) {
    return bad_pick(g, n.name, pick,
                    "not a CUDA launch (the CUDA codegen takes pick_cuda_gemms()'s picks)");
  }
  if (pick.epilogue.ops().size() != pick.fused.size() ||
      pick.epilogue.operands().size() != pick.epilogue_args.size()) {
    return bad_pick(
        g, n.name, pick,
        fmt::format("its epilogue '{}' does not match its {} fused nodes and {} "
                    "operands",
                    pick.epilogue.name(), pick.fused.size(), pick.epilogue_args.size()));
  }
  std::vector<const LaunchSpec*> all;
  flatten(*pick.launch, all);
  std::vector<CudaStep>& steps = p.gemms[n.name];
  for (const LaunchSpec* s : all) {
    CudaStep step;
    step.spec = *s;
    step.spec.then.clear();
    Status st;
    if (s->kind == LaunchKind::kCudaCubin) {
      st = add_cubin(p, n, pick, step);
    } else if (s->kind == LaunchKind::kCudaLibrary) {
      st = add_library(p, n, pick, step);
    } else {
      st = bad_pick(g, n.name, pick,
                    fmt::format("a {} launch; the CUDA codegen runs {} and {} (cublas, cublaslt)",
                                launch_kind_name(s->kind), launch_kind_name(LaunchKind::kCudaCubin),
                                launch_kind_name(LaunchKind::kCudaLibrary)));
    }
    if (!st) return st;
    steps.push_back(std::move(step));
  }
  return {};
}

}  // namespace

Result<CudaWrapper> emit_cuda_wrapper(const Graph& graph,
                                      const std::map<std::string, GemmPick>& picks) {
  auto program = detail::cuda_program(graph, picks);
  if (!program) return std::unexpected(program.error());
  CudaProgram& p = *program;
  const Graph& g = p.fg.graph;
  for (const GraphNode& n : g.nodes) {
    if (n.op != OpKind::kGemm) continue;
    if (Status s = add_gemm(p, n); !s) return std::unexpected(s.error());
  }
  PlanInput in = plan_input(g);
  for (PlanBuffer& b : in.buffers) b.external = b.is_output;
  auto plan = plan_memory(in, Planner::kArena, kCudaArenaAlignment);
  if (!plan) return std::unexpected(plan.error());
  p.plan = std::move(*plan);
  p.workspace_offset = p.plan.arena_bytes;
  p.workspace_bytes = std::max<std::size_t>(
      p.uses_cublas || !p.lt.empty() ? kCudaWorkspaceBytes : 0, p.template_workspace_bytes);
  p.arena_bytes = p.workspace_offset + p.workspace_bytes;

  CudaWrapper w;
  w.plan = p.plan;
  w.kernels = detail::emit_cuda_kernels(p);
  std::string& s = w.host;
  s += fmt::format("// {}.cpp: generated by `ktune compile --device cuda` from graph '{}' ({}).\n",
                   g.name, g.name, g.file.filename().string());
  s += "// Do not edit: change the graph and compile again.\n//\n";
  s += fmt::format(
      "// Device memory: one arena of {} bytes: the intermediates' plan ({} bytes, lower bound {})"
      "\n// and {} bytes of cuBLAS / cuBLASLt workspace; the outputs are the caller's.\n",
      p.arena_bytes, p.plan.arena_bytes, p.plan.lower_bound_bytes, p.workspace_bytes);
  s += fmt::format(
      "// Host code for a C++ compiler; {}.\n"
      "// Build (what ktune compile runs; ARCH e.g. sm_90a, CUDA the toolkit's folder):\n",
      w.kernels.empty() ? "no kernels of its own (every step is a gemm)"
                        : fmt::format("its kernels are {0}_kernels.cu, built by nvcc into "
                                      "{0}_kernels.cubin,\n// which {0}_kernels.S embeds",
                                      g.name));
  const std::string embed = w.kernels.empty() ? "" : fmt::format(" {}_kernels.S", g.name);
  if (!w.kernels.empty()) {
    s += fmt::format(
        "//   nvcc -cubin -O3 -std=c++17 -arch=ARCH {0}_kernels.cu -o {0}_kernels.cubin\n", g.name);
  }
  s += fmt::format(
      "//   c++ -O2 -std=c++17 -fPIC -shared {0}.cpp{1} -I$CUDA/include -L$CUDA/lib64 \\\n"
      "//       -L$CUDA/lib64/stubs -lcublasLt -lcublas -lcudart_static -lcuda -ldl -lrt -lpthread "
      "\\\n"
      "//       -o lib{0}.so\n"
      "//   c++ -O2 -std=c++17 -DKTUNE_BENCHMARK_MAIN {0}.cpp{1} (the same flags) -o {0}\n",
      g.name, embed);
  s += detail::cuda_prelude();
  for (std::size_t i = 0; i < p.modules.size(); ++i) {
    s += fmt::format("\n// ---- Cubin {}: {} ({} bytes).\n", i, p.modules[i].choice,
                     p.modules[i].bytes.size());
    s += detail::cuda_byte_array(fmt::format("ktune_cubin_{}", i), p.modules[i].bytes);
  }
  if (!w.kernels.empty()) {
    s += fmt::format(
        "\n// ---- {}_kernels.cubin, the program's own kernels ({}_kernels.S).\n"
        "extern \"C\" const unsigned char {}[];\n",
        g.name, g.name, detail::kernels_symbol(g.name));
  }
  if (!p.lt.empty()) s += fmt::format("\n{}", detail::cuda_cublaslt_snippet());
  s += '\n';
  s += detail::emit_cuda_program(p);
  s += detail::emit_cuda_run(p);
  s += detail::benchmark_snippet();
  s += detail::cuda_benchmark_snippet();
  s += fmt::format("\n{}", detail::emit_cuda_main(p));
  return w;
}

Result<std::string> predict_cuda_kernels(const Graph& graph, bool fuse) {
  // The fusions pick_cuda_gemms() tunes: every chain, each fused whatever its pick.
  std::map<std::string, GemmPick> picks;
  if (fuse) {
    for (const FusionChain& c : find_fusions(graph)) {
      GemmPick& pick = picks[graph.nodes[c.gemm].name];
      pick.epilogue = c.epilogue;
      for (std::size_t k : c.nodes) pick.fused.push_back(graph.nodes[k].name);
      pick.epilogue_args = c.operands;
    }
  }
  auto p = detail::cuda_program(graph, picks);
  if (!p) return std::unexpected(p.error());
  return detail::emit_cuda_kernels(*p);
}

namespace detail {

Result<CudaProgram> cuda_program(const Graph& graph, const std::map<std::string, GemmPick>& picks) {
  if (Status s = check_target(graph, CodegenTarget::kCuda); !s) return std::unexpected(s.error());
  auto fused = apply_fusions(graph, picks);
  if (!fused) return std::unexpected(fused.error());
  CudaProgram p;
  p.fg = std::move(*fused);
  fold_scales(p);
  const Graph& g = p.fg.graph;
  for (const GraphInput& in : g.inputs) p.specs.emplace(in.name, in.spec);
  for (const GraphNode& n : g.nodes) p.specs.emplace(n.name, n.out);
  plan_kernels(p);
  return p;
}

}  // namespace detail
}  // namespace ktune::codegen
