// The benchmark main() of a generated CUDA program: seeded inputs on the device, the program
// run (captured) three times, then RUNS graph replays each timed with CUDA events; the median,
// the arena's bytes and a checksum of the outputs printed. Bad arguments: usage, exit 2.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/cuda_wrapper_emit.h"
#include "codegen/wrapper_snippets.h"

namespace ktune::codegen::detail {

std::string emit_cuda_main(const CudaProgram& p) {
  const Graph& g = p.fg.graph;
  const std::string& G = g.name;
  std::string out = "#ifdef KTUNE_BENCHMARK_MAIN\n";
  out += detail::benchmark_usage(G);
  out += fmt::format(
      "static KtuneCudaTensor ktune_tensor(void* data, int dtype, int device,\n"
      "                                    std::initializer_list<std::int64_t> sizes,\n"
      "                                    std::initializer_list<std::int64_t> strides) {{\n"
      "  KtuneCudaTensor t{{data, dtype, device, static_cast<int>(sizes.size()), {{}}, {{}}}};\n"
      "  std::copy(sizes.begin(), sizes.end(), t.sizes);\n"
      "  std::copy(strides.begin(), strides.end(), t.strides);\n"
      "  return t;\n}}\n\n"
      "// The sum of a device tensor's elements, read back as floats.\n"
      "static double ktune_checksum(const KtuneCudaTensor& t) {{\n"
      "  std::int64_t n = 1;\n"
      "  for (int d = 0; d < t.ndim; ++d) n *= t.sizes[d];\n"
      "  const std::size_t elem = t.dtype == 0 ? 4 : 2;\n"
      "  std::vector<unsigned char> host(static_cast<std::size_t>(n) * elem);\n"
      "  if (cudaMemcpy(host.data(), t.data, host.size(), cudaMemcpyDeviceToHost) != cudaSuccess) "
      "return NAN;\n"
      "  double sum = 0;\n"
      "  for (std::int64_t i = 0; i < n; ++i) {{\n"
      "    const unsigned char* e = host.data() + i * elem;\n"
      "    if (t.dtype == 0) {{ float v; std::memcpy(&v, e, 4); sum += v; }}\n"
      "    else if (t.dtype == 1) {{ __half v; std::memcpy(&v, e, 2); sum += __half2float(v); }}\n"
      "    else {{ __nv_bfloat16 v; std::memcpy(&v, e, 2); sum += __bfloat162float(v); }}\n"
      "  }}\n"
      "  return sum;\n}}\n\n");
  out += detail::benchmark_main_args();
  out += fmt::format(
      "  {0}_program* program = nullptr;\n"
      "  if ({0}_create(&program) != 0) {{\n"
      "    std::fprintf(stderr, \"error: %s\\n\", {0}_last_error(program));\n"
      "    {0}_destroy(program);\n"
      "    return 1;\n"
      "  }}\n"
      "  int device = 0;\n  cudaGetDevice(&device);\n",
      G);
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    const GraphInput& in = g.inputs[i];
    out += fmt::format(
        "  std::vector<float> ktune_host_{0}({1});\n"
        "  ktune_random_fill(ktune_host_{0}, seed + {2});\n",
        i, in.spec.numel(), i);
  }
  out += fmt::format("  const KtuneCudaTensor inputs[{}] = {{\n", g.inputs.size());
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    const TensorSpec& t = g.inputs[i].spec;
    const int code = cuda_dtype_code(t.dtype);
    out += fmt::format(
        "      ktune_tensor(ktune_upload(ktune_host_{}, {}), {}, device, {{{}}}, {{{}}}),  // {}\n",
        i, code, code, fmt::join(t.sizes, ", "), fmt::join(t.strides, ", "), g.inputs[i].name);
  }
  out += "  };\n";
  out += fmt::format("  KtuneCudaTensor outputs[{}] = {{\n", g.outputs.size());
  for (const std::string& o : g.outputs) {
    const TensorSpec& t = p.specs.at(o);
    const int code = cuda_dtype_code(t.dtype);
    out += fmt::format(
        "      ktune_tensor(ktune_upload(std::vector<float>({}), {}), {}, device, {{{}}}, "
        "{{{}}}),  // {}\n",
        t.numel(), code, code, fmt::join(t.sizes, ", "), fmt::join(t.strides, ", "), o);
  }
  out += "  };\n";
  out += fmt::format(
      "  cudaStream_t stream = nullptr;\n"
      "  cudaEvent_t start = nullptr, stop = nullptr;\n"
      "  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess ||\n"
      "      cudaEventCreate(&start) != cudaSuccess || cudaEventCreate(&stop) != cudaSuccess) {{\n"
      "    std::fprintf(stderr, \"error: cannot create a CUDA stream and events\\n\");\n"
      "    return 1;\n"
      "  }}\n"
      "  std::vector<double> ms;\n"
      "  for (int r = -3; r < runs; ++r) {{  // three warm-up runs first (the first captures)\n"
      "    cudaEventRecord(start, stream);\n"
      "    if ({0}_run(program, inputs, {1}, outputs, {2}, stream) != 0) {{\n"
      "      std::fprintf(stderr, \"error: %s\\n\", {0}_last_error(program));\n"
      "      return 1;\n"
      "    }}\n"
      "    cudaEventRecord(stop, stream);\n"
      "    if (cudaEventSynchronize(stop) != cudaSuccess) {{\n"
      "      std::fprintf(stderr, \"error: the forward failed: %s\\n\",\n"
      "                   cudaGetErrorString(cudaGetLastError()));\n"
      "      return 1;\n"
      "    }}\n"
      "    float elapsed = 0;\n"
      "    cudaEventElapsedTime(&elapsed, start, stop);\n"
      "    if (r >= 0) ms.push_back(elapsed);\n"
      "  }}\n"
      "  double checksum = 0;\n"
      "  for (const KtuneCudaTensor& o : outputs) checksum += ktune_checksum(o);\n"
      "  std::printf(\"{0}: median %.4f ms over %zu runs (seed %llu, arena %zu bytes, output "
      "checksum %.6g)\\n\",\n"
      "              ktune_median_ms(ms), ms.size(), static_cast<unsigned long long>(seed),\n"
      "              {0}_arena_bytes(), checksum);\n"
      "  for (const KtuneCudaTensor& t : inputs) cudaFree(t.data);\n"
      "  for (const KtuneCudaTensor& t : outputs) cudaFree(t.data);\n"
      "  {0}_destroy(program);\n"
      "  return 0;\n}}\n#endif\n",
      G, g.inputs.size(), g.outputs.size());
  return out;
}

}  // namespace ktune::codegen::detail
