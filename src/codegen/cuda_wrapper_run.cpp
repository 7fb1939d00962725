// The graph-dependent functions of a generated CUDA program: <graph>_forward (one block per
// step, in the plan's order), <graph>_capture, <graph>_run with its checks, and the benchmark
// main().
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>

#include "codegen/cuda_wrapper_emit.h"

namespace ktune::codegen::detail {
namespace {

std::string ints(const std::vector<std::int64_t>& v) {
  return fmt::format("{}", fmt::join(v, ", "));
}

std::string comment(const GraphNode& n) {
  std::string c = fmt::format("{} = {}({})", n.name, op_name(n.op), fmt::join(n.inputs, ", "));
  if (n.op == OpKind::kScale) c += fmt::format(" * {}", cuda_float_literal(n.alpha));
  return c;
}

std::string step_comment(const CudaProgram& p, const GraphNode& n) {
  if (auto it = p.fg.fused_nodes.find(n.name); it != p.fg.fused_nodes.end()) {
    std::vector<std::string> steps;
    for (const GraphNode& f : it->second) steps.push_back(comment(f));
    return fmt::format("fused: {}", fmt::join(steps, "; "));
  }
  if (auto it = p.folded.find(n.name); it != p.folded.end()) {
    return fmt::format("{}(({}) * {}), the scale '{}' folded in", op_name(n.op), n.inputs[0],
                       cuda_float_literal(p.softmax_scale.at(n.name)), it->second);
  }
  return comment(n);
}

// The TMA descriptors of a cubin launch (LaunchSpec::tensor_maps), encoded as the worker does
// (src/backend/cuda_tensor_map.cpp) from the address of the argument each names (`args`: "&x"
// per problem argument); at capture time, so the graph holds them by value.
std::string tensor_map_code(const CudaProgram& p, const LaunchSpec& l,
                            const std::vector<std::string>& args) {
  if (l.tensor_maps.empty()) return "";
  std::string out = fmt::format("    CUtensorMap ktune_tm[{}];\n", l.tensor_maps.size());
  for (std::size_t i = 0; i < l.tensor_maps.size(); ++i) {
    const TensorMapDesc& t = l.tensor_maps[i];
    out += fmt::format(
        "    {{\n"
        "      const cuuint64_t dims[2] = {{{}, {}}}, strides[1] = {{{}}};\n"
        "      const cuuint32_t box[2] = {{{}, {}}}, steps[2] = {{1, 1}};\n"
        "      KTUNE_CU(cuTensorMapEncodeTiled(&ktune_tm[{}], CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, "
        "(void*)({}), dims, strides, box, steps, CU_TENSOR_MAP_INTERLEAVE_NONE, "
        "CU_TENSOR_MAP_SWIZZLE_{}, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, "
        "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));\n"
        "    }}\n",
        t.dims[0], t.dims[1], t.row_stride_bytes, t.box[0], t.box[1], i,
        t.arg == TensorMapDesc::kWorkspace
            ? fmt::format("ktune_p->arena + {}", p.workspace_offset + t.workspace_offset)
            : args.at(static_cast<std::size_t>(t.arg)).substr(1),
        t.swizzle_bytes == 0 ? std::string("NONE") : fmt::format("{}B", t.swizzle_bytes));
  }
  return out;
}

// A gemm's launches: the problem's arguments C, A, B, M, N, K, then the epilogue's operands.
std::string gemm_code(const CudaProgram& p, const GraphNode& n) {
  const std::int64_t m = n.out.sizes[0], nn = n.out.sizes[1], k = p.specs.at(n.inputs[0]).sizes[1];
  const std::string& c = n.name;
  const std::string& a = n.inputs[0];
  const std::string& b = n.inputs[1];
  const std::string t = cuda_data_type(n.out.dtype);
  std::string out;
  for (const CudaStep& s : p.gemms.at(n.name)) {
    switch (s.kind) {
      case CudaStep::Kind::kCubin: {
        std::vector<std::string> args = {"&" + c,    "&" + a,    "&" + b,
                                         "&ktune_m", "&ktune_n", "&ktune_k"};
        for (std::size_t i = 2; i < n.inputs.size(); ++i) args.push_back("&" + n.inputs[i]);
        const LaunchSpec& l = s.spec;
        std::string maps = tensor_map_code(p, l, args);
        for (std::size_t i = 0; i < l.tensor_maps.size(); ++i) {
          args.push_back(fmt::format("&ktune_tm[{}]", i));
        }
        if (l.workspace_bytes > 0) {  // the arena's workspace part (LaunchSpec::workspace_bytes)
          maps += fmt::format("    void* ktune_ws = ktune_p->arena + {};\n", p.workspace_offset);
          args.push_back("&ktune_ws");
        }
        out += fmt::format(
            "  {{  // {}\n"
            "    int ktune_m = {}, ktune_n = {}, ktune_k = {};\n{}"
            "    void* ktune_args[] = {{{}}};\n"
            "    KTUNE_CU(cuLaunchKernel(ktune_p->fns[{}], {}, {}, {}, {}, {}, {}, {}, "
            "ktune_stream, ktune_args, "
            "nullptr));\n  }}\n",
            l.entry, m, nn, k, maps, fmt::join(args, ", "), s.fn, l.grid[0], l.grid[1], l.grid[2],
            l.block[0], l.block[1], l.block[2], l.shared_bytes);
        break;
      }
      case CudaStep::Kind::kCublas:
        // C^T[n,m] = B^T[n,k] A^T[k,m] in cuBLAS's column-major terms (cublas_gemm_runner.cpp).
        out += fmt::format(
            "  {{  // cublasGemmEx, row-major through C^T = B^T A^T\n"
            "    const float ktune_alpha = {7}, ktune_zero = 0.0f;\n"
            "    KTUNE_CUBLAS(cublasGemmEx(ktune_p->cublas, CUBLAS_OP_N, CUBLAS_OP_N, {1}, {0}, "
            "{2}, "
            "&ktune_alpha, {4}, {6}, {1}, {3}, {6}, {2},\n"
            "                              &ktune_zero, {5}, {6}, {1}, CUBLAS_COMPUTE_32F, "
            "CUBLAS_GEMM_DEFAULT));\n  }}\n",
            m, nn, k, a, b, c, t, cuda_float_literal(s.spec.alpha));
        break;
      case CudaStep::Kind::kCublasLt: {
        out += fmt::format(
            "  {{  // cuBLASLt, heuristic answer {}{}\n", s.spec.algo,
            s.spec.library_epilogue ? fmt::format(", epilogue {}", s.spec.library_epilogue) : "");
        // alpha: an epilogue's leading scale, folded (LaunchSpec::alpha).
        out += fmt::format("    const float ktune_alpha = {}, ktune_zero = 0.0f;\n",
                           cuda_float_literal(s.spec.alpha));
        if (!s.bias.empty()) {
          out += fmt::format(
              "    const void* ktune_bias = {};\n"
              "    KTUNE_CUBLASLT(cublasLtMatmulDescSetAttribute(ktune_p->lt_desc[{}], "
              "CUBLASLT_MATMUL_DESC_BIAS_POINTER, &ktune_bias,\n"
              "                                                  sizeof ktune_bias));\n",
              s.bias, s.lt);
        }
        out += fmt::format(
            "    KTUNE_CUBLASLT(cublasLtMatmul(ktune_p->lt, ktune_p->lt_desc[{0}], &ktune_alpha, "
            "{1}, "
            "ktune_p->lt_layout[{0}][0], {2}, ktune_p->lt_layout[{0}][1],\n"
            "                                  &ktune_zero, {3}, ktune_p->lt_layout[{0}][2], {3}, "
            "ktune_p->lt_layout[{0}][2], &ktune_p->lt_algo[{0}],\n"
            "                                  ktune_p->arena + {4}, {5}, ktune_stream));\n  }}\n",
            s.lt, b, a, c, p.workspace_offset, p.workspace_bytes);
        break;
      }
    }
  }
  return out;
}

// A node's launch: a gemm's steps, or the generated kernel plan_kernels() chose.
std::string op_code(const CudaProgram& p, const GraphNode& n) {
  if (n.op == OpKind::kGemm) return gemm_code(p, n);
  const CudaLaunch& l = p.launches.at(n.name);
  return fmt::format(
      "  KTUNE_CU(ktune_launch(ktune_p->kernel_fns[{}], {{{}, {}, {}}}, {{{}, {}, {}}}, "
      "ktune_stream, {}));  // {}\n",
      l.kernel, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2],
      fmt::join(l.args, ", "), p.kernels[l.kernel].name);
}

std::string check_lines(const std::string& kind, const std::string& array, std::size_t i,
                        const std::string& name, const TensorSpec& t) {
  return fmt::format(
      "  {{\n    static const std::int64_t ktune_sizes[] = {{{}}}, ktune_strides[] = {{{}}};\n"
      "    if (ktune_check_tensor(ktune_error, ktune_where, \"{}\", \"{}\", {}[{}], {}, {}, "
      "ktune_sizes, ktune_strides, device) != 0) return 1;\n  }}\n",
      ints(t.sizes), ints(t.strides), kind, name, array, i, cuda_dtype_code(t.dtype),
      t.sizes.size());
}

}  // namespace

