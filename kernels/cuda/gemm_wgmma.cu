// Hopper (sm_90a) tensor-core GEMM: row-major C[M,N] = A[M,K] * B[K,N] in f16 or bf16 with fp32
// accumulation through warp-group MMA (wgmma.mma_async m64nNk16, both operands from shared
// memory through matrix descriptors), a STAGES-deep cp.async pipeline into 128-byte-swizzled
// dynamic shared memory, and grouped block rasterization. (The TMA template, gemm_tma.cu, serves
// 16-byte rows without split-K; this one serves 4-byte rows and split-K.)
//
// Tunables (#defines): BLOCK_M, BLOCK_N (block tile; BLOCK_N 64, 128 or 256), BLOCK_K (64: one
// 128-byte swizzle row of 16-bit elements), WARPGROUPS (1 or 2 warp groups of 128 threads; each
// owns BLOCK_M / WARPGROUPS rows, a multiple of 64, as that many m64 MMAs), STAGES (>= 3 shared
// tiles: one being multiplied, one whose MMAs may still be in flight, STAGES-2 loading),
// GROUP_M (block rows per rasterization group), DTYPE (0 = f16, 1 = bf16), SPLIT_K (1, 2, 4 or
// 8 blocks per output tile, each on a slice of K; see "Split-K" below).
// Launch: 1-D grid of ceil(M/BLOCK_M)*ceil(N/BLOCK_N)*SPLIT_K blocks of 128*WARPGROUPS threads,
// STAGES*(BLOCK_M + BLOCK_N)*BLOCK_K*2 + 1024 bytes of dynamic shared memory (the 1024: room to
// align the tiles to the 1024-byte swizzle pattern); with split-K at least the reduction
// buffer's BLOCK_M*(BLOCK_N + 8)*4 + 1024, which the tiles already cover (static_assert).
// Shapes: any M; VEC (elements per global -> shared copy of A and B) says which alignment a
// config serves: 8 = 16-byte cp.async (N % 8 == 0, K % 8 == 0, buffers 16-byte aligned),
// 2 = 4-byte cp.async (N, K even, buffers 4-byte aligned). Both write the same swizzled stage
// layout below (VEC 2: a 16-byte chunk in four 4-byte pieces), so the MMAs are the same code.
// Out-of-range rows, columns and the K tail load as zeros. (A register-staged VEC 1 for odd
// rows was measured on an H200, 2026-11-24: 5-10x slower than cuBLAS, so it was taken out; odd
// rows go to the restrided TMA candidates, src/ops/cuda_gemm_hopper.cpp.)
// Compiled after kernels/cuda/prelude.cuh (elem_t, to_float, the epilogue hook, store_output,
// grouped_tile, cp.async) and kernels/cuda/hopper.cuh (wgmma, its descriptors), which ktune puts
// in front: NVRTC has no include path to this tree.
//
// Shared-memory layouts (the canonical 128-byte-swizzle layouts of the PTX ISA's "Matrix
// Descriptor" section; CUTLASS's Layout_K_SW128_Atom and Layout_MN_SW128_Atom):
// - A stage, K-major: BLOCK_M rows of BLOCK_K = 64 elements (128 bytes); 16-byte chunk c of row r
//   sits at r * 128 + ((c ^ (r % 8)) * 16). Descriptor: stride byte offset (between 8-row
//   groups) 1024, leading byte offset unused (1), swizzle 128B. Step kk of K moves the start
//   address by 32 * kk bytes; m64 tile i starts 8192 * i bytes in.
// - B stage, N-major (B is [K,N] row-major; wgmma's imm-trans-b = 1): BLOCK_N / 64 panels of
//   BLOCK_K rows x 64 columns (128 bytes), one after the other (8192 bytes each); chunk c of
//   row k of a panel at k * 128 + ((c ^ (k % 8)) * 16). Descriptor: leading byte offset
//   (between 64-column panels along N) 8192, stride byte offset (between 8-row groups along K)
//   1024, swizzle 128B. Step kk of K moves the start address by 16 rows = 2048 bytes.
// The hardware applies the swizzle to address bits [4,7) ^ [7,10), so every tile starts on a
// 1024-byte boundary (descriptor base offset 0).
//
// Split-K (SPLIT_K > 1), for decode shapes whose output tiles alone leave most SMs idle (small M
// or N, large K): the SPLIT_K blocks of one output tile form a thread-block cluster
// (__cluster_dims__ on the kernel, so a plain launch forms them; block x works on tile
// x / SPLIT_K, and its cluster rank x % SPLIT_K picks a contiguous, balanced range of K tiles,
// possibly empty). The partial sums are reduced through distributed shared memory, with no
// global workspace and no second kernel: after its last MMA each block writes its fp32
// accumulators into its own (now idle) pipeline buffers, the cluster barrier (release/acquire)
// publishes them, and block r sums the rows slice r of the tile over all peers in rank order
// (deterministic), then stores through the epilogue hook: a fused epilogue sees the full sum.
// A second cluster barrier keeps every block resident until its peers have read it. With
// SPLIT_K == 1 none of this is compiled: no cluster, no extra barrier.

