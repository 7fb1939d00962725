// A tiled fp32 matmul template for ktune: C[M,N] = A[M,K] * B[K,N], all row-major.
//
// Tuning parameters (#defines set by ktune for each candidate):
//   VEC         floats per SIMD vector (8: AVX2, 16: AVX-512)
//   MR, NV      register tile: MR rows of C by NV vectors (NR = NV * VEC columns)
//   KC          depth of a K block: an NR-wide slice of B, KC deep, is reused by every row tile
//   UNROLL      unroll factor of the innermost k loop
//   LOOP_ORDER  0: for each K block, walk the row tiles (C reloaded per K block, B slice hot)
//               1: for each row tile, walk the K blocks
//   PACK_B      1: copy each B slice into a contiguous thread-local buffer first (order 0 only)
// Columns are split across threads with OpenMP in panels of NR; ragged edges take a plain loop.
//
// Fused epilogue (include/ktune/core/epilogue.h): for a spec with `epilogue:`, ktune puts the
// hook's KTUNE_EPILOGUE_* #defines in front of this file; `epilogue()` then runs once per element
// of C, on the register tile of the last K block right before its store (and at the end of `edge`).
// Without them the hook is absent and the code is the plain GEMM's.
#include <cstring>

#ifndef KTUNE_EPILOGUE
#define KTUNE_EPILOGUE 0
#define KTUNE_EPILOGUE_PARAMS
#define KTUNE_EPILOGUE_ARGS
#endif
#if KTUNE_EPILOGUE
#include <cmath>
#define KTUNE_LOAD(ptr, i) ((ptr)[i])
// clang-format off
static inline float epilogue(int row, int col, long long idx, float acc KTUNE_EPILOGUE_PARAMS)
    KTUNE_EPILOGUE_BODY
// micro_tile's extra parameters: its tile's first row and column, and whether its K block is the
// last one (C is final only then).
#define TILE_EPILOGUE_PARAMS , int row0, int col0, bool last KTUNE_EPILOGUE_PARAMS
#define TILE_EPILOGUE_ARGS(row0, col0, last) , row0, col0, last KTUNE_EPILOGUE_ARGS
#else
#define TILE_EPILOGUE_PARAMS
#define TILE_EPILOGUE_ARGS(row0, col0, last)
#endif

typedef float vfloat __attribute__((vector_size(VEC * sizeof(float)), aligned(4), may_alias));
// clang-format on
constexpr int NR = NV * VEC;
// `#pragma GCC unroll` does not expand macros; _Pragma through two levels does.
#define KTUNE_PRAGMA(x) _Pragma(#x)
#define UNROLL_LOOP(n) KTUNE_PRAGMA(GCC unroll n)

static inline vfloat load(const float* p) { return *reinterpret_cast<const vfloat*>(p); }
static inline void store(float* p, vfloat v) { *reinterpret_cast<vfloat*>(p) = v; }

// One MR x NR tile of C from MR rows of A (leading dimension lda) and a KC-deep, NR-wide slice of
// B (leading dimension ldb) over `kc` steps; adds to C when `accumulate`.
static inline void micro_tile(float* __restrict C, long ldc, const float* __restrict A, long lda,
                              const float* __restrict B, long ldb, int kc,
                              bool accumulate TILE_EPILOGUE_PARAMS) {
  vfloat acc[MR][NV];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = accumulate ? load(&C[r * ldc + v * VEC]) : vfloat{};
  UNROLL_LOOP(UNROLL)
  for (int k = 0; k < kc; ++k) {
    vfloat b[NV];
    for (int v = 0; v < NV; ++v) b[v] = load(&B[k * ldb + v * VEC]);
    for (int r = 0; r < MR; ++r) {
      const float a = A[r * lda + k];
      for (int v = 0; v < NV; ++v) acc[r][v] += a * b[v];
    }
  }
#if KTUNE_EPILOGUE
  if (last) {
    for (int r = 0; r < MR; ++r) {
      const long long base = (long long)(row0 + r) * ldc + col0;
      for (int v = 0; v < NV; ++v) {
        vfloat x = acc[r][v];
        for (int l = 0; l < VEC; ++l) {
          const int col = col0 + v * VEC + l;
          x[l] = epilogue(row0 + r, col, base + v * VEC + l, x[l] KTUNE_EPILOGUE_ARGS);
        }
        acc[r][v] = x;
      }
    }
  }
#endif
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) store(&C[r * ldc + v * VEC], acc[r][v]);
}

