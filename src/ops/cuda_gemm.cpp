// The built-in CUDA GEMM: problem, the MMA and SIMT templates with their search spaces and hooks
// (the Hopper ones: cuda_gemm_hopper.cpp), the separate epilogue, and the candidate set with
// cuBLAS and cuBLASLt.
#include "ktune/ops/cuda_gemm.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "ktune/choice/cublas_choice.h"
#include "ktune/choice/sequence_choice.h"
#include "ops/cuda_gemm_common.h"
#include "ops/cuda_kernels.h"
#include "ops/gemm_align.h"

namespace ktune {

using namespace cuda_gemm_internal;

namespace {

std::uint32_t mma_shared_bytes(const Config& c) {
  const std::int64_t bytes =
      param(c, "STAGES") * (param(c, "BLOCK_M") + param(c, "BLOCK_N")) * param(c, "BLOCK_K") * 2;
  return static_cast<std::uint32_t>(bytes);
}

std::int64_t mma_threads(const Config& c) {
  return (param(c, "BLOCK_M") / param(c, "WARP_M")) * (param(c, "BLOCK_N") / param(c, "WARP_N")) *
         32;
}

// What both tensor-core templates need besides their copies' alignment: `shared_bytes` within
// the opt-in maximum and a grid of at most 2^31-1 blocks.
Status mma_supports(const std::string& where, const Config& c, const Problem& p,
                    const Epilogue& e) {
  return aligned_rows_supports(where, p, e, mma_shared_bytes(c), param(c, "BLOCK_M"),
                               param(c, "BLOCK_N"));
}

Result<LaunchGeometry> mma_launch(const std::string& where, const Config& c, const Problem& p,
                                  const Epilogue& e) {
  return tiled_launch(where, c, p, e, mma_threads(c), mma_shared_bytes(c));
}

Status simt_supports(const std::string& where, const Config& c, const Problem& p,
                     const Epilogue& e) {
  Result<GemmDims> d = gemm_dims(where, p, e);
  if (!d) return std::unexpected(d.error());
  if (ceil_div(d->m, param(c, "BLOCK_M")) > kMaxGridY) {
    return make_error(
        ErrorCode::kInvalidArgument,
        fmt::format("{}: M; expected at most {} block rows, got M={}", where, kMaxGridY, d->m));
  }
  return {};
}

Result<LaunchGeometry> simt_launch(const std::string& where, const Config& c, const Problem& p,
                                   const Epilogue& e) {
  Result<GemmDims> d = gemm_dims(where, p, e);
  if (!d) return std::unexpected(d.error());
  const std::int64_t bm = param(c, "BLOCK_M"), bn = param(c, "BLOCK_N");
  LaunchGeometry g;
  g.grid = {static_cast<std::uint64_t>(std::max<std::int64_t>(ceil_div(d->n, bn), 1)),
            static_cast<std::uint64_t>(std::max<std::int64_t>(ceil_div(d->m, bm), 1)), 1};
  g.block = {static_cast<std::uint64_t>((bm / param(c, "THREAD_M")) * (bn / param(c, "THREAD_N"))),
             1, 1};
  return g;
}

// About 50 configs for the tensor-core kernel: the block shapes that keep 4 or 8 warps busy, the
// largest warp tile the register file holds, and pipelines 96..256 elements of K deep.
SearchSpace mma_space() {
  std::vector<Param> params = {
      {"BLOCK_M", {std::int64_t{64}, std::int64_t{128}, std::int64_t{256}}},
      {"BLOCK_N", {std::int64_t{64}, std::int64_t{128}, std::int64_t{256}}},
      {"BLOCK_K", {std::int64_t{32}, std::int64_t{64}}},
      {"WARP_M", {std::int64_t{32}, std::int64_t{64}}},
      {"WARP_N", {std::int64_t{32}, std::int64_t{64}}},
      {"STAGES", {std::int64_t{2}, std::int64_t{3}, std::int64_t{4}, std::int64_t{5}}},
      {"GROUP_M", {std::int64_t{1}, std::int64_t{8}}},
  };
  std::vector<std::string> restrictions = {
      // Threads: 4 or 8 warps (one block of 8 warps fills an SM's register file).
      "(BLOCK_M / WARP_M) * (BLOCK_N / WARP_N) * 32 >= 128",
      "(BLOCK_M / WARP_M) * (BLOCK_N / WARP_N) * 32 <= 256",
      // Registers: the largest warp tile with at least 2x2 warps, capped at 64x64 (128 fp32
      // accumulators and two fragment buffers per thread, about 240 registers).
      "WARP_M == min(64, BLOCK_M / 2) && WARP_N == min(64, BLOCK_N / 2)",
      // Pipeline depth: at least 3 stages, 96 to 256 elements of K in flight.
      "STAGES >= 3 && STAGES * BLOCK_K >= 96 && STAGES * BLOCK_K <= 256",
      // Shared memory: the H100's opt-in maximum (kCudaGemmMaxSharedBytes).
      "STAGES * (BLOCK_M + BLOCK_N) * BLOCK_K * 2 <= 232448",
      // Tile copies spread evenly over the threads (16-byte chunks).
      "(BLOCK_M * BLOCK_K / 8) % ((BLOCK_M / WARP_M) * (BLOCK_N / WARP_N) * 32) == 0",
      "(BLOCK_K * BLOCK_N / 8) % ((BLOCK_M / WARP_M) * (BLOCK_N / WARP_N) * 32) == 0",
      // Grouped rasterization everywhere; the plain row-major order for one pipeline per shape.
      "GROUP_M == 8 || (BLOCK_K == 32 && STAGES == 4)",
  };
  Result<SearchSpace> space = SearchSpace::create(std::move(params), std::move(restrictions));
  KTUNE_CHECK(space.has_value());
  return std::move(*space);
}

// 8 configs for the SIMT kernel: square block tiles of 64 to 256 threads.
SearchSpace simt_space() {
  std::vector<Param> params = {
      {"BLOCK_M", {std::int64_t{32}, std::int64_t{64}, std::int64_t{128}}},
      {"BLOCK_N", {std::int64_t{32}, std::int64_t{64}, std::int64_t{128}}},
      {"BLOCK_K", {std::int64_t{8}, std::int64_t{16}}},
      {"THREAD_M", {std::int64_t{4}, std::int64_t{8}}},
      {"THREAD_N", {std::int64_t{4}, std::int64_t{8}}},
  };
  std::vector<std::string> restrictions = {
      "BLOCK_M == BLOCK_N && THREAD_M == THREAD_N",
      "(BLOCK_M / THREAD_M) * (BLOCK_N / THREAD_N) >= 64",
      "(BLOCK_M / THREAD_M) * (BLOCK_N / THREAD_N) <= 256",
  };
  Result<SearchSpace> space = SearchSpace::create(std::move(params), std::move(restrictions));
  KTUNE_CHECK(space.has_value());
  return std::move(*space);
}

std::shared_ptr<KernelTemplate> mma_template(DType dtype, const Epilogue& e) {
  const std::string name = template_name("gemm_mma", dtype, e);
  KernelTemplateDesc desc;
  desc.name = name;
  desc.kind = "mma";
  desc.source = render_source("gemm_mma.cu", cuda_gemm_mma_source(), dtype, e);
  desc.entry = "gemm";
  desc.signature = gemm_signature(dtype, e);
  desc.launch = [name, e](const Config& c, const Problem& p) { return mma_launch(name, c, p, e); };
  desc.supports = [name, e](const Config& c, const Problem& p) {
    return mma_supports(name, c, p, e);
  };
  return KernelTemplate::create(std::move(desc), mma_space());
}

std::shared_ptr<KernelTemplate> simt_template(DType dtype, const Epilogue& e) {
  const std::string name = template_name("gemm_simt", dtype, e);
  KernelTemplateDesc desc;
  desc.name = name;
  desc.kind = kCudaGemmSimtKind;
  desc.source = render_source("gemm_simt.cu", cuda_gemm_simt_source(), dtype, e);
  desc.entry = "gemm";
  desc.signature = gemm_signature(dtype, e);
  desc.launch = [name, e](const Config& c, const Problem& p) { return simt_launch(name, c, p, e); };
  desc.supports = [name, e](const Config& c, const Problem& p) {
    return simt_supports(name, c, p, e);
  };
  return KernelTemplate::create(std::move(desc), simt_space());
}

// 256 threads, each on one 16-byte chunk per grid-stride step; at most 2^16 blocks.
Result<LaunchGeometry> epilogue_launch(const std::string& where, const Problem& p,
                                       const Epilogue& e) {
  Result<GemmDims> d = gemm_dims(where, p, e);
  if (!d) return std::unexpected(d.error());
  // 256 threads: x along a row's 16-byte chunks (a warp for short rows, up to 256), y over
  // rows; blockIdx.y covers the rows up to the grid's 65535, the kernel loops past that.
  const std::int64_t per_chunk = 16 / static_cast<std::int64_t>(dtype_size(p.args[0].tensor.dtype));
  const std::int64_t chunks = ceil_div(d->n, per_chunk);
  std::int64_t bx = 32;
  while (bx < 256 && bx < chunks) bx *= 2;
  const std::int64_t by = 256 / bx;
  LaunchGeometry g;
  g.grid = {static_cast<std::uint64_t>(std::max<std::int64_t>(ceil_div(chunks, bx), 1)),
            static_cast<std::uint64_t>(std::clamp<std::int64_t>(ceil_div(d->m, by), 1, kMaxGridY)),
            1};
  g.block = {static_cast<std::uint64_t>(bx), static_cast<std::uint64_t>(by), 1};
  return g;
}

}  // namespace

Problem cuda_gemm_problem(std::int64_t m, std::int64_t n, std::int64_t k, DType dtype,
                          int device_index, const Epilogue& epilogue) {
  const Device device{DeviceKind::kCuda, device_index};
  const Signature sig = gemm_signature(dtype, epilogue);
  Problem p;
  p.op = "gemm";
  p.name = fmt::format("M={},N={},K={},{}", m, n, k, dtype_name(dtype));
  if (!epilogue.empty()) p.name += "," + epilogue.name();
  p.args = {
      {sig[0], TensorSpec::contiguous(dtype, {m, n}, device), {}},
      {sig[1], TensorSpec::contiguous(dtype, {m, k}, device), {}},
      {sig[2], TensorSpec::contiguous(dtype, {k, n}, device), {}},
      {sig[3], {}, m},
      {sig[4], {}, n},
      {sig[5], {}, k},
  };
  for (ProblemArg& a : epilogue.problem_args(dtype, m, n, device)) p.args.push_back(std::move(a));
  return p;
}

std::vector<std::shared_ptr<KernelTemplate>> cuda_gemm_templates(DType dtype,
                                                                 const Epilogue& epilogue,
                                                                 bool hopper) {
  switch (dtype) {
    case DType::kF16:
    case DType::kBF16:
      // On Hopper the TMA template beat the mma.sync one on every shape measured (H200,
      // 2026-11-24: 90-95% of cuBLAS against at most 75%) and the wgmma one serves the shapes TMA
      // cannot (unaligned rows, split-K): the mma template's ~50 configs are not compiled there.
      if (hopper) {
        return {wgmma_template(dtype, epilogue), tma_template(dtype, epilogue, TmaKind::kPlain),
                tma_template(dtype, epilogue, TmaKind::kCluster), simt_template(dtype, epilogue)};
      }
      return {mma_template(dtype, epilogue), simt_template(dtype, epilogue)};
    case DType::kF32:
      return {simt_template(dtype, epilogue)};
    default:
      return {};
  }
}

std::shared_ptr<KernelTemplate> cuda_epilogue_template(DType dtype, const Epilogue& epilogue) {
  if (epilogue.empty() || cuda_gemm_templates(dtype).empty()) return nullptr;
  const std::string name = template_name("epilogue", dtype, epilogue);
  KernelTemplateDesc desc;
  desc.name = name;
  desc.kind = "epilogue";
  desc.source = render_source("epilogue.cu", cuda_epilogue_source(), dtype, epilogue);
  desc.entry = "gemm_epilogue";
  desc.signature = gemm_signature(dtype, epilogue);
  desc.launch = [name, epilogue](const Config&, const Problem& p) {
    return epilogue_launch(name, p, epilogue);
  };
  Result<SearchSpace> space = SearchSpace::create({}, {});
  KTUNE_CHECK(space.has_value());
  return KernelTemplate::create(std::move(desc), std::move(*space));
}

namespace {

// An epilogue that starts with a scale: the library GEMMs with it folded into alpha (C = S A B,
// in fp32 as the separate scale), followed by the rest of the epilogue as the separate kernel or
// as cuBLASLt's own where it has it: no pass over C for the scale ("cublas_gemm_scaled",
// "cublaslt_scaled_algo2+epilogue", "cublaslt_scaled_bias_algo0").
void add_scaled_library_choices(std::vector<ChoicePtr>& out, DType dtype, const Epilogue& epilogue,
                                int cublaslt_algos) {
  const std::vector<EpilogueOp>& ops = epilogue.ops();
  if (ops.empty() || ops[0].kind != EpilogueOpKind::kScale) return;
  const double alpha = ops[0].scale;
  const Epilogue rest(std::vector<EpilogueOp>(ops.begin() + 1, ops.end()));
  const std::vector<int> bind = {0, 1, 2, 3, 4, 5};  // C, A, B, M, N, K
  std::vector<ChoicePtr> gemms;
  gemms.push_back(make_cublas_gemm_choice(bind, "cublas_gemm_scaled", alpha));
  for (ChoicePtr& c :
       make_cublaslt_gemm_choices(bind, cublaslt_algos, 0, "cublaslt_scaled", alpha)) {
    gemms.push_back(std::move(c));
  }
  if (rest.empty()) {
    for (ChoicePtr& c : gemms) out.push_back(std::move(c));
    return;
  }
  // The rest has the same operands (a scale has none), in the same argument positions.
  const std::shared_ptr<KernelTemplate> separate = cuda_epilogue_template(dtype, rest);
  for (ChoicePtr& c : gemms) {
    std::string name = c->name() + "+epilogue";
    out.push_back(make_sequence_choice(std::move(name), std::move(c), separate->choice(Config{})));
  }
  if (const int lt = cublaslt_epilogue_of(rest); lt != 0) {
    std::vector<int> lt_bind = bind;
    if (!rest.operands().empty()) lt_bind.push_back(6);  // the bias
    for (ChoicePtr& c : make_cublaslt_gemm_choices(
             lt_bind, cublaslt_algos, lt, fmt::format("cublaslt_scaled_{}", rest.tag()), alpha)) {
      out.push_back(std::move(c));
    }
  }
}

}  // namespace

CudaGemmCandidates cuda_gemm_candidates(DType dtype, int cublaslt_algos, const Problem* problem,
                                        bool with_simt, const Epilogue& epilogue, bool hopper) {
  CudaGemmCandidates out;
  std::vector<std::shared_ptr<KernelTemplate>> templates =
      cuda_gemm_templates(dtype, epilogue, hopper);
  if (templates.empty()) return out;
  bool tensor_cores_serve = false;
  // Given the problem, the wgmma configs of another copy width than its rows' alignment stay
  // out: they could never serve it (a wider VEC) or would lose to the one that does.
  const std::string vec = problem ? std::to_string(gemm_row_alignment(*problem)) : "";
  const auto other_vec = [&](const ChoicePtr& c) {
    for (const auto& [name, value] : c->params()) {
      if (name == "VEC") return value != vec;
    }
    return false;
  };
  for (const std::shared_ptr<KernelTemplate>& t : templates) {
    const bool simt = t->desc().kind == kCudaGemmSimtKind;
    if (simt && tensor_cores_serve && !with_simt) continue;
    const bool wgmma = t->desc().kind == "wgmma";
    Result<std::vector<ChoicePtr>> choices = t->choices();
    KTUNE_CHECK(choices.has_value());  // the built-in spaces are small
    for (ChoicePtr& c : *choices) {
      if (problem && wgmma && other_vec(c)) continue;
      if (!simt && problem && c->supports(*problem)) tensor_cores_serve = true;
      out.candidates.push_back(std::move(c));
    }
  }
  // Rows that TMA cannot read (N or K not a multiple of 8) on Hopper: the TMA GEMM on copies of
  // A and/or B with 16-byte row strides, the copies made by a first kernel (one pass over the
  // operands) in the launch's workspace.
  if (hopper && problem && dtype != DType::kF32 && gemm_row_alignment(*problem) != 8) {
    const std::shared_ptr<KernelTemplate> restride = restride_template(dtype, epilogue);
    Result<std::vector<ChoicePtr>> choices =
        tma_template(dtype, epilogue, TmaKind::kRestrided)->choices();
    KTUNE_CHECK(choices.has_value());
    for (ChoicePtr& c : *choices) {
      std::string name = "restride+" + c->name();
      out.candidates.push_back(
          make_sequence_choice(std::move(name), restride->choice(Config{}), std::move(c)));
    }
  }
  const std::vector<int> bind = {0, 1, 2, 3, 4, 5};  // C, A, B, M, N, K
  if (epilogue.empty()) {
    out.candidates.push_back(make_cublas_gemm_choice(bind));
    for (ChoicePtr& c : make_cublaslt_gemm_choices(bind, cublaslt_algos)) {
      out.candidates.push_back(std::move(c));
    }
    out.reference = make_cublas_reference_gemm_choice(bind);
    return out;
  }
  // The unfused pairs: each library GEMM followed by the separate epilogue kernel.
  const std::shared_ptr<KernelTemplate> separate = cuda_epilogue_template(dtype, epilogue);
  const auto pair = [&](ChoicePtr gemm) {
    std::string name = gemm->name() + "+epilogue";
    return make_sequence_choice(std::move(name), std::move(gemm), separate->choice(Config{}));
  };
  out.candidates.push_back(pair(make_cublas_gemm_choice(bind)));
  for (ChoicePtr& c : make_cublaslt_gemm_choices(bind, cublaslt_algos)) {
    out.candidates.push_back(pair(std::move(c)));
  }
  // cuBLASLt's own fused epilogue, where it has this one.
  if (const int lt = cublaslt_epilogue_of(epilogue); lt != 0) {
    std::vector<int> lt_bind = bind;
    const std::vector<EpilogueOperand> ops = epilogue.operands();
    if (!ops.empty()) lt_bind.push_back(6);  // the bias: the only operand cuBLASLt takes
    for (ChoicePtr& c : make_cublaslt_gemm_choices(lt_bind, cublaslt_algos, lt,
                                                   fmt::format("cublaslt_{}", epilogue.tag()))) {
      out.candidates.push_back(std::move(c));
    }
  }
  add_scaled_library_choices(out.candidates, dtype, epilogue, cublaslt_algos);
  out.reference = pair(make_cublas_reference_gemm_choice(bind));
  return out;
}

}  // namespace ktune
