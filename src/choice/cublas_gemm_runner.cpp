// CublasGemmRunner: row-major C[m,n] = A[m,k] B[k,n] on column-major cuBLAS.
//
// A row-major [r, c] matrix with row stride ld is, read column-major, its transpose [c, r] with
// leading dimension ld. So C^T[n,m] = B^T[n,k] A^T[k,m] is a column-major GEMM with no
// transposes: m' = n, n' = m, k' = k; first operand B (ld = B's row stride), second operand A
// (ld = A's row stride), output C (ld = C's row stride). Both runners use exactly this mapping.
#include "choice/cublas_gemm_runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "choice/cublas_library.h"

// Evaluates `api.call_expr`; on failure returns its Status from the enclosing function.
#define KTUNE_CUBLAS(api, call_expr)                                                      \
  do {                                                                                    \
    if (::ktune::Status ktune_s = ::ktune::cublas_status(api, api.call_expr, #call_expr); \
        !ktune_s)                                                                         \
      return std::unexpected(ktune_s.error());                                            \
  } while (0)
#define KTUNE_CUBLASLT(api, call_expr)                                                      \
  do {                                                                                      \
    if (::ktune::Status ktune_s = ::ktune::cublaslt_status(api, api.call_expr, #call_expr); \
        !ktune_s)                                                                           \
      return std::unexpected(ktune_s.error());                                              \
  } while (0)

namespace ktune {
namespace {

// What NVIDIA recommends for Hopper (cuBLAS's own default is smaller on older GPUs).
constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;

cudaDataType cuda_type(DType dtype) {
  switch (dtype) {
    case DType::kF16:
      return CUDA_R_16F;
    case DType::kBF16:
      return CUDA_R_16BF;
    default:
      return CUDA_R_32F;  // make_cublas_gemm_plan admits only f32 besides
  }
}

// A device address as the pointer cuBLAS takes; an integer-to-pointer cast by nature.
void* device_ptr(CUdeviceptr p) {
  return reinterpret_cast<void*>(
      static_cast<std::uintptr_t>(p));  // NOLINT(performance-no-int-to-ptr)
}

std::unexpected<Error> with_where(const Error& e, std::string_view who) {
  return make_error(e.code, fmt::format("{}: {}", who, e.message));
}

// The runner's device workspace; freed once the context's queued work is done with it.
class Workspace {
 public:
  explicit Workspace(const CudaDriver& cu) : cu_(cu) {}
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  ~Workspace() {
    if (ptr_ == 0) return;
    (void)cu_.CtxSynchronize();  // a GEMM still queued may be using it
    (void)cu_.MemFree(ptr_);
  }
  Status allocate(std::size_t bytes) {
    const CudaDriver& cu = cu_;
    KTUNE_CU(MemAlloc(&ptr_, bytes));
    return {};
  }
  [[nodiscard]] void* get() const { return device_ptr(ptr_); }

 private:
  const CudaDriver& cu_;
  CUdeviceptr ptr_ = 0;
};

struct GemmPointers {
  void* c = nullptr;
  const void* a = nullptr;
  const void* b = nullptr;
};

Result<GemmPointers> pointers(const CublasGemmPlan& plan, const std::vector<CUdeviceptr>& args) {
  if (args.size() != plan.arg_count) {
    return make_error(
        ErrorCode::kInvalidArgument,
        fmt::format("run with {} arguments; the problem has {}", args.size(), plan.arg_count));
  }
  if (args[plan.c] == 0 || args[plan.a] == 0 || args[plan.b] == 0) {
    return make_error(ErrorCode::kInvalidArgument, "a null device address for c, a or b");
  }
  return GemmPointers{device_ptr(args[plan.c]), device_ptr(args[plan.a]), device_ptr(args[plan.b])};
}

class CublasRunner final : public CublasGemmRunner {
 public:
  CublasRunner(const CublasApi& api, const CudaDriver& cu, CublasGemmPlan plan, CUstream stream,
               bool fp32_reduction)
      : api_(api), workspace_(cu), plan_(plan), stream_(stream), fp32_reduction_(fp32_reduction) {}
  ~CublasRunner() override {
    if (handle_) (void)api_.Destroy(handle_);
  }

  Status init() {
    KTUNE_CUBLAS(api_, Create(&handle_));
    // cublasSetStream resets the handle's workspace to cuBLAS's own pool: set the stream first.
    KTUNE_CUBLAS(api_, SetStream(handle_, stream_));
    if (Status s = workspace_.allocate(kWorkspaceBytes); !s) return s;
    KTUNE_CUBLAS(api_, SetWorkspace(handle_, workspace_.get(), kWorkspaceBytes));
    if (fp32_reduction_) {
      // The reference: no reduced-precision (f16/bf16) partial sums in split-K algorithms. With
      // them cuBLAS differed from fp32-accumulating kernels by up to ~2^-8 of the elements'
      // scale (H200, 1000x1001x1024 bf16: 1.7% of the elements outside the tolerance), so that
      // correct candidates were rejected.
      KTUNE_CUBLAS(api_,
                   SetMathMode(handle_, static_cast<cublasMath_t>(
                                            CUBLAS_DEFAULT_MATH |
                                            CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
    }
    return {};
  }

  Status run(const std::vector<CUdeviceptr>& args) override {
    auto p = pointers(plan_, args);
    if (!p) return with_where(p.error(), "cublas_gemm");
    const float alpha = plan_.alpha, beta = 0;  // CUBLAS_COMPUTE_32F scales in f32
    const cudaDataType t = cuda_type(plan_.dtype);
    // C^T[n,m] = B^T[n,k] A^T[k,m] (file comment). CUBLAS_COMPUTE_32F, not _FAST_TF32: f32
    // inputs stay f32, so results verify against a tight tolerance.
    Status s = cublas_status(
        api_,
        api_.GemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(plan_.n),
                    static_cast<int>(plan_.m), static_cast<int>(plan_.k), &alpha, p->b, t,
                    static_cast<int>(plan_.ldb), p->a, t, static_cast<int>(plan_.lda), &beta, p->c,
                    t, static_cast<int>(plan_.ldc), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "GemmEx");
    if (!s) return with_where(s.error(), "cublas_gemm");
    return {};
  }

  std::string info() const override {
    return fmt::format("cublasGemmEx {} (cuBLAS {})", dtype_name(plan_.dtype), api_.version);
  }

 private:
  const CublasApi& api_;
  Workspace workspace_;  // a member: freed after ~CublasRunner's body destroys the handle
  CublasGemmPlan plan_;
  CUstream stream_;
  bool fp32_reduction_ = false;
  cublasHandle_t handle_ = nullptr;
};

// cublasLtMatmulTile_t names for the first ids (those of the common kernels); others by number.
constexpr std::string_view kTileNames[] = {
    "undefined", "8x8",    "8x16",   "16x8",   "8x32",    "16x16",   "32x8",    "8x64",
    "16x32",     "32x16",  "64x8",   "32x32",  "32x64",   "64x32",   "32x128",  "64x64",
    "128x32",    "64x128", "128x64", "64x256", "128x128", "256x64",  "64x512",  "128x256",
    "256x128",   "512x64", "64x96",  "96x64",  "96x128",  "128x160", "160x128", "192x128",
    "128x192",   "128x96", "32x256", "256x32"};
// cublasLtMatmulStages_t names by id ("" where the enum has a gap).
constexpr std::string_view kStageNames[] = {
    "undefined", "16x1",    "16x2",    "16x3",    "16x4",     "16x5",     "16x6",    "32x1",
    "32x2",      "32x3",    "32x4",    "32x5",    "32x6",     "64x1",     "64x2",    "64x3",
    "64x4",      "64x5",    "64x6",    "128x1",   "128x2",    "128x3",    "128x4",   "128x5",
    "128x6",     "32x10",   "8x4",     "16x10",   "8x5",      "",         "",        "8x3",
    "8xAUTO",    "16xAUTO", "32xAUTO", "64xAUTO", "128xAUTO", "256xAUTO", "768xAUTO"};

std::string enum_name(std::uint32_t id, const std::string_view* names, std::size_t count) {
  if (id < count && !names[id].empty()) return std::string(names[id]);
  return fmt::format("#{}", id);
}

class LtRunner final : public CublasGemmRunner {
 public:
  LtRunner(const CublasLtApi& api, const CudaDriver& cu, CublasGemmPlan plan, CUstream stream,
           int algo, int epilogue)
      : api_(api),
        workspace_(cu),
        plan_(plan),
        stream_(stream),
        index_(algo),
        epilogue_(epilogue),
        who_(fmt::format("cublaslt_algo{}", algo)) {}
  ~LtRunner() override {
    if (pref_) (void)api_.MatmulPreferenceDestroy(pref_);
    for (cublasLtMatrixLayout_t l : {c_layout_, a_layout_, b_layout_}) {
      if (l) (void)api_.MatrixLayoutDestroy(l);
    }
    if (desc_) (void)api_.MatmulDescDestroy(desc_);
    if (handle_) (void)api_.Destroy(handle_);
  }

  Status init() {
    KTUNE_CUBLASLT(api_, Create(&handle_));
    if (Status s = workspace_.allocate(kWorkspaceBytes); !s) return s;
    KTUNE_CUBLASLT(api_, MatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const std::int32_t no_trans = CUBLAS_OP_N;
    KTUNE_CUBLASLT(api_, MatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &no_trans,
                                                sizeof no_trans));
    KTUNE_CUBLASLT(api_, MatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &no_trans,
                                                sizeof no_trans));
    if (epilogue_ != 0) {
      // The heuristic answers for the epilogue: set before pick_algo(). The bias pointer is
      // set on each run (the buffers may move between problems).
      const auto e = static_cast<cublasLtEpilogue_t>(epilogue_);
      KTUNE_CUBLASLT(api_,
                     MatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e));
    }
    // cuBLASLt's A is our B^T [n,k], its B our A^T [k,m], its C and D our C^T [n,m].
    const cudaDataType t = cuda_type(plan_.dtype);
    const auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
    KTUNE_CUBLASLT(api_, MatrixLayoutCreate(&a_layout_, t, u(plan_.n), u(plan_.k), plan_.ldb));
    KTUNE_CUBLASLT(api_, MatrixLayoutCreate(&b_layout_, t, u(plan_.k), u(plan_.m), plan_.lda));
    KTUNE_CUBLASLT(api_, MatrixLayoutCreate(&c_layout_, t, u(plan_.n), u(plan_.m), plan_.ldc));
    KTUNE_CUBLASLT(api_, MatmulPreferenceCreate(&pref_));
    const std::uint64_t max_workspace = kWorkspaceBytes;
    KTUNE_CUBLASLT(api_,
                   MatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                &max_workspace, sizeof max_workspace));
    // The heuristic assumes 256-byte aligned pointers unless told: tell it what run() checks.
    const std::pair<cublasLtMatmulPreferenceAttributes_t, std::uint32_t> aligns[] = {
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, plan_.align_b},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, plan_.align_a},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, plan_.align_c},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, plan_.align_c}};
    for (const auto& [attr, bytes] : aligns) {
      KTUNE_CUBLASLT(api_, MatmulPreferenceSetAttribute(pref_, attr, &bytes, sizeof bytes));
    }
    return pick_algo();
  }

  Status run(const std::vector<CUdeviceptr>& args) override {
    auto p = pointers(plan_, args);
    if (!p) return with_where(p.error(), who_);
    for (auto [ptr, align, role] : {std::tuple{args[plan_.c], plan_.align_c, "c"},
                                    {args[plan_.a], plan_.align_a, "a"},
                                    {args[plan_.b], plan_.align_b, "b"}}) {
      if (ptr % align != 0) {
        return make_error(ErrorCode::kInvalidArgument,
                          fmt::format("{}: {}'s address {:#x} is not {}-byte aligned, as the "
                                      "algorithm was chosen for",
                                      who_, role, ptr, align));
      }
    }
    if ((epilogue_ & CUBLASLT_EPILOGUE_BIAS) != 0) {
      if (plan_.bias == CublasGemmPlan::kNoBias || args[plan_.bias] == 0) {
        return make_error(ErrorCode::kInvalidArgument,
                          fmt::format("{}: a bias epilogue without a bias argument", who_));
      }
      const void* bias = device_ptr(args[plan_.bias]);
      Status b = cublaslt_status(
          api_,
          api_.MatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias),
          "MatmulDescSetAttribute(BIAS_POINTER)");
      if (!b) return with_where(b.error(), who_);
    }
    const float alpha = plan_.alpha, beta = 0;
    Status s = cublaslt_status(
        api_,
        api_.Matmul(handle_, desc_, &alpha, p->b, a_layout_, p->a, b_layout_, &beta, p->c,
                    c_layout_, p->c, c_layout_, &algo_, workspace_.get(), kWorkspaceBytes, stream_),
        "Matmul");
    if (!s) return with_where(s.error(), who_);
    return {};
  }

  std::string info() const override { return info_; }

 private:
  Status pick_algo() {
    const int requested = std::max(index_ + 1, 16);
    std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<std::size_t>(requested));
    int returned = 0;
    cublasStatus_t st =
        api_.MatmulAlgoGetHeuristic(handle_, desc_, a_layout_, b_layout_, c_layout_, c_layout_,
                                    pref_, requested, results.data(), &returned);
    // NOT_SUPPORTED with no result: no algorithm at all for this problem.
    if (st != CUBLAS_STATUS_NOT_SUPPORTED || returned != 0) {
      if (Status s = cublaslt_status(api_, st, "MatmulAlgoGetHeuristic"); !s) return s;
    }
    if (returned <= index_) {
      return make_error(
          ErrorCode::kInvalidArgument,
          fmt::format("the heuristic returned only {} algorithms for this problem", returned));
    }
    const cublasLtMatmulHeuristicResult_t& r = results[static_cast<std::size_t>(index_)];
    if (Status s = cublaslt_status(api_, r.state, "MatmulAlgoGetHeuristic result"); !s) return s;
    algo_ = r.algo;
    info_ = fmt::format("cublasLt algo {} ({}{}, waves {:.2f})", index_, config_text(),
                        dtype_name(plan_.dtype), r.wavesCount);
    return {};
  }

  // "id 21, tile 256x128, stages 64x4, split-k 1, " with what the library answers.
  std::string config_text() const {
    std::string out;
    auto read = [&](cublasLtMatmulAlgoConfigAttributes_t attr, auto* value) {
      std::size_t written = 0;
      return api_.MatmulAlgoConfigGetAttribute(&algo_, attr, value, sizeof *value, &written) ==
             CUBLAS_STATUS_SUCCESS;
    };
    std::int32_t id = 0, split_k = 0;
    std::uint32_t tile = 0, stages = 0;
    if (read(CUBLASLT_ALGO_CONFIG_ID, &id)) out += fmt::format("id {}, ", id);
    if (read(CUBLASLT_ALGO_CONFIG_TILE_ID, &tile)) {
      out += fmt::format("tile {}, ", enum_name(tile, kTileNames, std::size(kTileNames)));
    }
    if (read(CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages)) {
      out += fmt::format("stages {}, ", enum_name(stages, kStageNames, std::size(kStageNames)));
    }
    if (read(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &split_k))
      out += fmt::format("split-k {}, ", split_k);
    return out;
  }

  const CublasLtApi& api_;
  Workspace workspace_;  // a member: outlives the handles, which ~LtRunner frees first
  CublasGemmPlan plan_;
  CUstream stream_;
  int index_ = 0;
  int epilogue_ = 0;  // cublasLtEpilogue_t
  std::string who_;
  std::string info_;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_layout_ = nullptr, b_layout_ = nullptr, c_layout_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
};

}  // namespace