#if !defined(BLOCK_M) || !defined(BLOCK_N) || !defined(BLOCK_K) || !defined(WARPGROUPS) || \
    !defined(STAGES) || !defined(GROUP_M) || !defined(DTYPE)
#error "gemm_wgmma.cu needs BLOCK_M BLOCK_N BLOCK_K WARPGROUPS STAGES GROUP_M DTYPE"
#endif

#if !defined(SPLIT_K)
#error "gemm_wgmma.cu needs SPLIT_K"
#endif

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "gemm_wgmma.cu needs sm_90a (wgmma)"
#endif


namespace ktune_gemm {

constexpr int kBlockM = BLOCK_M;
constexpr int kBlockN = BLOCK_N;
constexpr int kBlockK = BLOCK_K;
constexpr int kWarpgroups = WARPGROUPS;
constexpr int kStages = STAGES;
constexpr int kGroupM = GROUP_M;
constexpr int kThreads = kWarpgroups * 128;
constexpr int kWgRows = kBlockM / kWarpgroups;  // rows of C per warp group
constexpr int kMTiles = kWgRows / 64;           // m64 MMAs per warp group and k16 step
constexpr int kAcc = kBlockN / 2;               // fp32 accumulators per thread and m64 tile
constexpr int kKSteps = kBlockK / 16;
constexpr int kRowBytes = 128;                    // one swizzle row: 64 elements
constexpr int kPanelBytes = kBlockK * kRowBytes;  // B: 64 columns x BLOCK_K rows
constexpr int kAStageBytes = kBlockM * kRowBytes;
constexpr int kBStageBytes = (kBlockN / 64) * kPanelBytes;
constexpr int kStageBytes = kAStageBytes + kBStageBytes;
constexpr int kBChunksPerRow = kBlockN / 8;
constexpr int kALoads = kBlockM * 8 / kThreads;  // 16-byte copies per thread and tile
constexpr int kBLoads = kBlockK * kBChunksPerRow / kThreads;

static_assert(DTYPE == 0 || DTYPE == 1, "DTYPE: 0 = f16, 1 = bf16");
static_assert(kBlockK == 64, "BLOCK_K: 64 (one 128-byte swizzle row per tile row)");
static_assert(kBlockN == 64 || kBlockN == 128 || kBlockN == 256,
              "BLOCK_N: 64, 128 or 256 (the MMA's N)");
static_assert(kWarpgroups == 1 || kWarpgroups == 2, "WARPGROUPS: 1 or 2");
static_assert(kBlockM % (64 * kWarpgroups) == 0, "BLOCK_M: a multiple of 64 * WARPGROUPS");
static_assert(kMTiles * kAcc <= 128, "at most 128 fp32 accumulators per thread");
static_assert(kStages >= 3, "STAGES >= 3");
static_assert(kGroupM >= 1, "GROUP_M >= 1");
static_assert((kBlockM * 8) % kThreads == 0 && kThreads % kBChunksPerRow == 0 &&
                  (kBlockK * kBChunksPerRow) % kThreads == 0,
              "tile copies must spread evenly over the threads");

// Byte offset of 16-byte chunk `chunk` (0..7) of row `row` in a tile of 128-byte rows under the
// 128-byte swizzle: the chunk index XORed with row % 8 (the pattern wgmma's descriptors name).
__device__ __forceinline__ unsigned swizzle(int row, int chunk) {
  return static_cast<unsigned>(row * kRowBytes + ((chunk ^ (row & 7)) << 4));
}

#if !defined(VEC) || (VEC != 2 && VEC != 8)
#error "gemm_wgmma.cu needs VEC: 2 or 8"
#endif

// 4-byte global -> shared copy (through L1: .cg takes 16 bytes only); zero-filled when invalid.
__device__ __forceinline__ void cp_async_4(unsigned dst, const void* src, bool valid) {
  const int src_bytes = valid ? 4 : 0;
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes)
               : "memory");
}

