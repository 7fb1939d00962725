// Tensor-core GEMM for sm_80 and later: row-major C[M,N] = A[M,K] * B[K,N] in f16 or bf16 with
// fp32 accumulation (mma.sync m16n8k16), ldmatrix fragment loads, a STAGES-deep cp.async
// pipeline through XOR-swizzled dynamic shared memory, and grouped block rasterization.
//
// Tunables (#defines): BLOCK_M, BLOCK_N, BLOCK_K (block tile), WARP_M, WARP_N (warp tile; the
// block runs (BLOCK_M/WARP_M)*(BLOCK_N/WARP_N) warps), STAGES (shared-memory tiles in flight),
// GROUP_M (block rows per rasterization group), DTYPE (0 = f16, 1 = bf16).
// Launch: 1-D grid of ceil(M/BLOCK_M)*ceil(N/BLOCK_N) blocks of 32*warps threads,
// STAGES*(BLOCK_M*BLOCK_K + BLOCK_K*BLOCK_N)*2 bytes of dynamic shared memory.
// Shapes: any M; N % 8 == 0 and K % 8 == 0 (each 16-byte copy is wholly inside or outside a
// row), buffers 16-byte aligned. Out-of-range rows, columns and the K tail load as zeros.
// Compiled after kernels/cuda/prelude.cuh (elem_t, to_float, the epilogue hook, store_output,
// grouped_tile, the cp.async copies), which ktune puts in front: NVRTC has no include path to
// this tree.

#if !defined(BLOCK_M) || !defined(BLOCK_N) || !defined(BLOCK_K) || !defined(WARP_M) || \
    !defined(WARP_N) || !defined(STAGES) || !defined(GROUP_M) || !defined(DTYPE)
#error "gemm_mma.cu needs BLOCK_M BLOCK_N BLOCK_K WARP_M WARP_N STAGES GROUP_M DTYPE"
#endif

