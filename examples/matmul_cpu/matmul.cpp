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
#include <cstring>

typedef float vfloat __attribute__((vector_size(VEC * sizeof(float)), aligned(4), may_alias));
constexpr int NR = NV * VEC;
// `#pragma GCC unroll` does not expand macros; _Pragma through two levels does.
#define KTUNE_PRAGMA(x) _Pragma(#x)
#define UNROLL_LOOP(n) KTUNE_PRAGMA(GCC unroll n)

static inline vfloat load(const float* p) { return *reinterpret_cast<const vfloat*>(p); }
static inline void store(float* p, vfloat v) { *reinterpret_cast<vfloat*>(p) = v; }

// One MR x NR tile of C from MR rows of A (leading dimension lda) and a KC-deep, NR-wide slice of
// B (leading dimension ldb) over `kc` steps; adds to C when `accumulate`.
static inline void micro_tile(float* __restrict C, long ldc, const float* __restrict A, long lda,
                              const float* __restrict B, long ldb, int kc, bool accumulate) {
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
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) store(&C[r * ldc + v * VEC], acc[r][v]);
}

// The plain loop for ragged edges: rows [i0, i1) by columns [j0, j1), the whole K.
static void edge(float* C, const float* A, const float* B, int N, int K, int i0, int i1, int j0,
                 int j1) {
  for (int i = i0; i < i1; ++i) {
    for (int j = j0; j < j1; ++j) C[(long)i * N + j] = 0;
    for (int k = 0; k < K; ++k) {
      const float a = A[(long)i * K + k];
      for (int j = j0; j < j1; ++j) C[(long)i * N + j] += a * B[(long)k * N + j];
    }
  }
}

void matmul(float* C, const float* A, const float* B, int M, int N, int K) {
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
          micro_tile(&C[(long)i * N + j], N, &A[(long)i * K + k0], K, b, ldb, kc, k0 > 0);
      }
#else
      for (int i = 0; i < m_full; i += MR)
        for (int k0 = 0; k0 < K; k0 += KC) {
          const int kc = k0 + KC < K ? KC : K - k0;
          micro_tile(&C[(long)i * N + j], N, &A[(long)i * K + k0], K, &B[(long)k0 * N + j], N, kc,
                     k0 > 0);
        }
#endif
      if (m_full < M) edge(C, A, B, N, K, m_full, M, j, j + NR);
    }
  }
  if (n_full < N) edge(C, A, B, N, K, 0, M, n_full, N);
}