// The plain loop for ragged edges: rows [i0, i1) by columns [j0, j1), the whole K.
static void edge(float* C, const float* A, const float* B, int N, int K, int i0, int i1, int j0,
                 int j1 KTUNE_EPILOGUE_PARAMS) {
  for (int i = i0; i < i1; ++i) {
    for (int j = j0; j < j1; ++j) C[(long)i * N + j] = 0;
    for (int k = 0; k < K; ++k) {
      const float a = A[(long)i * K + k];
      for (int j = j0; j < j1; ++j) C[(long)i * N + j] += a * B[(long)k * N + j];
    }
#if KTUNE_EPILOGUE
    for (int j = j0; j < j1; ++j) {
      const long long idx = (long long)i * N + j;
      C[idx] = epilogue(i, j, idx, C[idx] KTUNE_EPILOGUE_ARGS);
    }
#endif
  }
}

void matmul(float* C, const float* A, const float* B, int M, int N, int K KTUNE_EPILOGUE_PARAMS) {
  const int m_full = M - M % MR;
  const int n_full = N - N % NR;
#pragma omp parallel
  {
#if PACK_B
    // The B slice copied contiguous: no cache-set conflicts from B's row stride.
    alignas(64) static thread_local float packed[KC * NR];
#endif
#pragma omp for schedule(static)
    for (int j = 0; j < n_full; j += NR) {
#if LOOP_ORDER == 0
      for (int k0 = 0; k0 < K; k0 += KC) {
        const int kc = k0 + KC < K ? KC : K - k0;
#if PACK_B
        for (int k = 0; k < kc; ++k)
          std::memcpy(&packed[k * NR], &B[(long)(k0 + k) * N + j], NR * sizeof(float));
        const float* b = packed;
        const long ldb = NR;
#else
        const float* b = &B[(long)k0 * N + j];
        const long ldb = N;
#endif
        for (int i = 0; i < m_full; i += MR)
          micro_tile(&C[(long)i * N + j], N, &A[(long)i * K + k0], K, b, ldb, kc,
                     k0 > 0 TILE_EPILOGUE_ARGS(i, j, k0 + kc == K));
      }
#else
      for (int i = 0; i < m_full; i += MR)
        for (int k0 = 0; k0 < K; k0 += KC) {
          const int kc = k0 + KC < K ? KC : K - k0;
          micro_tile(&C[(long)i * N + j], N, &A[(long)i * K + k0], K, &B[(long)k0 * N + j], N, kc,
                     k0 > 0 TILE_EPILOGUE_ARGS(i, j, k0 + kc == K));
        }
#endif
      if (m_full < M) edge(C, A, B, N, K, m_full, M, j, j + NR KTUNE_EPILOGUE_ARGS);
    }
  }
  if (n_full < N) edge(C, A, B, N, K, 0, M, n_full, N KTUNE_EPILOGUE_ARGS);
}

// The hook's macros end here: a generated program may hold several configs of this template.
#undef TILE_EPILOGUE_PARAMS
#undef TILE_EPILOGUE_ARGS
#undef KTUNE_EPILOGUE
#undef KTUNE_EPILOGUE_NAME
#undef KTUNE_EPILOGUE_PARAMS
#undef KTUNE_EPILOGUE_ARGS
#undef KTUNE_EPILOGUE_BODY
#undef KTUNE_LOAD
