// The program object of a generated CUDA program: its struct, create() (the one allocation, the
// cubins, the library handles and cuBLASLt's heuristic answers), destroy(), last_error() and
// arena_bytes(); and the embedded cubins' text.
#include <fmt/format.h>

#include <algorithm>

#include "codegen/cuda_wrapper_emit.h"

namespace ktune::codegen::detail {

std::string cuda_byte_array(const std::string& name, const std::string& bytes) {
  std::string out =
      fmt::format("alignas(64) static const unsigned char {}[{}] = {{", name, bytes.size());
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    out += i % 24 == 0 ? "\n   " : "";
    out += fmt::format(" {},", static_cast<unsigned>(static_cast<unsigned char>(bytes[i])));
  }
  return out + "\n};\n";
}

std::string kernels_symbol(const std::string& graph) { return "ktune_" + graph + "_kernels_cubin"; }

std::string emit_cuda_program(const CudaProgram& p) {
  const Graph& g = p.fg.graph;
  const std::string& G = g.name;
  std::string out = fmt::format(
      "// ---- The program: what create() sets up once.\n"
      "extern \"C\" {{\ntypedef struct {0}_program {0}_program;\n}}\n"
      "struct {0}_program {{\n"
      "  char error[KTUNE_ERROR_BYTES];\n"
      "  int device;\n"
      "  unsigned char* arena;  // {1} bytes: the plan's buffers, then the library workspace\n"
      "  cudaStream_t capture;  // private: the forward is captured here, never run here\n"
      "  cudaGraphExec_t exec;\n"
      "  const void* bound[{2}];  // the inputs' and outputs' addresses `exec` was captured with\n",
      G, p.arena_bytes, g.inputs.size() + g.outputs.size());
  if (!p.modules.empty()) out += fmt::format("  CUmodule modules[{}];\n", p.modules.size());
  if (!p.functions.empty()) out += fmt::format("  CUfunction fns[{}];\n", p.functions.size());
  if (!p.kernels.empty()) {
    out += fmt::format("  CUmodule kernels;  // {}_kernels.cubin\n  CUfunction kernel_fns[{}];\n",
                       G, p.kernels.size());
  }
  if (p.uses_cublas) out += "  cublasHandle_t cublas;\n";
  if (!p.lt.empty()) {
    out += fmt::format(
        "  cublasLtHandle_t lt;\n  cublasLtMatmulDesc_t lt_desc[{0}];\n"
        "  cublasLtMatrixLayout_t lt_layout[{0}][3];  // B^T, A^T, C^T\n"
        "  cublasLtMatmulAlgo_t lt_algo[{0}];\n",
        p.lt.size());
  }
  out += "};\n\n";
  out += fmt::format(
      "extern \"C\" size_t {0}_arena_bytes(void) {{ return {1}; }}\n"
      "// The part of the arena that is cuBLAS / cuBLASLt's workspace (0 without library gemms).\n"
      "extern \"C\" size_t {0}_workspace_bytes(void) {{ return {2}; }}\n\n"
      "extern \"C\" const char* {0}_last_error(const {0}_program* p) {{\n"
      "  return p != nullptr ? p->error : \"no program (out of host memory)\";\n}}\n\n",
      G, p.arena_bytes, p.workspace_bytes);
  // destroy: after the queued work that may still use the arena.
  out += fmt::format(
      "extern \"C\" void {0}_destroy({0}_program* p) {{\n  if (p == nullptr) return;\n"
      "  cudaDeviceSynchronize();\n"
      "  if (p->exec) cudaGraphExecDestroy(p->exec);\n",
      G);
  for (std::size_t i = 0; i < p.lt.size(); ++i) {
    out += fmt::format(
        "  for (cublasLtMatrixLayout_t l : p->lt_layout[{0}]) if (l) "
        "cublasLtMatrixLayoutDestroy(l);\n"
        "  if (p->lt_desc[{0}]) cublasLtMatmulDescDestroy(p->lt_desc[{0}]);\n",
        i);
  }
  if (!p.lt.empty()) out += "  if (p->lt) cublasLtDestroy(p->lt);\n";
  if (p.uses_cublas) out += "  if (p->cublas) cublasDestroy(p->cublas);\n";
  for (std::size_t i = 0; i < p.modules.size(); ++i) {
    out += fmt::format("  if (p->modules[{0}]) cuModuleUnload(p->modules[{0}]);\n", i);
  }
  if (!p.kernels.empty()) out += "  if (p->kernels) cuModuleUnload(p->kernels);\n";
  out +=
      "  if (p->capture) cudaStreamDestroy(p->capture);\n  if (p->arena) cudaFree(p->arena);\n"
      "  delete p;\n}\n\n";

  // create
  out += fmt::format(
      "// On the current device. *out is set even when it fails, so that {0}_last_error can tell\n"
      "// why; {0}_destroy frees it either way.\n"
      "extern \"C\" int {0}_create({0}_program** out) {{\n"
      "  const char* ktune_where = \"{0}_create\";\n"
      "  {0}_program* p = new (std::nothrow) {0}_program();\n"
      "  *out = p;\n  if (p == nullptr) return 1;\n"
      "  char* ktune_error = p->error;\n"
      "  KTUNE_CUDA(cudaFree(nullptr));  // the primary context, current for the driver calls\n"
      "  KTUNE_CUDA(cudaGetDevice(&p->device));\n"
      "  KTUNE_CUDA(cudaMalloc(reinterpret_cast<void**>(&p->arena), {1}));  // the one allocation\n"
      "  KTUNE_CUDA(cudaStreamCreateWithFlags(&p->capture, cudaStreamNonBlocking));\n",
      G, std::max<std::size_t>(p.arena_bytes, 256));
  for (std::size_t i = 0; i < p.modules.size(); ++i) {
    out += fmt::format("  KTUNE_CU(cuModuleLoadData(&p->modules[{0}], ktune_cubin_{0}));\n", i);
  }
  for (std::size_t i = 0; i < p.functions.size(); ++i) {
    const CudaFunction& f = p.functions[i];
    out += fmt::format("  KTUNE_CU(cuModuleGetFunction(&p->fns[{}], p->modules[{}], \"{}\"));\n", i,
                       f.module, f.entry);
    if (f.shared_bytes > 48 * 1024) {
      out += fmt::format(
          "  KTUNE_CU(cuFuncSetAttribute(p->fns[{}], "
          "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, {}));\n",
          i, f.shared_bytes);
    }
  }
  if (!p.kernels.empty()) {
    out += fmt::format("  KTUNE_CU(cuModuleLoadData(&p->kernels, {}));\n", kernels_symbol(G));
    for (std::size_t i = 0; i < p.kernels.size(); ++i) {
      out +=
          fmt::format("  KTUNE_CU(cuModuleGetFunction(&p->kernel_fns[{}], p->kernels, \"{}\"));\n",
                      i, p.kernels[i].name);
    }
  }
  const std::string ws = fmt::format("p->arena + {}", p.workspace_offset);
  if (p.uses_cublas) {
    // cublasSetStream resets the handle's workspace to cuBLAS's own pool: the stream first.
    out += fmt::format(
        "  KTUNE_CUBLAS(cublasCreate(&p->cublas));\n"
        "  KTUNE_CUBLAS(cublasSetStream(p->cublas, p->capture));  // before the workspace: it "
        "resets it\n"
        "  KTUNE_CUBLAS(cublasSetWorkspace(p->cublas, {}, {}));\n",
        ws, p.workspace_bytes);
  }
  if (!p.lt.empty()) out += "  KTUNE_CUBLASLT(cublasLtCreate(&p->lt));\n";
  for (std::size_t i = 0; i < p.lt.size(); ++i) {
    const CudaLtGemm& l = p.lt[i];
    out += fmt::format(
        "  if (ktune_lt_setup(ktune_error, ktune_where, \"{}\", p->lt, {}, {}, {}, {}, {}, {}, "
        "{},\n                     &p->lt_desc[{}], p->lt_layout[{}], &p->lt_algo[{}]) != 0) "
        "return 1;\n",
        l.node, l.type, l.m, l.n, l.k, l.epilogue, l.algo, p.workspace_bytes, i, i, i);
  }
  out += "  return 0;\n}\n\n";
  return out;
}

std::string cuda_ctype(DType dtype) {
  return dtype == DType::kF16 ? "__half" : dtype == DType::kBF16 ? "__nv_bfloat16" : "float";
}
int cuda_dtype_code(DType dtype) {
  return dtype == DType::kF16 ? 1 : dtype == DType::kBF16 ? 2 : 0;
}
std::string cuda_data_type(DType dtype) {
  return dtype == DType::kF16 ? "CUDA_R_16F" : dtype == DType::kBF16 ? "CUDA_R_16BF" : "CUDA_R_32F";
}

}  // namespace ktune::codegen::detail