// v, through an asm the compiler cannot look into or move out of a loop.
__device__ __forceinline__ long long opaque(long long v) {
  asm volatile("mov.b64 %0, %0;\n" : "+l"(v));
  return v;
}


// Split-K: the reduction buffer holds a block's BLOCK_M x BLOCK_N fp32 partial sums, rows padded
// by 8 floats (32 bytes) so that the accumulator stores of a warp's 8 rows fall on distinct
// banks while rows stay 16-byte aligned for the reduction's 16-byte reads.
constexpr int kSplitK = SPLIT_K;
constexpr int kRedStride = kBlockN + 8;      // floats per row of the reduction buffer
constexpr int kRedRows = kBlockM / kSplitK;  // rows of the tile each block of a cluster stores
static_assert(kSplitK == 1 || kSplitK == 2 || kSplitK == 4 || kSplitK == 8,
              "SPLIT_K: 1, 2, 4 or 8 (a portable cluster size)");
static_assert(kSplitK == 1 || kBlockM * kRedStride * 4 <= kStages * kStageBytes,
              "split-K: the reduction buffer reuses the pipeline's shared memory and must fit");

__device__ __forceinline__ void st_shared_v2(unsigned addr, float a, float b) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(addr), "f"(a), "f"(b) : "memory");
}

// 16 bytes at shared address `addr` of the cluster's block `rank` (the same offset there).
__device__ __forceinline__ void ld_peer_v4(unsigned addr, int rank, float (&v)[4]) {
  unsigned peer;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(peer) : "r"(addr), "r"(rank));
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v[0]), "=f"(v[1]), "=f"(v[2]), "=f"(v[3])
               : "r"(peer)
               : "memory");
}

}  // namespace ktune_gemm

// A compile-time cluster: a plain cuLaunchKernel of a grid that is a multiple of SPLIT_K forms it.
#if SPLIT_K > 1
#define KTUNE_WGMMA_CLUSTER __cluster_dims__(SPLIT_K, 1, 1)
#else
#define KTUNE_WGMMA_CLUSTER
#endif