std::string emit_cuda_run(const CudaProgram& p) {
  const Graph& g = p.fg.graph;
  const std::string& G = g.name;
  std::string out = fmt::format(
      "// ---- The forward, one block per step, enqueued on `ktune_stream` (only ever the "
      "capture).\n"
      "// (Parameters prefixed, so that no graph value's name can shadow them.)\n"
      "static int {0}_forward({0}_program* ktune_p, const KtuneCudaTensor* ktune_inputs,\n"
      "                       const KtuneCudaTensor* ktune_outputs, cudaStream_t ktune_stream) "
      "{{\n"
      "  const char* ktune_where = \"{0}_run\";\n  char* ktune_error = ktune_p->error;\n",
      G);
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    const std::string t = cuda_ctype(g.inputs[i].spec.dtype);
    out += fmt::format("  {0}* {1} = static_cast<{0}*>(ktune_inputs[{2}].data);  // input {1}\n", t,
                       g.inputs[i].name, i);
  }
  for (const PlanLine& l : p.plan.lines) {
    const GraphNode& n = g.nodes[l.kind == PlanLine::Kind::kRun ? l.step : l.buffer];
    if (l.kind == PlanLine::Kind::kAllocate) {
      const std::string t = cuda_ctype(n.out.dtype);
      const BufferPlacement& b = p.plan.placements[l.buffer];
      const auto o = std::find(g.outputs.begin(), g.outputs.end(), n.name);
      if (o != g.outputs.end()) {
        out +=
            fmt::format("  {0}* {1} = static_cast<{0}*>(ktune_outputs[{2}].data);  // output {1}\n",
                        t, n.name, o - g.outputs.begin());
      } else {
        out += fmt::format(
            "  {0}* {1} = reinterpret_cast<{0}*>(ktune_p->arena + {2});  // {3}[{4}], arena bytes "
            "[{2}, "
            "{5})\n",
            t, n.name, b.offset, dtype_name(n.out.dtype), ints(n.out.sizes), b.offset + b.bytes);
      }
    } else if (l.kind == PlanLine::Kind::kRun) {
      out += fmt::format("  // {}\n{}", step_comment(p, n), op_code(p, n));
    }
  }
  out += "  return 0;\n}\n\n";

  out += fmt::format(
      "// Captures the forward on the private stream into p->exec: updated in place when the\n"
      "// graph's topology allows (only addresses changed), instantiated again otherwise.\n"
      "static int {0}_capture({0}_program* p, const KtuneCudaTensor* inputs,\n"
      "                       const KtuneCudaTensor* outputs) {{\n"
      "  const char* ktune_where = \"{0}_run (capturing the CUDA graph)\";\n"
      "  char* ktune_error = p->error;\n"
      "  KTUNE_CUDA(cudaStreamBeginCapture(p->capture, cudaStreamCaptureModeThreadLocal));\n"
      "  const int rc = {0}_forward(p, inputs, outputs, p->capture);\n"
      "  cudaGraph_t graph = nullptr;\n"
      "  const cudaError_t end = cudaStreamEndCapture(p->capture, &graph);\n"
      "  if (rc != 0 || end != cudaSuccess) {{\n"
      "    if (graph != nullptr) cudaGraphDestroy(graph);\n"
      "    (void)cudaGetLastError();\n"
      "    if (rc != 0) return rc;\n"
      "    return ktune_fail(ktune_error, \"%s: cudaStreamEndCapture failed: %s\", ktune_where,\n"
      "                      cudaGetErrorString(end));\n"
      "  }}\n"
      "  if (p->exec != nullptr) {{\n"
      "    cudaGraphExecUpdateResultInfo info;\n"
      "    if (cudaGraphExecUpdate(p->exec, graph, &info) != cudaSuccess) {{\n"
      "      (void)cudaGetLastError();\n"
      "      cudaGraphExecDestroy(p->exec);\n"
      "      p->exec = nullptr;\n"
      "    }}\n"
      "  }}\n"
      "  const cudaError_t e =\n"
      "      p->exec != nullptr ? cudaSuccess : cudaGraphInstantiate(&p->exec, graph, 0);\n"
      "  cudaGraphDestroy(graph);\n"
      "  if (e != cudaSuccess) {{\n"
      "    p->exec = nullptr;\n"
      "    return ktune_fail(ktune_error, \"%s: cudaGraphInstantiate failed: %s\", ktune_where,\n"
      "                      cudaGetErrorString(e));\n"
      "  }}\n"
      "  return 0;\n}}\n\n",
      G);

  const std::size_t ni = g.inputs.size(), no = g.outputs.size();
  out += fmt::format(
      "// Checks the tensors, captures the forward when their addresses are new, and replays it\n"
      "// on `stream` (0, the legacy default stream, too).\n"
      "extern \"C\" int {0}_run({0}_program* p, const KtuneCudaTensor* inputs, int num_inputs,\n"
      "                       const KtuneCudaTensor* outputs, int num_outputs, "
      "cudaStream_t stream) {{\n"
      "  const char* ktune_where = \"{0}_run\";\n"
      "  char* ktune_error = p->error;\n"
      "  if (num_inputs != {1} || num_outputs != {2}) {{\n"
      "    return ktune_fail(ktune_error, \"%s: expected {1} inputs and {2} outputs; got %d and "
      "%d\",\n                      ktune_where, num_inputs, num_outputs);\n  }}\n"
      "  int device = -1;\n  KTUNE_CUDA(cudaGetDevice(&device));\n"
      "  if (device != p->device) {{\n"
      "    return ktune_fail(ktune_error, \"%s: the program was created on device %d; the current "
      "device is %d\",\n                      ktune_where, p->device, device);\n  }}\n",
      G, ni, no);
  for (std::size_t i = 0; i < ni; ++i) {
    out += check_lines("input", "inputs", i, g.inputs[i].name, g.inputs[i].spec);
  }
  for (std::size_t i = 0; i < no; ++i) {
    out += check_lines("output", "outputs", i, g.outputs[i], p.specs.at(g.outputs[i]));
  }
  out += fmt::format("  static const char* const ktune_names[] = {{");
  for (const GraphInput& in : g.inputs) out += fmt::format("\"{}\", ", in.name);
  for (const std::string& o : g.outputs) out += fmt::format("\"{}\", ", o);
  out += fmt::format(
      "}};\n"
      "  bool same = p->exec != nullptr;\n"
      "  for (int i = 0; i < {0}; ++i) {{\n"
      "    const KtuneCudaTensor& t = i < {1} ? inputs[i] : outputs[i - {1}];\n"
      "    if (t.data == p->bound[i]) continue;\n"
      "    same = false;\n"
      "    if (ktune_check_pointer(ktune_error, ktune_where, i < {1} ? \"input\" : \"output\", "
      "ktune_names[i],\n"
      "                            t.data, device) != 0) return 1;\n"
      "  }}\n"
      "  if (!same) {{\n"
      "    if (int rc = {2}_capture(p, inputs, outputs); rc != 0) return rc;\n"
      "    for (int i = 0; i < {0}; ++i) p->bound[i] = i < {1} ? inputs[i].data : outputs[i - "
      "{1}].data;\n"
      "  }}\n"
      "  KTUNE_CUDA(cudaGraphLaunch(p->exec, stream));\n"
      "  return 0;\n}}\n\n",
      ni + no, ni, G);
  return out;
}

}  // namespace ktune::codegen::detail