Result<std::unique_ptr<CublasGemmRunner>> CublasGemmRunner::create(const LaunchSpec& spec,
                                                                   const Problem& problem,
                                                                   CUstream stream) {
  const bool lt = spec.library == "cublaslt";
  const std::string who = lt ? fmt::format("cublaslt_algo{}", spec.algo) : "cublas_gemm";
  if (spec.kind != LaunchKind::kCudaLibrary || (!lt && spec.library != "cublas")) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: expected a {} launch of library cublas or cublaslt; got {} "
                                  "'{}'",
                                  who, launch_kind_name(LaunchKind::kCudaLibrary),
                                  launch_kind_name(spec.kind), spec.library));
  }
  if (lt && spec.algo < 0) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: algo must be >= 0 for cublaslt", who));
  }
  if (!lt && spec.library_epilogue != 0) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: library epilogues are cuBLASLt's; cublas has none", who));
  }
  Result<CublasGemmPlan> plan = make_cublas_gemm_plan(problem, spec.bind, who);
  if (!plan) return std::unexpected(plan.error());
  if (!std::isfinite(spec.alpha)) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: alpha must be finite; got {}", who, spec.alpha));
  }
  plan->alpha = static_cast<float>(spec.alpha);
  auto cu = cuda_driver();
  if (!cu) return with_where(cu.error(), who);
  if (lt) {
    auto api = cublaslt_api();
    if (!api) return with_where(api.error(), who);
    auto runner =
        std::make_unique<LtRunner>(**api, **cu, *plan, stream, spec.algo, spec.library_epilogue);
    if (Status s = runner->init(); !s) return with_where(s.error(), who);
    return std::unique_ptr<CublasGemmRunner>(std::move(runner));
  }
  auto api = cublas_api();
  if (!api) return with_where(api.error(), who);
  // algo 1 on "cublas": partial sums in fp32 only (make_cublas_reference_gemm_choice).
  auto runner = std::make_unique<CublasRunner>(**api, **cu, *plan, stream, spec.algo == 1);
  if (Status s = runner->init(); !s) return with_where(s.error(), who);
  return std::unique_ptr<CublasGemmRunner>(std::move(runner));
}

}  // namespace ktune