extern "C" __global__ void __launch_bounds__(ktune_gemm::kThreads, 1) KTUNE_WGMMA_CLUSTER
    gemm(ktune_gemm::elem_t* C, const ktune_gemm::elem_t* A, const ktune_gemm::elem_t* B, int M,
         int N, int K KTUNE_EPILOGUE_PARAMS) {
  using namespace ktune_gemm;
  extern __shared__ __align__(1024) unsigned char smem[];

  if (M <= 0 || N <= 0) return;  // an empty output: the launch hook still sends one block
  int pid_m = 0;
  int pid_n = 0;
  // Block x: tile x / SPLIT_K, K slice x % SPLIT_K (its rank in the cluster of dims SPLIT_K x 1
  // x 1). All blocks of a cluster share the tile, so a return here leaves no peer waiting.
  const int k_rank = static_cast<int>(blockIdx.x % kSplitK);
  if (!grouped_tile(blockIdx.x / kSplitK, (M + kBlockM - 1) / kBlockM, (N + kBlockN - 1) / kBlockN,
                    kGroupM, pid_m, pid_n)) {
    return;
  }
  const int block_m = pid_m * kBlockM;
  const int block_n = pid_n * kBlockN;

  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int wg = warp >> 2;      // warp group
  const int wg_warp = warp & 3;  // warp within the group: its 16 rows of each m64 tile

  // The swizzle pattern repeats every 1024 bytes and the descriptors carry base offset 0: the
  // tiles start on a 1024-byte boundary (the launch adds 1024 bytes of slack for this).
  const unsigned smem_base = (smem_u32(smem) + 1023u) & ~1023u;

  // Tile copies into the swizzled stage; out-of-range elements land as zeros.
#if VEC == 8
  // 16-byte cp.async (N % 8 == 0 and K % 8 == 0: a chunk is wholly inside or outside a row).
  // A: thread tid copies chunk tid % 8 of rows tid / 8 + i * (threads / 8). B: chunk
  // tid % (BLOCK_N / 8) of rows tid / (BLOCK_N / 8) + i * (threads / (BLOCK_N / 8)).
  constexpr int kARowStep = kThreads / 8;
  constexpr int kBRowStep = kThreads / kBChunksPerRow;
  const int a_chunk = tid & 7;
  const int a_row0 = tid >> 3;
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
    const unsigned a_dst = smem_base + stage * kStageBytes;
    const bool a_k_ok = k0 + a_chunk * 8 < K;
#pragma unroll
    for (int i = 0; i < kALoads; ++i) {
      const bool ok = a_k_ok && ((a_rows_ok >> i) & 1u);
      const elem_t* src = a_src + static_cast<long long>(i) * kARowStep * K + k0;
      cp_async_16(a_dst + swizzle(a_row0 + i * kARowStep, a_chunk), ok ? src : A, ok);
    }
    const unsigned b_dst =
        smem_base + stage * kStageBytes + kAStageBytes + (b_chunk >> 3) * kPanelBytes;
#pragma unroll
    for (int i = 0; i < kBLoads; ++i) {
      const int k = k0 + b_row0 + i * kBRowStep;
      const bool ok = b_col_ok && k < K;
      const elem_t* src = b_src + static_cast<long long>(k0 + i * kBRowStep) * N;
      cp_async_16(b_dst + swizzle(b_row0 + i * kBRowStep, b_chunk & 7), ok ? src : B, ok);
    }
  };
#else
  // Pairs of elements (4 bytes), lanes on consecutive pairs of one row: each copy instruction
  // reads 128 contiguous bytes (a 16-byte chunk per thread in four 4-byte pieces would spread
  // every instruction over four rows' cache lines, four times the L1 wavefronts). A: warp w
  // copies rows w + i * warps, lane q pair q of the row's 32. B: pair tid % (BLOCK_N / 2) of
  // rows tid / (BLOCK_N / 2) + i * (threads / (BLOCK_N / 2)), in panel pair / 32. Pair q of a
  // 64-element row is bytes 4 * (q % 4) of its 16-byte chunk (q % 32) / 4: the VEC 8 layout.
  constexpr int kARowStep = kThreads / 32;
  constexpr int kBPairsPerRow = kBlockN / 2;
  constexpr int kBRowStep = kThreads / kBPairsPerRow;
  constexpr int kAPairs = kBlockM * 32 / kThreads;  // pair copies per thread and tile
  constexpr int kBPairs = kBlockK * kBPairsPerRow / kThreads;
  static_assert(kThreads % kBPairsPerRow == 0 && (kBlockK * kBPairsPerRow) % kThreads == 0 &&
                    kAPairs <= 64,
                "pair copies must spread evenly over the threads");
  const int a_row0 = warp;
  const int b_pair = tid % kBPairsPerRow;
  const int b_row0 = tid / kBPairsPerRow;
  const int a_chunk = lane >> 2;
  const int b_chunk = (b_pair & 31) >> 2;
  const unsigned a_piece = static_cast<unsigned>((lane & 3) << 2);
  const unsigned b_piece =
      static_cast<unsigned>((b_pair >> 5) * kPanelBytes + ((b_pair & 3) << 2));
  const elem_t* a_src = A + static_cast<long long>(block_m + a_row0) * K + lane * 2;
  const elem_t* b_src = B + static_cast<long long>(b_row0) * N + block_n + b_pair * 2;
  unsigned long long a_rows_ok = 0;  // bit i: row a_row0 + i * kARowStep is inside M