namespace ktune_gemm {

constexpr int kBlockM = BLOCK_M;
constexpr int kBlockN = BLOCK_N;
constexpr int kBlockK = BLOCK_K;
constexpr int kWarpM = WARP_M;
constexpr int kWarpN = WARP_N;
constexpr int kStages = STAGES;
constexpr int kGroupM = GROUP_M;
constexpr int kWarpsM = kBlockM / kWarpM;
constexpr int kWarpsN = kBlockN / kWarpN;
constexpr int kThreads = kWarpsM * kWarpsN * 32;
constexpr int kMTiles = kWarpM / 16;  // m16 tiles per warp
constexpr int kNTiles = kWarpN / 8;   // n8 tiles per warp
constexpr int kKSteps = kBlockK / 16;
// Shared memory is addressed in 16-byte chunks of 8 elements.
constexpr int kAChunksPerRow = kBlockK / 8;
constexpr int kBChunksPerRow = kBlockN / 8;
constexpr int kAStageBytes = kBlockM * kBlockK * 2;
constexpr int kBStageBytes = kBlockK * kBlockN * 2;
constexpr int kALoads = kBlockM * kAChunksPerRow / kThreads;  // 16-byte copies per thread
constexpr int kBLoads = kBlockK * kBChunksPerRow / kThreads;

static_assert(DTYPE == 0 || DTYPE == 1, "DTYPE: 0 = f16, 1 = bf16");
static_assert(kBlockM % kWarpM == 0 && kBlockN % kWarpN == 0, "warp tile must divide block tile");
static_assert(kWarpM % 16 == 0 && kWarpN % 16 == 0, "warp tile: multiples of 16");
static_assert(kBlockK % 32 == 0, "BLOCK_K: a multiple of 32 (swizzle and fragment double buffer)");
static_assert(kBlockN % 64 == 0, "BLOCK_N: a multiple of 64 (swizzle)");
static_assert(kStages >= 2, "STAGES >= 2");
static_assert(kGroupM >= 1, "GROUP_M >= 1");
static_assert(kThreads % kAChunksPerRow == 0 && kThreads % kBChunksPerRow == 0 &&
                  (kBlockM * kAChunksPerRow) % kThreads == 0 &&
                  (kBlockK * kBChunksPerRow) % kThreads == 0,
              "tile copies must spread evenly over the threads");

// Physical chunk index of logical (row, chunk) in a tile with kChunksPerRow chunks per row.
// ldmatrix reads one chunk from each of 8 consecutive rows at the same logical chunk; the XOR
// places those 8 chunks in 8 different 128-byte bank groups. Rows of >= 8 chunks XOR the chunk
// with row % 8; rows of 4 chunks (BLOCK_K = 32) pair up into 128-byte lines, and the chunk
// within the line is XORed with the line index % 8. The cp.async writes use the same function.
template <int kChunksPerRow>
__device__ __forceinline__ int swizzle(int row, int chunk) {
  if constexpr (kChunksPerRow >= 8) {
    return row * kChunksPerRow + (chunk ^ (row & 7));
  } else {
    static_assert(kChunksPerRow == 4, "4 or >= 8 chunks per row");
    const int linear = row * kChunksPerRow + chunk;
    return linear ^ ((linear >> 3) & 7);
  }
}

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// d += a * b for one 16x8x16 tile.
__device__ __forceinline__ void mma_16816(float (&d)[4], const unsigned (&a)[4],
                                          const unsigned (&b)[2]) {
#if DTYPE == 1
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

}  // namespace ktune_gemm

extern "C" __global__ void __launch_bounds__(ktune_gemm::kThreads, 1)
    gemm(ktune_gemm::elem_t* C, const ktune_gemm::elem_t* A, const ktune_gemm::elem_t* B, int M,
         int N, int K KTUNE_EPILOGUE_PARAMS) {
  using namespace ktune_gemm;
  extern __shared__ __align__(128) unsigned char smem[];

  if (M <= 0 || N <= 0) return;  // an empty output: the launch hook still sends one block
  int pid_m = 0;
  int pid_n = 0;
  if (!grouped_tile(blockIdx.x, (M + kBlockM - 1) / kBlockM, (N + kBlockN - 1) / kBlockN, kGroupM,
                    pid_m, pid_n)) {
    return;
  }
  const int block_m = pid_m * kBlockM;
  const int block_n = pid_n * kBlockN;

  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int warp_m = warp / kWarpsN;
  const int warp_n = warp % kWarpsN;

  const unsigned smem_a = smem_u32(smem);
  const unsigned smem_b = smem_a + kStages * kAStageBytes;

  // Tile copies: thread tid copies chunk (tid % chunks_per_row) of rows tid / chunks_per_row +
  // i * (threads / chunks_per_row).
  constexpr int kARowStep = kThreads / kAChunksPerRow;
  constexpr int kBRowStep = kThreads / kBChunksPerRow;
  const int a_chunk = tid % kAChunksPerRow;
  const int a_row0 = tid / kAChunksPerRow;
  const int b_chunk = tid % kBChunksPerRow;
  const int b_row0 = tid / kBChunksPerRow;
  const elem_t* a_src = A + static_cast<long long>(block_m + a_row0) * K + a_chunk * 8;
  const elem_t* b_src = B + static_cast<long long>(b_row0) * N + block_n + b_chunk * 8;
  unsigned a_rows_ok = 0;  // bit i: row a_row0 + i * kARowStep is inside M
#pragma unroll
  for (int i = 0; i < kALoads; ++i) {
    if (block_m + a_row0 + i * kARowStep < M) a_rows_ok |= 1u << i;
  }
  const bool b_col_ok = block_n + b_chunk * 8 < N;

  auto load_tile = [&](int stage, int k_tile) {
    const int k0 = k_tile * kBlockK;
    const unsigned a_dst = smem_a + stage * kAStageBytes;
    const bool a_k_ok = k0 + a_chunk * 8 < K;
#pragma unroll
    for (int i = 0; i < kALoads; ++i) {
      const bool ok = a_k_ok && ((a_rows_ok >> i) & 1u);
      const elem_t* src = a_src + static_cast<long long>(i) * kARowStep * K + k0;
      cp_async_16(a_dst + swizzle<kAChunksPerRow>(a_row0 + i * kARowStep, a_chunk) * 16,
                  ok ? src : A, ok);
    }
    const unsigned b_dst = smem_b + stage * kBStageBytes;
#pragma unroll
    for (int i = 0; i < kBLoads; ++i) {
      const int k = k0 + b_row0 + i * kBRowStep;
      const bool ok = b_col_ok && k < K;
      const elem_t* src = b_src + static_cast<long long>(k0 + i * kBRowStep) * N;
      cp_async_16(b_dst + swizzle<kBChunksPerRow>(b_row0 + i * kBRowStep, b_chunk) * 16,
                  ok ? src : B, ok);
    }
  };

  // Fragment addresses for k16 step 0 of a stage, in chunks. ldmatrix.x4 takes one row address
  // per lane: lanes 0-15 give rows 0-15 of the first 8 columns, lanes 16-31 rows 0-15 of the
  // next 8. For A (m16 x k16, row-major) that yields a0..a3 of mma's A fragment; for B (k16 x n16
  // of the row-major K x N tile, transposed on load) b0,b1 of two n8 tiles. Step kk moves A by
  // 2*kk chunks (an XOR: the row's swizzle leaves the low chunk bits free of carries) and B by
  // 16*kk rows (a multiple of 8: the swizzle pattern repeats).
  const int ld_row = lane & 15;
  const int ld_chunk = lane >> 4;
  const int a_frag = swizzle<kAChunksPerRow>(warp_m * kWarpM + ld_row, ld_chunk);
  int b_frag[kNTiles / 2];
#pragma unroll
  for (int j = 0; j < kNTiles / 2; ++j) {
    b_frag[j] = swizzle<kBChunksPerRow>(ld_row, (warp_n * kWarpN + j * 16) / 8 + ld_chunk);
  }

  unsigned a_reg[2][kMTiles][4];
  unsigned b_reg[2][kNTiles][2];
  auto load_fragments = [&](int buf, int stage, int kk) {
    const unsigned a_base = smem_a + stage * kAStageBytes;
#pragma unroll
    for (int i = 0; i < kMTiles; ++i) {
      const int chunk = (a_frag + i * 16 * kAChunksPerRow) ^ (2 * kk);
      ldmatrix_x4(a_reg[buf][i], a_base + chunk * 16);
    }
    const unsigned b_base = smem_b + stage * kBStageBytes;
#pragma unroll
    for (int j = 0; j < kNTiles / 2; ++j) {
      unsigned r[4];
      ldmatrix_x4_trans(r, b_base + (b_frag[j] + kk * 16 * kBChunksPerRow) * 16);
      b_reg[buf][2 * j][0] = r[0];
      b_reg[buf][2 * j][1] = r[1];
      b_reg[buf][2 * j + 1][0] = r[2];
      b_reg[buf][2 * j + 1][1] = r[3];
    }
  };

  float acc[kMTiles][kNTiles][4];
#pragma unroll
  for (int i = 0; i < kMTiles; ++i) {
#pragma unroll
    for (int j = 0; j < kNTiles; ++j) {
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[i][j][c] = 0.0f;
    }
  }

  // Pipeline: tiles 0..STAGES-2 in flight before the loop; iteration kt issues tile
  // kt+STAGES-1 into the stage that tile kt-1 used (every warp finished reading it before the
  // barrier that ended iteration kt-1). One commit group per tile, empty past the end, so that
  // wait_group<STAGES-2> always means "tile kt+1 has landed".
  const int k_tiles = (K + kBlockK - 1) / kBlockK;
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) load_tile(s, s);
    cp_async_commit();
  }
  cp_async_wait<kStages - 2>();
  __syncthreads();

  int read_stage = 0;
  int write_stage = kStages - 1;
  load_fragments(0, 0, 0);
  for (int kt = 0; kt < k_tiles; ++kt) {
#pragma unroll
    for (int kk = 0; kk < kKSteps; ++kk) {
      if (kk == kKSteps - 1) {
        cp_async_wait<kStages - 2>();
        __syncthreads();
        read_stage = read_stage + 1 == kStages ? 0 : read_stage + 1;
      }
      // Double-buffered fragments: step kk+1 (or step 0 of the next tile) loads while step kk
      // multiplies.
      load_fragments((kk + 1) & 1, read_stage, (kk + 1) % kKSteps);
      if (kk == 0) {
        const int next = kt + kStages - 1;
        if (next < k_tiles) load_tile(write_stage, next);
        cp_async_commit();
        write_stage = write_stage + 1 == kStages ? 0 : write_stage + 1;
      }
#pragma unroll
      for (int i = 0; i < kMTiles; ++i) {
#pragma unroll
        for (int j = 0; j < kNTiles; ++j) {
          // Serpentine over j keeps one B fragment live across consecutive mma.
          const int jj = (i & 1) ? kNTiles - 1 - j : j;
          mma_16816(acc[i][jj], a_reg[kk & 1][i], b_reg[kk & 1][jj]);
        }
      }
    }
  }
  cp_async_wait<0>();

  // Accumulator layout of m16n8: c0,c1 at (lane/4, 2*(lane%4) + {0,1}), c2,c3 eight rows down.
  const int row0 = block_m + warp_m * kWarpM + (lane >> 2);
  const int col0 = block_n + warp_n * kWarpN + 2 * (lane & 3);
#pragma unroll
  for (int i = 0; i < kMTiles; ++i) {
#pragma unroll
    for (int j = 0; j < kNTiles; ++j) {
      const int row = row0 + i * 16;
      const int col = col0 + j * 8;
      store_output(C, M, N, row, col, acc[i][j][0], acc[i][j][1] KTUNE_EPILOGUE_ARGS);
      store_output(C, M, N, row + 8, col, acc[i][j][2], acc[i][j][3] KTUNE_EPILOGUE_ARGS);
    }
  }
}
