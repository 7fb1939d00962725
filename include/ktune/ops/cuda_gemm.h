// The built-in CUDA GEMM: row-major C[M,N] = A[M,K] * B[K,N], A, B and C of one dtype (f16,
// bf16 or f32), fp32 accumulation. Its problem, its kernel templates (kernels/cuda/gemm_mma.cu:
// tensor cores, f16/bf16, sm_80+; kernels/cuda/gemm_wgmma.cu: Hopper's warp-group MMA,
// f16/bf16, sm_90a; kernels/cuda/gemm_simt.cu: any GPU, any shape) and the
// candidate set that adds cuBLAS and cuBLASLt, with cuBLAS as the reference.
// Kernel arguments, in order: C (out), A (in), B (in), M, N, K (i32 scalars).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "ktune/choice/choice.h"
#include "ktune/choice/kernel_template.h"
#include "ktune/core/dtype.h"
#include "ktune/core/epilogue.h"
#include "ktune/core/problem.h"

namespace ktune {

// Dynamic shared memory a block may opt in to on the H100 (227 KiB); larger configs are
// rejected. GPUs with less (A100: 163 KiB) fail those configs at load time.
inline constexpr std::uint32_t kCudaGemmMaxSharedBytes = 227 * 1024;

// op "gemm", name "M=4096,N=4096,K=4096,bf16" (",bias+relu" with an epilogue); contiguous
// row-major tensors on cuda:device_index; after C, A, B, M, N, K the epilogue's operands.
[[nodiscard]] Problem cuda_gemm_problem(std::int64_t m, std::int64_t n, std::int64_t k, DType dtype,
                                        int device_index = 0, const Epilogue& epilogue = {});

// The templates for `dtype`: "cuda_gemm_mma_<dtype>" (f16 and bf16 only; mma.sync, sm_80+) or,
// with `hopper` (a backend whose arch is "sm_90a"), "cuda_gemm_wgmma_<dtype>"
// (kernels/cuda/gemm_wgmma.cu: cp.async tiles, every alignment, split-K) and
// "cuda_gemm_tma_<dtype>" (kernels/cuda/gemm_tma.cu: TMA, warp-specialised, persistent; its
// launches carry two tensor maps), both f16 and bf16 and compiling for sm_90a only, in place of
// the mma one, which they beat there;
// then "cuda_gemm_simt_<dtype>";
// empty for a dtype other than f16, bf16, f32. Each has a launch hook (grid, block threads,
// dynamic shared bytes) and a supports hook (MMA and TMA: N % 8 == 0, K % 8 == 0, buffers
// 16-byte aligned; wgmma: any N, K, offsets, each served by the configs whose VEC matches the
// rows' alignment, split-K (16-byte rows only) and BLOCK_N 64 only for shapes with few tiles;
// all: contiguous row-major tensors of the problem's sizes).
// With an epilogue, the templates have it fused into their store (include/ktune/core/epilogue.h),
// take its operands after K, and are named "cuda_gemm_mma_<dtype>_<epilogue>".
// KernelTemplateDesc::kind says the family: "mma", "wgmma", "tma" or "simt" (kCudaGemmSimtKind).
inline constexpr std::string_view kCudaGemmSimtKind = "simt";
[[nodiscard]] std::vector<std::shared_ptr<KernelTemplate>> cuda_gemm_templates(
    DType dtype, const Epilogue& epilogue = {}, bool hopper = false);

// kernels/cuda/epilogue.cu for `epilogue`: C updated in place, after a library GEMM; one
// config. Null for an empty epilogue or a dtype without templates.
[[nodiscard]] std::shared_ptr<KernelTemplate> cuda_epilogue_template(DType dtype,
                                                                     const Epilogue& epilogue);

struct CudaGemmCandidates {
  std::vector<ChoicePtr> candidates;
  ChoicePtr reference;  // cuBLAS; null for a dtype without templates
};

// Every template choice, cuBLAS and `cublaslt_algos` cuBLASLt heuristic algorithms; the
// reference is a separate cuBLAS choice. Given a `problem` that a tensor-core choice supports,
// the SIMT template's choices are left out unless `with_simt`: on an H100 they are many times
// slower there and cost most of the tuning time of large problems; nor are the wgmma configs
// whose VEC is not the one the problem's alignment needs.
// With an epilogue: the templates with it fused, every library GEMM followed by the separate
// epilogue kernel ("cublas_gemm+epilogue", "cublaslt_algo3+epilogue"), and cuBLASLt's own fused
// epilogue where it has this one ("cublaslt_bias_relu_algo0"); the reference is cuBLAS followed
// by the separate epilogue, so every fused candidate is checked against the unfused pair.
// `hopper` adds the wgmma template (see cuda_gemm_templates).
[[nodiscard]] CudaGemmCandidates cuda_gemm_candidates(DType dtype, int cublaslt_algos = 8,
                                                      const Problem* problem = nullptr,
                                                      bool with_simt = false,
                                                      const Epilogue& epilogue = {},
                                                      bool hopper = false);

}  // namespace ktune
