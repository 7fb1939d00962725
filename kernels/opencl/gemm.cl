// Tiled f32 GEMM in the manner of CLBlast's xgemm: row-major C[M,N] = A[M,K] * B[K,N].
//
// A work-group of MDIMC x NDIMC work-items computes an MWG x NWG tile of C, stepping through K
// by KWG; each work-item owns (MWG/MDIMC) x (NWG/NDIMC) outputs: VWM consecutive rows in chunks
// strided by MDIMC*VWM, VWN consecutive columns in chunks strided by NDIMC*VWN. With SA (SB)
// the A (B) tile is cached in local memory (A transposed, so both are read as vectors along M
// and N); without, work-items read global memory directly. Any M, N, K: tiles are zero-padded
// and stores guarded; VWN > 1 needs N % VWN == 0 (the host checks).
// Parameters arrive as -D defines: MWG NWG KWG MDIMC NDIMC VWM VWN SA SB.

// The epilogue (the store_output hook): the value stored at C[row, col] (element idx of C) from
// its accumulator. ktune renders a fused epilogue as KTUNE_EPILOGUE_* #defines in front of this
// file (include/ktune/core/epilogue.h); without one it is the identity, and the kernels' parameter
// lists are the plain GEMM's.
#ifndef KTUNE_EPILOGUE
#define KTUNE_EPILOGUE_PARAMS
#define KTUNE_EPILOGUE_ARGS
#define KTUNE_EPILOGUE_BODY \
  {                         \
    (void)row;              \
    (void)col;              \
    (void)idx;              \
    return acc;             \
  }
#endif
#define KTUNE_LOAD(ptr, i) ((ptr)[i])
float epilogue(int row, int col, long idx, float acc KTUNE_EPILOGUE_PARAMS) KTUNE_EPILOGUE_BODY

#define MWI (MWG / MDIMC)
#define NWI (NWG / NDIMC)

#if VWM == 1
#define realM float
#define LOADM(p) (*(p))
#else
#define realM_(n) float##n
#define realM__(n) realM_(n)
#define realM realM__(VWM)
#define LOADM_(n, p) vload##n(0, p)
#define LOADM__(n, p) LOADM_(n, p)
#define LOADM(p) LOADM__(VWM, p)
#endif

#if VWN == 1
#define realN float
#define LOADN(p) (*(p))
#else
#define realN_(n) float##n
#define realN__(n) realN_(n)
#define realN realN__(VWN)
#define LOADN_(n, p) vload##n(0, p)
#define LOADN__(n, p) LOADN_(n, p)
#define LOADN(p) LOADN__(VWN, p)
#endif

__kernel __attribute__((reqd_work_group_size(MDIMC, NDIMC, 1))) void gemm(
    __global float* C, __global const float* A, __global const float* B, const int M, const int N,
    const int K KTUNE_EPILOGUE_PARAMS) {
  const int tm = get_local_id(0), tn = get_local_id(1);
  const int m0 = get_group_id(0) * MWG, n0 = get_group_id(1) * NWG;
  const int tid = tn * MDIMC + tm;
#if SA
  __local float Als[KWG * MWG];  // [k][m]
#endif
#if SB
  __local float Bls[KWG * NWG];  // [k][n]
#endif
  float acc[MWI][NWI];
  for (int i = 0; i < MWI; ++i)
    for (int j = 0; j < NWI; ++j) acc[i][j] = 0.0f;

  for (int k0 = 0; k0 < K; k0 += KWG) {
#if SA || SB
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
#if SA
    for (int i = tid; i < KWG * MWG; i += MDIMC * NDIMC) {
      const int m = i / KWG, k = i % KWG;  // consecutive work-items read consecutive k
      const int row = m0 + m, kk = k0 + k;
      Als[k * MWG + m] = (row < M && kk < K) ? A[row * K + kk] : 0.0f;
    }
#endif
#if SB
    for (int i = tid; i < KWG * NWG; i += MDIMC * NDIMC) {
      const int k = i / NWG, n = i % NWG;
      const int col = n0 + n, kk = k0 + k;
      Bls[k * NWG + n] = (col < N && kk < K) ? B[kk * N + col] : 0.0f;
    }
#endif
#if SA || SB
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    const int kend = min(KWG, K - k0);
    for (int k = 0; k < kend; ++k) {
      float a[MWI], b[NWI];
#pragma unroll
      for (int mv = 0; mv < MWI / VWM; ++mv) {
        const int m = (mv * MDIMC + tm) * VWM;
#if SA
        realM v = LOADM(&Als[k * MWG + m]);
#if VWM == 1
        a[mv] = v;
#else
        for (int w = 0; w < VWM; ++w) a[mv * VWM + w] = ((float*)&v)[w];
#endif
#else
        for (int w = 0; w < VWM; ++w) {
          const int row = m0 + m + w;
          a[mv * VWM + w] = row < M ? A[row * K + k0 + k] : 0.0f;
        }
#endif
      }
#pragma unroll
      for (int nv = 0; nv < NWI / VWN; ++nv) {
        const int n = (nv * NDIMC + tn) * VWN;
#if SB
        realN v = LOADN(&Bls[k * NWG + n]);
#else
        realN v = (n0 + n < N) ? LOADN(&B[(k0 + k) * N + n0 + n]) : (realN)(0.0f);
#endif
#if VWN == 1
        b[nv] = v;
#else
        for (int w = 0; w < VWN; ++w) b[nv * VWN + w] = ((float*)&v)[w];
#endif
      }
#pragma unroll
      for (int i = 0; i < MWI; ++i)
#pragma unroll
        for (int j = 0; j < NWI; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
    }
  }

  for (int mv = 0; mv < MWI / VWM; ++mv) {
    for (int w = 0; w < VWM; ++w) {
      const int row = m0 + (mv * MDIMC + tm) * VWM + w;
      if (row >= M) continue;
      for (int nv = 0; nv < NWI / VWN; ++nv) {
        for (int x = 0; x < VWN; ++x) {
          const int col = n0 + (nv * NDIMC + tn) * VWN + x;
          if (col >= N) continue;
          const long idx = (long)row * N + col;
          C[idx] = epilogue(row, col, idx, acc[mv * VWM + w][nv * VWN + x] KTUNE_EPILOGUE_ARGS);
        }
      }
    }
  }
}

// The reference: one work-item per output, no tiling, no parameters. With an epilogue, the
// finished dot product goes through the same rendered epilogue() (whose math the host's
// Epilogue::apply checks in test/opencl/opencl_epilogue_test.cpp), none of the tiled store.
__kernel void gemm_naive(__global float* C, __global const float* A, __global const float* B,
                         const int M, const int N, const int K KTUNE_EPILOGUE_PARAMS) {
  const int row = get_global_id(0), col = get_global_id(1);
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc = fma(A[row * K + k], B[k * N + col], acc);
  const long idx = (long)row * N + col;
  C[idx] = epilogue(row, col, idx, acc KTUNE_EPILOGUE_ARGS);
}