#pragma unroll
  for (int i = 0; i < kAPairs; ++i) {
    if (block_m + a_row0 + i * kARowStep < M) a_rows_ok |= 1ull << i;
  }
  const int b_rem = N - (block_n + b_pair * 2);  // elements of B's rows from the pair on
  // Row r's chunk c sits at r * 128 + ((c ^ (r % 8)) << 4) (swizzle); a thread's rows are
  // row0 + i * step, so the XOR takes at most 8 values: x[(i * step) % 8] plus the immediate
  // i * step * 128, rather than one hoisted register per row.
  unsigned a_x[8];
  unsigned b_x[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    a_x[j] = a_piece + swizzle(a_row0, a_chunk ^ (a_row0 & 7) ^ ((a_row0 + j) & 7));
    b_x[j] = b_piece + swizzle(b_row0, b_chunk ^ (b_row0 & 7) ^ ((b_row0 + j) & 7));
  }
  auto load_tile = [&](int stage, int k_tile) {
    const int k0 = k_tile * kBlockK;
    const int a_rem = K - (k0 + lane * 2);  // elements of A's rows from the pair on
    // A thread copies up to 32 rows of A and of B, a row step apart: through `opaque` the
    // step is recomputed per tile, where otherwise each row's address would be hoisted out of
    // the K loop into a 64-bit register of its own (spills, or wgmmas serialised by ptxas).
    const long long a_step = opaque(static_cast<long long>(kARowStep) * K);
    const long long b_step = opaque(static_cast<long long>(kBRowStep) * N);
    const elem_t* a = a_src + k0;
    const elem_t* b = b_src + static_cast<long long>(k0) * N;
    const unsigned a_dst = smem_base + stage * kStageBytes;
    const unsigned b_dst = smem_base + stage * kStageBytes + kAStageBytes;
    auto a_at = [&](int i) {
      return a_dst + a_x[(i * kARowStep) & 7] + i * kARowStep * kRowBytes;
    };
    auto b_at = [&](int i) {
      return b_dst + b_x[(i * kBRowStep) & 7] + i * kBRowStep * kRowBytes;
    };
    // 4-byte cp.async (N and K even, buffers 4-byte aligned: a pair is wholly inside or
    // outside a row and 4-byte aligned). Asynchronous like the 16-byte copies: the pipeline
    // needs nothing else.
#pragma unroll
    for (int i = 0; i < kAPairs; ++i, a += a_step) {
      const bool ok = ((a_rows_ok >> i) & 1ull) && a_rem > 0;
      cp_async_4(a_at(i), ok ? a : A, ok);
    }
#pragma unroll
    for (int i = 0; i < kBPairs; ++i, b += b_step) {
      const bool ok = k0 + b_row0 + i * kBRowStep < K && b_rem > 0;
      cp_async_4(b_at(i), ok ? b : B, ok);
    }
  };
#endif

  float acc[kMTiles][kAcc];
#pragma unroll
  for (int i = 0; i < kMTiles; ++i) {
#pragma unroll
    for (int j = 0; j < kAcc; ++j) acc[i][j] = 0.0f;
  }

  // Pipeline: tiles 0..STAGES-3 in flight before the loop. Iteration kt waits for tile kt, and
  // after the barrier issues tile kt+STAGES-2 into the stage of tile kt-2, whose MMAs every
  // warp group finished (wgmma.wait_group 1 at the end of iteration kt-1) before that barrier;
  // then multiplies tile kt while tile kt-1's MMAs may still run. One commit group per tile,
  // empty past the end, so that cp.async.wait_group STAGES-3 always means "tile kt landed".
  // This block's K tiles k_first .. k_first + k_tiles - 1: all of them without split-K, else
  // rank k_rank's share of a balanced split (sizes differ by at most one; may be empty).
  const int k_tiles_all = (K + kBlockK - 1) / kBlockK;
  const int k_first = k_rank * k_tiles_all / kSplitK;
  const int k_tiles = (k_rank + 1) * k_tiles_all / kSplitK - k_first;
