// Hopper (sm_90a) warp-specialised GEMM: row-major C[M,N] = A[M,K] * B[K,N] in f16 or bf16 with
// fp32 accumulation. A producer warp group loads A and B tiles with TMA into a STAGES-deep ring
// of 128-byte-swizzled shared memory; CONSUMERS warp groups multiply them with wgmma.mma_async
// (both operands from shared memory) and store C through the epilogue hook. Full and empty
// mbarriers per stage hand the slots back and forth, so the loads run ahead of the MMAs without
// any block-wide barrier in the loop. Persistent: each block walks the output tiles
// blockIdx.x, blockIdx.x + gridDim.x, ... in grouped order, so that the producer already loads
// the next tile while the consumers store this one.
//
// Tunables (#defines): BLOCK_M (64, 128 or 256), BLOCK_N (64, 128 or 256), CONSUMERS (1 or 2
// warp groups; each owns BLOCK_M / CONSUMERS rows, whole m64 MMAs), STAGES (>= 2 slots), GROUP_M
// (block rows per rasterization group), CLUSTER_M (1 or 2), PINGPONG (0 or 1), DTYPE (0 = f16,
// 1 = bf16). BLOCK_K is 64 (one 128-byte swizzle row of 16-bit elements).
// PINGPONG 1 (two consumer groups): each group owns whole tiles, the block's tiles 0, 2, 4, ... and
// 1, 3, 5, ...; their main loops take turns (named barriers), so that one group's epilogue runs
// while the other's MMAs keep the tensor cores busy (CUTLASS's "ping-pong" kernels). The producer
// loads every tile's k tiles in order into the one ring, and a slot is freed by the one group
// that read it.
// CLUSTER_M 2: two blocks of a thread-block cluster take the two tiles of one column of tiles
// pair by pair (rows 2p and 2p + 1; a row past M is all zeros and stores nothing), so they read
// the same B tiles: each block's producer loads half of B's panels and multicasts them into both
// blocks' rings, halving B's traffic from L2. A slot is refilled once the consumers of both
// blocks released it: each consumer warp group arrives on both blocks' empty barriers.
// Launch: a 1-D grid of at most one block per SM (fewer when there are fewer tiles) of
// 128 * (CONSUMERS + 1) threads; STAGES * (BLOCK_M + BLOCK_N) * 128 + 1024 + 16 * STAGES bytes of
// dynamic shared memory (the tiles, 1024 bytes of room to align them to the swizzle's period, the
// mbarriers), and with PINGPONG 0 CONSUMERS * 4 * 2304 more (each consumer warp's staging area
// for its stores). Two trailing parameters after the epilogue's: TMA descriptors of A (dims {K, M},
// box {64, BLOCK_M}) and B (dims {N, K}, box {64, 64}), both 128-byte swizzled, encoded by the
// launcher from the LaunchSpec's tensor maps (include/ktune/core/launch_spec.h).
// Shapes: any M; N % 8 == 0 and K % 8 == 0 (TMA needs 16-byte row strides), A and B 16-byte
// aligned, or any N and K through the restrided variant below. TMA fills out-of-range rows,
// columns and the K tail with zeros; stores are masked (store_fragments_staged, store_output:
// any N and C offset).
// Compiled after kernels/cuda/prelude.cuh and kernels/cuda/hopper.cuh.

#if !defined(BLOCK_M) || !defined(BLOCK_N) || !defined(CONSUMERS) || !defined(STAGES) || \
    !defined(GROUP_M) || !defined(DTYPE)
#error "gemm_tma.cu needs BLOCK_M BLOCK_N CONSUMERS STAGES GROUP_M DTYPE"
#endif
#if !defined(CLUSTER_M)
#define CLUSTER_M 1
#endif
#if !defined(PINGPONG)
#define PINGPONG 0
#endif

