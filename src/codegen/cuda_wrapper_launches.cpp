// The generated kernels of a CUDA program: each node that is not a gemm planned as a launch of an
// extern "C" instance of one of cuda_kernels_snippet()'s templates (its element type, 16-byte
// accesses or not, a row kernel's chunks per thread), and <graph>_kernels.cu, the text that nvcc
// compiles to the cubin the host program loads. Both follow from the fused graph alone, never
// from the gemms' picks, so that the kernels can be built while the gemms are tuned
// (predict_cuda_kernels, cuda_wrapper.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "codegen/cuda_wrapper_emit.h"
#include "codegen/cuda_wrapper_snippets.h"

namespace ktune::codegen::detail {
namespace {

// Threads of a streaming row kernel (row_sum, the fallback of the others): a warp for short
// rows, up to 1024 so that each thread has about 8 elements.
int row_threads(std::int64_t n) {
  int t = 32;
  while (t < 1024 && t * 8 < n) t *= 2;
  return t;
}

// A register-held row kernel's block: `chunks` (a power of two up to 8, the template's kChunks)
// 16-byte chunks per thread under `vec`, elements otherwise; one chunk per thread up to 512
// threads (a warp for short rows), more chunks beyond. 0 chunks: too long for registers, the
// streaming fallback with row_threads().
struct RowPlan {
  int threads = 32;
  int chunks = 0;
};
RowPlan row_plan(std::int64_t n, bool vec, std::int64_t width) {
  const std::int64_t units = vec ? n / width : n;
  RowPlan r;
  while (r.threads < 512 && r.threads < units) r.threads *= 2;
  const std::int64_t per_thread = (units + r.threads - 1) / r.threads;
  r.chunks = 1;
  while (r.chunks < per_thread) r.chunks *= 2;
  if (r.chunks > 8) return {row_threads(n), 0};
  return r;
}

std::string dtype_tag(DType d) {
  return d == DType::kF16 ? "f16" : d == DType::kBF16 ? "bf16" : "f32";
}

// The kernel `name` (added with `definition` on first use): its index in p.kernels.
std::size_t use(CudaProgram& p, const std::string& name, const std::string& definition) {
  for (std::size_t i = 0; i < p.kernels.size(); ++i) {
    if (p.kernels[i].name == name) return i;
  }
  p.kernels.push_back({name, definition});
  return p.kernels.size() - 1;
}

}  // namespace

std::string cuda_float_literal(double v) {
  std::string s = fmt::format("{:.9g}", v);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s + "f";
}

void plan_kernels(CudaProgram& p) {
  for (const GraphNode& n : p.fg.graph.nodes) {
    if (n.op == OpKind::kGemm) continue;
    const TensorSpec& x = p.specs.at(n.inputs[0]);
    const std::string t = cuda_ctype(n.out.dtype);
    const std::string dt = dtype_tag(n.out.dtype);
    const std::int64_t numel = n.out.numel();
    const std::int64_t width = 16 / static_cast<std::int64_t>(dtype_size(n.out.dtype));
    // Row kernels load 16 bytes at a time where every row starts 16-byte aligned.
    const bool vec_rows = x.sizes.back() % width == 0;
    const std::string rv = vec_rows ? "true" : "false";
    const std::string rtag = vec_rows ? "v" : "s";
    const RowPlan rows = row_plan(x.sizes.back(), vec_rows, width);
    const std::string y = n.name, xin = n.inputs[0];
    CudaLaunch l;
    // y[i] = f(x[i], z[..]) (cuda_kernels_snippet()'s ktune_pointwise): cols > 0: z[i % cols]
    // (bias_add), < 0: z[i / -cols] (row_bias_add, one value per row), 0: z of y's shape or none.
    const auto pointwise = [&](const std::string& op, const std::string& functor,
                               const std::string& z, std::int64_t cols, double alpha) {
      const bool vec = numel % width == 0 && (cols == 0 || std::abs(cols) % width == 0);
      const std::string name = fmt::format("ktune_pointwise_{}_{}_{}", op, dt, vec ? "v" : "s");
      l.kernel =
          use(p, name,
              fmt::format("extern \"C\" __global__ void {0}({1}* __restrict__ y, const {1}* "
                          "__restrict__ x,\n    const {1}* __restrict__ z, long long n, long long "
                          "cols, float alpha) {{\n"
                          "  ktune_pointwise<{2}>(y, x, z, n, cols, {3});\n}}\n",
                          name, t, vec ? "true" : "false", functor));
      // 256 threads, a grid-stride loop over at most 2^20 blocks.
      const std::int64_t w = vec ? width : 1;
      l.grid[0] =
          std::min<std::int64_t>(std::max<std::int64_t>((numel / w + 255) / 256, 1), 1 << 20);
      l.block[0] = 256;
      l.args = {y,
                xin,
                z.empty() ? fmt::format("static_cast<const {}*>(nullptr)", t) : z,
                fmt::format("{}LL", numel),
                fmt::format("{}LL", cols),
                cuda_float_literal(alpha)};
    };
    // A row kernel: one block of `threads` per row of x.
    const auto row = [&](const std::string& name, const std::string& definition, int threads,
                         std::vector<std::string> args) {
      l.kernel = use(p, name, definition);
      l.grid[0] = x.sizes[0];
      l.block[0] = threads;
      l.args = std::move(args);
    };
    switch (n.op) {
      case OpKind::kGemm:
        break;
      case OpKind::kBiasAdd:
        pointwise("add", "KtuneAdd{}", n.inputs[1], x.sizes[1], 0);
        break;
      case OpKind::kRowBiasAdd:
        pointwise("add", "KtuneAdd{}", n.inputs[1], -x.sizes[1], 0);
        break;
      case OpKind::kRelu:
        pointwise("relu", "KtuneRelu{}", "", 0, 0);
        break;
      case OpKind::kGelu:
        pointwise("gelu", "KtuneGelu{}", "", 0, 0);
        break;
      case OpKind::kSilu:
        pointwise("silu", "KtuneSilu{}", "", 0, 0);
        break;
      case OpKind::kAdd:
        pointwise("add", "KtuneAdd{}", n.inputs[1], 0, 0);
        break;
      case OpKind::kScale:
        pointwise("scale", "KtuneScale{alpha}", "", 0, n.alpha);
        break;
      case OpKind::kTranspose: {
        const std::int64_t m = x.sizes[0], c = x.sizes[1];
        // 2-byte elements with both row lengths a multiple of 8 (tensors and arena slices are
        // 16-byte aligned): 64 x 64 tiles of 16-byte moves; f32 (a warp's access is 128 bytes
        // already) and odd shapes: the scalar 32 x 33 tile.
        const bool vec = dtype_size(n.out.dtype) == 2 && m % 8 == 0 && c % 8 == 0;
        const std::string name = fmt::format("ktune_transpose_{}_{}", dt, vec ? "v" : "s");
        l.kernel =
            use(p, name,
                fmt::format("extern \"C\" __global__ void{2} {0}({1}* __restrict__ y, const {1}* "
                            "__restrict__ x, int m,\n    int n) {{\n"
                            "  ktune_transpose{3}(y, x, m, n);\n}}\n",
                            name, t, vec ? " __launch_bounds__(256)" : "", vec ? "_vec" : ""));
        const std::int64_t tile = vec ? 64 : 32;
        l.grid = {(c + tile - 1) / tile, (m + tile - 1) / tile, 1};
        l.block =
            vec ? std::array<std::int64_t, 3>{256, 1, 1} : std::array<std::int64_t, 3>{32, 8, 1};
        l.args = {y, xin, fmt::format("{}", m), fmt::format("{}", c)};
        break;
      }
      case OpKind::kRowSoftmax: {
        auto s = p.softmax_scale.find(n.name);
        const std::string name = fmt::format("ktune_row_softmax_{}_{}{}", dt, rtag, rows.chunks);
        row(name,
            fmt::format("extern \"C\" __global__ void {0}({1}* __restrict__ y, const {1}* "
                        "__restrict__ x, int n,\n    float scale) {{\n"
                        "  ktune_row_softmax<{2}, {3}>(y, x, n, scale);\n}}\n",
                        name, t, rv, rows.chunks),
            rows.threads,
            {y, xin, fmt::format("{}", x.sizes[1]),
             cuda_float_literal(s == p.softmax_scale.end() ? 1.0 : s->second)});
        break;
      }
      case OpKind::kRowSum: {
        const std::string name = fmt::format("ktune_row_sum_{}_{}", dt, rtag);
        row(name,
            fmt::format("extern \"C\" __global__ void {0}({1}* __restrict__ y, const {1}* "
                        "__restrict__ x, int n) {{\n"
                        "  ktune_row_sum<{2}>(y, x, n);\n}}\n",
                        name, t, rv),
            row_threads(x.sizes[1]), {y, xin, fmt::format("{}", x.sizes[1])});
        break;
      }
      case OpKind::kLayerNorm: {
        const std::string name = fmt::format("ktune_layer_norm_{}_{}{}", dt, rtag, rows.chunks);
        row(name,
            fmt::format("extern \"C\" __global__ void {0}({1}* __restrict__ y, const {1}* "
                        "__restrict__ x,\n    const {1}* __restrict__ gamma, const {1}* "
                        "__restrict__ beta, int n, float eps) {{\n"
                        "  ktune_layer_norm<{2}, {3}>(y, x, gamma, beta, n, eps);\n}}\n",
                        name, t, rv, rows.chunks),
            rows.threads,
            {y, xin, n.inputs[1], n.inputs[2], fmt::format("{}", x.sizes[1]),
             cuda_float_literal(n.eps)});
        break;
      }
    }
    p.launches.emplace(n.name, std::move(l));
  }
}

std::string emit_cuda_kernels(const CudaProgram& p) {
  if (p.kernels.empty()) return "";
  const Graph& g = p.fg.graph;
  std::string s = fmt::format(
      "// {0}_kernels.cu: generated by `ktune compile --device cuda` from graph '{0}' ({1}): the\n"
      "// program's own kernels, loaded by {0}.cpp from {0}_kernels.cubin by name. Do not edit.\n"
      "// Build: nvcc -cubin -O3 -std=c++17 -arch=ARCH {0}_kernels.cu -o {0}_kernels.cubin\n",
      g.name, g.file.filename().string());
  for (std::string_view i : kCudaKernelIncludes) s += fmt::format("#include {}\n", i);
  s += "\n";
  s += cuda_kernels_snippet();
  s += "\n// ---- The instances this program launches.\n";
  for (const CudaKernel& k : p.kernels) s += k.definition;
  return s;
}

}  // namespace ktune::codegen::detail