#pragma unroll
  for (int s = 0; s < kStages - 2; ++s) {
    if (s < k_tiles) load_tile(s, k_first + s);
    cp_async_commit();
  }

  const unsigned a_wg = static_cast<unsigned>(wg * kWgRows * kRowBytes);
  int read_stage = 0;
  int write_stage = kStages - 2;
  for (int kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<kStages - 3>();
    fence_proxy_async();
    __syncthreads();
    if (kt + kStages - 2 < k_tiles) load_tile(write_stage, k_first + kt + kStages - 2);
    cp_async_commit();
    write_stage = write_stage + 1 == kStages ? 0 : write_stage + 1;

    const unsigned a_stage = smem_base + read_stage * kStageBytes + a_wg;
    const unsigned b_stage = smem_base + read_stage * kStageBytes + kAStageBytes;
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kKSteps; ++kk) {
      const unsigned long long desc_b = make_desc(b_stage + kk * 16 * kRowBytes, kPanelBytes, 1024);
#pragma unroll
      for (int i = 0; i < kMTiles; ++i) {
        const unsigned long long desc_a =
            make_desc(a_stage + i * 64 * kRowBytes + kk * 32, 16, 1024);
        wgmma<kBlockN>(acc[i], desc_a, desc_b);
      }
    }
    wgmma_commit();
    wgmma_wait<1>();
    read_stage = read_stage + 1 == kStages ? 0 : read_stage + 1;
  }
  wgmma_wait<0>();
  cp_async_wait<0>();

  if constexpr (kSplitK > 1) {
    // The partial sums into this block's reduction buffer, over the pipeline's tiles: every warp
    // group's MMAs (async proxy reads) and copies into them must be over first.
    fence_proxy_async();
    __syncthreads();
    const int red_row0 = wg * kWgRows + wg_warp * 16 + (lane >> 2);  // within the tile
    const int red_col0 = 2 * (lane & 3);
#pragma unroll
    for (int i = 0; i < kMTiles; ++i) {
#pragma unroll
      for (int j = 0; j < kBlockN / 8; ++j) {
        const int at_float = (red_row0 + i * 64) * kRedStride + red_col0 + j * 8;
        const unsigned at = smem_base + static_cast<unsigned>(at_float * 4);
        st_shared_v2(at, acc[i][4 * j], acc[i][4 * j + 1]);
        st_shared_v2(at + 8 * kRedStride * 4, acc[i][4 * j + 2], acc[i][4 * j + 3]);
      }
    }
    cluster_sync();  // every peer's partial sums are written and visible

    // Rows k_rank * kRedRows .. + kRedRows - 1 of the tile: the sum over the peers in rank order,
    // 4 columns per thread and step, stored through the epilogue.
    constexpr int kRowChunks = kBlockN / 4;
    for (int c = tid; c < kRedRows * kRowChunks; c += kThreads) {
      const int r = k_rank * kRedRows + c / kRowChunks;
      const int col = (c % kRowChunks) * 4;
      if (block_m + r >= M || block_n + col >= N) continue;
      const unsigned at = smem_base + static_cast<unsigned>((r * kRedStride + col) * 4);
      float sum[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
      for (int peer = 0; peer < kSplitK; ++peer) {
        float v[4];
        ld_peer_v4(at, peer, v);
#pragma unroll
        for (int e = 0; e < 4; ++e) sum[e] += v[e];
      }
      store_output(C, M, N, block_m + r, block_n + col, sum[0], sum[1] KTUNE_EPILOGUE_ARGS);
      store_output(C, M, N, block_m + r, block_n + col + 2, sum[2], sum[3] KTUNE_EPILOGUE_ARGS);
    }
    cluster_sync();  // no block exits while a peer may still read its buffer
    return;
  }

  const int row0 = block_m + wg * kWgRows + wg_warp * 16 + (lane >> 2);
  const int col0 = block_n + 2 * (lane & 3);
  store_fragments<kMTiles, kBlockN>(C, M, N, row0, col0, acc KTUNE_EPILOGUE_ARGS);
}
