// What the built-in CUDA GEMM templates share (cuda_gemm_common.h).
#include "ops/cuda_gemm_common.h"

#include <fmt/format.h>

#include <algorithm>
#include <variant>
#include <vector>

#include "ktune/ops/cuda_gemm.h"
#include "ops/cuda_kernels.h"

namespace ktune::cuda_gemm_internal {
namespace {

// The epilogue's operands of a problem with gemm_signature: contiguous, of C's dtype and device,
// [N], [M] or [M, N] as Epilogue::problem_args says.
Status check_operands(std::string_view where, const Problem& p, const Epilogue& epilogue,
                      std::int64_t m, std::int64_t n) {
  const std::vector<ProblemArg> want =
      epilogue.problem_args(p.args[0].tensor.dtype, m, n, p.args[0].tensor.device);
  for (std::size_t i = 0; i < want.size(); ++i) {
    const TensorSpec& t = p.args[6 + i].tensor;
    if (t.sizes != want[i].tensor.sizes || t.strides != want[i].tensor.strides) {
      return make_error(
          ErrorCode::kInvalidArgument,
          fmt::format("{}: epilogue operand {}; expected contiguous {}, got {}", where,
                      p.args[6 + i].param.name, want[i].tensor.key(), t.key()));
    }
  }
  return {};
}

int dtype_code(DType dtype) { return dtype == DType::kF16 ? 0 : dtype == DType::kBF16 ? 1 : 2; }

}  // namespace

// A parameter of our own spaces: present and an integer by construction.
std::int64_t param(const Config& config, std::string_view name) {
  const ParamValue* v = config.find(name);
  KTUNE_CHECK(v != nullptr && std::holds_alternative<std::int64_t>(*v));
  return std::get<std::int64_t>(*v);
}

// M, N, K of a problem with gemm_signature (the template checks the signature first), each
// within the kernels' int range, and A, B, C contiguous row-major of those sizes.
Result<GemmDims> gemm_dims(std::string_view where, const Problem& p, const Epilogue& epilogue) {
  const std::size_t want_args = 6 + epilogue.operands().size();
  if (p.args.size() != want_args) {
    return make_error(
        ErrorCode::kInvalidArgument,
        fmt::format("{}: argument count; expected {} (C, A, B, M, N, K{}{}), got {}", where,
                    want_args, want_args > 6 ? " and the epilogue's " : "",
                    want_args > 6 ? std::to_string(want_args - 6) : "", p.args.size()));
  }
  std::int64_t dims[3];
  for (int i = 0; i < 3; ++i) {
    const ProblemArg& a = p.args[3 + i];
    const auto* v = std::get_if<std::int64_t>(&a.scalar);
    if (v == nullptr || *v < 0 || *v > kMaxInt32) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("{}: scalar {}; expected an integer in [0, 2^31), got {}",
                                    where, a.param.name, v ? std::to_string(*v) : "a float"));
    }
    dims[i] = *v;
  }
  const GemmDims d{dims[0], dims[1], dims[2]};
  const std::vector<std::int64_t> want[3] = {{d.m, d.n}, {d.m, d.k}, {d.k, d.n}};
  for (int i = 0; i < 3; ++i) {
    const TensorSpec& t = p.args[i].tensor;
    const TensorSpec row_major = TensorSpec::contiguous(t.dtype, want[i]);
    if (t.sizes != want[i] || t.strides != row_major.strides) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("{}: tensor {}; expected contiguous row-major [{},{}], got {}",
                                    where, p.args[i].param.name, want[i][0], want[i][1], t.key()));
    }
  }
  if (Status s = check_operands(where, p, epilogue, d.m, d.n); !s) {
    return std::unexpected(s.error());
  }
  return d;
}