namespace ktune_gemm {

constexpr int kBlockM = BLOCK_M;
constexpr int kBlockN = BLOCK_N;
constexpr int kBlockK = 64;
constexpr int kConsumers = CONSUMERS;
constexpr int kStages = STAGES;
constexpr int kGroupM = GROUP_M;
constexpr int kClusterM = CLUSTER_M;
constexpr int kPingPong = PINGPONG;
constexpr int kThreads = (kConsumers + 1) * 128;
// Rows of C per consumer warp group: a share of the tile, or (ping-pong) the whole tile.
constexpr int kWgRows = kPingPong ? kBlockM : kBlockM / kConsumers;
constexpr int kMTiles = kWgRows / 64;  // m64 MMAs per warp group and k16 step
constexpr int kAcc = kBlockN / 2;      // fp32 accumulators per thread and m64 tile
constexpr int kKSteps = kBlockK / 16;
constexpr int kRowBytes = 128;
constexpr int kPanelBytes = kBlockK * kRowBytes;  // B: 64 columns x 64 rows of K
constexpr int kAStageBytes = kBlockM * kRowBytes;
constexpr int kBStageBytes = (kBlockN / 64) * kPanelBytes;
constexpr int kStageBytes = kAStageBytes + kBStageBytes;

static_assert(kBlockN == 64 || kBlockN == 128 || kBlockN == 256,
              "BLOCK_N: 64, 128 or 256 (the MMA's N)");
static_assert(kConsumers == 1 || kConsumers == 2, "CONSUMERS: 1 or 2");
static_assert(
    kWgRows % 64 == 0 && kBlockM <= 256,
    "BLOCK_M: a multiple of 64 * CONSUMERS (64 with PINGPONG), at most 256 (the TMA box)");
static_assert(kPingPong == 0 || (kPingPong == 1 && kConsumers == 2),
              "PINGPONG: 0, or 1 with two consumer warp groups");
static_assert(kMTiles * kAcc <= 128, "at most 128 fp32 accumulators per thread");
static_assert(kStages >= 2, "STAGES >= 2");
static_assert(kGroupM >= 1, "GROUP_M >= 1");
static_assert(kClusterM == 1 || (kClusterM == 2 && (kBlockN / 64) % 2 == 0),
              "CLUSTER_M: 1, or 2 (each block multicasts half of B's 64-column panels)");
// Arrivals that free a slot: one per consumer warp group that reads it (all of them, or with
// ping-pong the one whose tile it holds), of each block of the cluster.
constexpr int kEmptyArrivals = kClusterM * (kPingPong ? 1 : kConsumers);

// The registers each warp group may hold (setmaxnreg): with two consumer groups the 64K
// registers are split 40 (producer) / 232 (consumers) instead of 168 each, so that 128
// accumulators and the epilogue fit without spilling.
constexpr bool kSplitRegisters = kConsumers == 2;

// The consumers are done reading slot barrier `bar`'s tiles: once per warp group, on every
// block's barrier of the cluster (their producers multicast into this block's slot), lane 0 of
// the group's warp r signalling block r. A warp group's MMAs are one operation: once its wait
// has returned in any of its threads, the group no longer reads the slot. The remote arrive
// has the default semantics: with .release.cluster the cluster kernel ran 1.5x slower
// (docs/benchmarks.md, "Clusters of two").
__device__ __forceinline__ void release_slot(unsigned bar) {
  const int warp = (threadIdx.x >> 5) & 3;
  if ((threadIdx.x & 31) != 0 || warp >= kClusterM) return;
  if constexpr (kClusterM == 1) {
    mbar_arrive(bar);
  } else {
    mbar_arrive_cluster(bar, warp);
  }
}

}  // namespace ktune_gemm

#if CLUSTER_M > 1
#define KTUNE_TMA_CLUSTER __cluster_dims__(CLUSTER_M, 1, 1)
#else
#define KTUNE_TMA_CLUSTER
#endif

// The restrided variant (KTUNE_TMA_WORKSPACE: "restride+cuda_gemm_tma_..." candidates) reads
// A and/or B from copies in the launch's workspace (kernels/cuda/restride.cu), through the
// tensor maps; it takes the workspace's address as a last parameter, unused here.
#if defined(KTUNE_TMA_WORKSPACE)
#define KTUNE_TMA_WORKSPACE_PARAM , void*
#else
#define KTUNE_TMA_WORKSPACE_PARAM
#endif