Status tile_limits(const std::string& where, const GemmDims& d, std::uint32_t shared_bytes,
                   std::int64_t block_m, std::int64_t block_n) {
  if (shared_bytes > kCudaGemmMaxSharedBytes) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: shared memory; expected at most {} bytes, got {}", where,
                                  kCudaGemmMaxSharedBytes, shared_bytes));
  }
  const std::int64_t blocks = ceil_div(d.m, block_m) * ceil_div(d.n, block_n);
  if (blocks > kMaxInt32) {
    return make_error(
        ErrorCode::kInvalidArgument,
        fmt::format("{}: grid; expected at most 2^31-1 blocks, got {}", where, blocks));
  }
  return {};
}

// The MMA template: 16-byte rows (N, K and offsets multiples of 8 elements).
Status aligned_rows_supports(const std::string& where, const Problem& p, const Epilogue& e,
                             std::uint32_t shared_bytes, std::int64_t block_m,
                             std::int64_t block_n) {
  Result<GemmDims> d = gemm_dims(where, p, e);
  if (!d) return std::unexpected(d.error());
  // Each 16-byte cp.async copies 8 elements of one row: rows must start 16-byte aligned.
  if (d->n % 8 != 0 || d->k % 8 != 0) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: N and K; expected multiples of 8 (16-byte rows), got "
                                  "N={} K={}",
                                  where, d->n, d->k));
  }
  for (int i = 0; i < 3; ++i) {
    if (p.args[i].tensor.offset % 8 != 0) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("{}: tensor {} offset; expected a multiple of 8 elements "
                                    "(16 bytes), got {}",
                                    where, p.args[i].param.name, p.args[i].tensor.offset));
    }
  }
  return tile_limits(where, *d, shared_bytes, block_m, block_n);
}

// A 1-D grid over the output tiles of BLOCK_M x BLOCK_N; the kernels map block ids to tiles in
// groups of GROUP_M block rows. An empty output still launches one block, which exits at once.
Result<LaunchGeometry> tiled_launch(const std::string& where, const Config& c, const Problem& p,
                                    const Epilogue& e, std::int64_t threads,
                                    std::uint32_t shared_bytes) {
  Result<GemmDims> d = gemm_dims(where, p, e);
  if (!d) return std::unexpected(d.error());
  const std::int64_t blocks =
      ceil_div(d->m, param(c, "BLOCK_M")) * ceil_div(d->n, param(c, "BLOCK_N"));
  LaunchGeometry g;
  g.grid = {static_cast<std::uint64_t>(std::max<std::int64_t>(blocks, 1)), 1, 1};
  g.block = {static_cast<std::uint64_t>(threads), 1, 1};
  g.shared_bytes = shared_bytes;
  return g;
}

// "cuda_gemm_mma_bf16", with the epilogue's tag when there is one.
std::string template_name(std::string_view kind, DType dtype, const Epilogue& e) {
  return e.empty() ? fmt::format("cuda_{}_{}", kind, dtype_name(dtype))
                   : fmt::format("cuda_{}_{}_{}", kind, dtype_name(dtype), e.tag());
}

// The template's source: the dtype and, for a fused epilogue, its hook's #defines, then
// kernels/cuda/prelude.cuh and the kernel file `file` (NVRTC has no include path to this tree),
// each under its own #line name so that compiler messages point into the files. The dtype is a
// #define rather than part of the name, so that the source text (and each choice's hash)
// differs per dtype while choice names stay free of it.
std::string render_source(std::string_view file, std::string_view source, DType dtype,
                          const Epilogue& e, bool hopper_header) {
  std::string text = fmt::format("#define DTYPE {}\n", dtype_code(dtype));
  if (!e.empty()) {
    text += e.render_defines("const ktune_gemm::elem_t* __restrict__", EpilogueLanguage::kCuda);
  }
  text += fmt::format("#line 1 \"kernels/cuda/prelude.cuh\"\n{}", cuda_prelude_source());
  if (hopper_header) {
    text += fmt::format("#line 1 \"kernels/cuda/hopper.cuh\"\n{}", cuda_hopper_source());
  }
  return text + fmt::format("#line 1 \"kernels/cuda/{}\"\n{}", file, source);
}

}  // namespace ktune::cuda_gemm_internal