extern "C" __global__ void __launch_bounds__(ktune_gemm::kThreads, 1) KTUNE_TMA_CLUSTER
    gemm(ktune_gemm::elem_t* C, const ktune_gemm::elem_t* A, const ktune_gemm::elem_t* B, int M,
         int N, int K KTUNE_EPILOGUE_PARAMS, const __grid_constant__ ktune_gemm::TmaDesc tma_a,
         const __grid_constant__ ktune_gemm::TmaDesc tma_b KTUNE_TMA_WORKSPACE_PARAM) {
  using namespace ktune_gemm;
  extern __shared__ __align__(1024) unsigned char smem[];
  (void)A;
  (void)B;
  if (M <= 0 || N <= 0) return;  // an empty output: the launch still sends one block

  // Tiles on a 1024-byte boundary (the swizzle's period; descriptors carry base offset 0), then
  // full[s] and empty[s], 8 bytes each, then (PINGPONG 0) the consumer warps' staging areas.
  const unsigned base = (smem_u32(smem) + 1023u) & ~1023u;
  const unsigned full_bar = base + kStages * kStageBytes;
  const unsigned empty_bar = full_bar + 8 * kStages;
  const unsigned staging = empty_bar + 8 * kStages;  // kStagingBytes per consumer warp
  const int wg = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    tma_prefetch_desc(tma_a);
    tma_prefetch_desc(tma_b);
    for (int s = 0; s < kStages; ++s) {
      mbar_init(full_bar + 8 * s, 1);                // the producer's expect_tx arrival
      mbar_init(empty_bar + 8 * s, kEmptyArrivals);  // the consumer warp groups
    }
    // The initialised barriers visible to the async proxy (TMA's complete_tx) and the block.
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    fence_proxy_async();
  }
  if constexpr (kClusterM > 1) {
    cluster_sync();  // the peer's barriers are initialised before any multicast or remote arrive
  } else {
    __syncthreads();
  }

  const int grid_m = (M + kBlockM - 1) / kBlockM;
  const int grid_n = (N + kBlockN - 1) / kBlockN;
  const int k_tiles = (K + kBlockK - 1) / kBlockK;
  // Clusters walk pairs of tile rows (kClusterM rows each), a block of a cluster its own row.
  const int rank = kClusterM == 1 ? 0 : static_cast<int>(blockIdx.x) % kClusterM;
  const int cluster = static_cast<int>(blockIdx.x) / kClusterM;
  const int clusters = static_cast<int>(gridDim.x) / kClusterM;
  const int grid_mc = (grid_m + kClusterM - 1) / kClusterM;
  const int tiles = grid_mc * grid_n;

  if (wg == 0) {
    // Producer: one thread issues every load; the slot ring continues across tiles.
    if constexpr (kSplitRegisters) asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (threadIdx.x != 0) return;
    int stage = 0;
    unsigned phase = 0;
    for (int tile = cluster; tile < tiles; tile += clusters) {
      int pid_m = 0;
      int pid_n = 0;
      grouped_tile(tile, grid_mc, grid_n, kGroupM, pid_m, pid_n);
      pid_m = pid_m * kClusterM + rank;
      for (int kt = 0; kt < k_tiles; ++kt) {
        mbar_wait(empty_bar + 8 * stage, phase ^ 1u);  // the consumers released the slot
        const unsigned full = full_bar + 8 * stage;
        const unsigned dst = base + stage * kStageBytes;
        mbar_arrive_expect_tx(full, kStageBytes);
        tma_load_2d(dst, tma_a, full, kt * kBlockK, pid_m * kBlockM);
        if constexpr (kClusterM == 1) {
#pragma unroll
          for (int p = 0; p < kBlockN / 64; ++p) {
            tma_load_2d(dst + kAStageBytes + p * kPanelBytes, tma_b, full, pid_n * kBlockN + p * 64,
                        kt * kBlockK);
          }
        } else {
          constexpr int kMine = kBlockN / 64 / kClusterM;  // panels this block loads for all
#pragma unroll
          for (int q = 0; q < kMine; ++q) {
            const int p = rank * kMine + q;
            tma_load_2d_multicast(dst + kAStageBytes + p * kPanelBytes, tma_b, full,
                                  pid_n * kBlockN + p * 64, kt * kBlockK,
                                  static_cast<unsigned short>((1u << kClusterM) - 1));
          }
        }
        if (++stage == kStages) {
          stage = 0;
          phase ^= 1u;
        }
      }
    }
    return;
  }

  // Consumers.
  if constexpr (kSplitRegisters) asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
  const int cwg = wg - 1;
  const int lane = threadIdx.x & 31;
  const int wg_warp = (threadIdx.x >> 5) & 3;         // its 16 rows of each m64 tile
  const int wg_row0 = kPingPong ? 0 : cwg * kWgRows;  // its first row of the tile
  const unsigned a_wg = static_cast<unsigned>(wg_row0 * kRowBytes);
  int stage = 0;
  unsigned phase = 0;
  float acc[kMTiles][kAcc];
  int local = 0;  // the block's tiles so far
  for (int tile = cluster; tile < tiles; tile += clusters, ++local) {
    if constexpr (kPingPong) {
      // Ping-pong: consumer group g takes the block's tiles g, g + 2, ..., whose k tiles are
      // in the ring in the producer's order: this tile's first is number local * k_tiles.
      if ((local & 1) != cwg) continue;
      const long long first = static_cast<long long>(local) * k_tiles;
      stage = static_cast<int>(first % kStages);
      phase = static_cast<unsigned>((first / kStages) & 1);
      // The groups' main loops take turns (named barriers 1 and 2): this one waits until the
      // other has waited for every k tile of the block's previous tile. That also keeps the
      // parity waits below from passing on a slot's earlier phase: without the turns, group 1
      // waited on its first tile's slots while they still held group 0's and the kernel failed
      // (CUDA_ERROR_LAUNCH_FAILED or a hang, H200 2026-11-25). One group's epilogue runs under
      // the other's MMAs.
      if (local > 0) named_barrier_sync(1 + cwg, 256);
    }
    int pid_m = 0;
    int pid_n = 0;
    grouped_tile(tile, grid_mc, grid_n, kGroupM, pid_m, pid_n);
    pid_m = pid_m * kClusterM + rank;
#pragma unroll
    for (int i = 0; i < kMTiles; ++i) {
#pragma unroll
      for (int j = 0; j < kAcc; ++j) acc[i][j] = 0.0f;
    }
    // One commit group per k tile, at most two in flight: after waiting for all but the newest,
    // the previous tile's slot is no longer read and goes back to the producer.
    int prev_stage = -1;
    for (int kt = 0; kt < k_tiles; ++kt) {
      mbar_wait(full_bar + 8 * stage, phase);
      const unsigned a_stage = base + stage * kStageBytes + a_wg;
      const unsigned b_stage = base + stage * kStageBytes + kAStageBytes;
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < kKSteps; ++kk) {
        const unsigned long long desc_b =
            make_desc(b_stage + kk * 16 * kRowBytes, kPanelBytes, 1024);
#pragma unroll
        for (int i = 0; i < kMTiles; ++i) {
          const unsigned long long desc_a =
              make_desc(a_stage + i * 64 * kRowBytes + kk * 32, 16, 1024);
          wgmma<kBlockN>(acc[i], desc_a, desc_b);
        }
      }
      wgmma_commit();
      wgmma_wait<1>();
      if (prev_stage >= 0) release_slot(empty_bar + 8 * prev_stage);
      prev_stage = stage;
      if (++stage == kStages) {
        stage = 0;
        phase ^= 1u;
      }
    }
    if (kPingPong && tile + clusters < tiles) named_barrier_arrive(2 - cwg, 256);  // its turn
    wgmma_wait<0>();
    if (prev_stage >= 0) release_slot(empty_bar + 8 * prev_stage);

    const int row0 = pid_m * kBlockM + wg_row0 + wg_warp * 16 + (lane >> 2);
    const int col0 = pid_n * kBlockN + 2 * (lane & 3);
    // Cooperative (PINGPONG 0): every tile through the consumer warp's staging area in shared
    // memory, whole sectors with 16-byte stores where the rows allow (store_fragments_staged;
    // the best cooperative configs ran 5-12% faster than stored pair by pair, others up to 17%,
    // H200 2026-11-25). Not with ping-pong: there the epilogue runs under the other group's MMAs,
    // which read their operands from shared memory too, and GELU's ping-pong configs ran up to
    // 1.2x slower staged.
    if constexpr (!kPingPong) {
      store_fragments_staged<kMTiles, kBlockN>(C, M, N, row0, col0,
                                               staging + (cwg * 4 + wg_warp) * kStagingBytes,
                                               acc KTUNE_EPILOGUE_ARGS);
    } else {
      // With an epilogue that reads a matrix of C's shape (a residual), a group's rows of the
      // tile inside C, N even and C 4-byte aligned take one branch-free block of packed stores,
      // each run of 8 column groups (32 values) through the epilogue before its stores, so that
      // the operand's loads are issued together. Per pair behind its own bounds and alignment
      // branches (the edge tiles, below) each load waited for the one before: bias + residual
      // ran at 0.83-0.88 of the best library GEMM + separate epilogue, 1.06-1.11 this way (H200
      // 2026-11-25). The other epilogues keep one copy of the store code: with both copies a
      // GELU epilogue ran 1.1x slower (more code than the instruction cache holds).
#if defined(KTUNE_EPILOGUE_MATRIX)
      const bool interior = pid_m * kBlockM + wg_row0 + kWgRows <= M &&
                            (pid_n + 1) * kBlockN <= N && (N & 1) == 0 &&
                            (reinterpret_cast<unsigned long long>(C) & 3ull) == 0;
#else
      constexpr bool interior = false;
#endif
      if (interior) {
        constexpr int kChunk = 8;  // column groups per run (kBlockN / 8 is 16 or 32)
#pragma unroll
        for (int i = 0; i < kMTiles; ++i) {
          const int row = row0 + i * 64;
#pragma unroll
          for (int j0 = 0; j0 < kBlockN / 8; j0 += kChunk) {
#pragma unroll
            for (int j = j0; j < j0 + kChunk; ++j) {
              const int col = col0 + j * 8;
#pragma unroll
              for (int h = 0; h < 2; ++h) {  // rows row and row + 8
                const long long idx = static_cast<long long>(row + 8 * h) * N + col;
                float& v0 = acc[i][4 * j + 2 * h];
                float& v1 = acc[i][4 * j + 2 * h + 1];
                v0 = epilogue(row + 8 * h, col, idx, v0 KTUNE_EPILOGUE_ARGS);
                v1 = epilogue(row + 8 * h, col + 1, idx + 1, v1 KTUNE_EPILOGUE_ARGS);
              }
            }
#pragma unroll
            for (int j = j0; j < j0 + kChunk; ++j) {
              const int col = col0 + j * 8;
#pragma unroll
              for (int h = 0; h < 2; ++h) {
                const long long idx = static_cast<long long>(row + 8 * h) * N + col;
                *reinterpret_cast<unsigned*>(C + idx) =
                    pack2(acc[i][4 * j + 2 * h], acc[i][4 * j + 2 * h + 1]);
              }
            }
          }
        }
      } else {
        store_fragments<kMTiles, kBlockN>(C, M, N, row0, col0, acc KTUNE_EPILOGUE_ARGS);
      }
    }
  }
  // No block leaves while its peer's consumers may still arrive on its barriers.
  if constexpr (kClusterM > 1) cluster_sync();
}
