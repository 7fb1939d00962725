// What the Hopper (sm_90a) kernels share, put by ktune after kernels/cuda/prelude.cuh in front of
// gemm_tma.cu and gemm_wgmma.cu (src/ops/cuda_gemm_hopper.cpp): warp-group MMA (wgmma.mma_async
// from shared-memory matrix descriptors), mbarriers and TMA tile loads (the proxy fence and
// smem_u32 are the prelude's).
// Needs DTYPE 0 (f16) or 1 (bf16).
//
// Shared-memory layouts the descriptors name (the canonical 128-byte-swizzle layouts of the PTX
// ISA's "Matrix Descriptor" section; what TMA writes with CU_TENSOR_MAP_SWIZZLE_128B and a box
// whose inner dimension is 64 16-bit elements):
// - A tile, K-major: rows of 64 elements (128 bytes); 16-byte chunk c of row r sits at
//   r * 128 + ((c ^ (r % 8)) * 16). Descriptor: stride byte offset (between 8-row groups) 1024,
//   leading byte offset unused, swizzle 128B. Step kk of K moves the start by 32 * kk bytes.
// - B tile, N-major (B is [K,N] row-major; wgmma's imm-trans-b = 1): panels of 64 columns x 64
//   rows of K (8192 bytes each) one after the other along N; descriptor leading byte offset
//   (between panels) 8192, stride byte offset (between 8-row groups along K) 1024. Step kk of K
//   moves the start by 16 rows = 2048 bytes.
// The hardware applies the swizzle to address bits [4,7) ^ [7,10): every tile starts on a
// 1024-byte boundary (descriptor base offset 0).

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "hopper.cuh needs sm_90a (wgmma, TMA)"
#endif
#if DTYPE == 1
#define KTUNE_WGMMA_AB "bf16.bf16"
#elif DTYPE == 0
#define KTUNE_WGMMA_AB "f16.f16"
#else
#error "hopper.cuh: DTYPE 0 (f16) or 1 (bf16)"
#endif

namespace ktune_gemm {

// A TMA descriptor (CUtensorMap): 128 opaque bytes, 64-byte aligned, encoded by the launcher
// (cuTensorMapEncodeTiled) from the LaunchSpec's TensorMapDesc and the argument's address, and
// passed by value as a __grid_constant__ kernel parameter.
struct __align__(64) TmaDesc {
  unsigned long long bits[16];
};

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

// A shared-memory matrix descriptor: start address, leading and stride byte offsets (all in
// 16-byte units, bits 0-13, 16-29, 32-45), base offset 0 (bits 49-51), 128-byte swizzle
// (bits 62-63 = 1).
__device__ __forceinline__ unsigned long long make_desc(unsigned addr, unsigned lead_bytes,
                                                        unsigned stride_bytes) {
  return static_cast<unsigned long long>((addr & 0x3FFFF) >> 4) |
         (static_cast<unsigned long long>((lead_bytes & 0x3FFFF) >> 4) << 16) |
         (static_cast<unsigned long long>((stride_bytes & 0x3FFFF) >> 4) << 32) | (1ull << 62);
}

// d += A * B for one m64 x N x k16 step: A K-major, B N-major (imm-trans-b = 1), scale-d = 1.
// Accumulator layout: warp w of the group, lane t; d[4j + {0,1}] at row 16w + t/4, columns
// 8j + 2(t%4) + {0,1}; d[4j + {2,3}] eight rows down.
__device__ __forceinline__ void wgmma_n128(float (&d)[64], unsigned long long desc_a,
                                           unsigned long long desc_b) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32." KTUNE_WGMMA_AB " "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17,"
      "%18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33,"
      "%34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49,"
      "%50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
      "%64, %65, p, 1, 1, 0, 1;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
        "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(1)
      : "memory");
}

__device__ __forceinline__ void wgmma_n256(float (&d)[128], unsigned long long desc_a,
                                           unsigned long long desc_b) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32." KTUNE_WGMMA_AB " "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17,"
      "%18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33,"
      "%34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49,"
      "%50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65,"
      "%66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81,"
      "%82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97,"
      "%98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110,"
      "%111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123,"
      "%124, %125, %126, %127}, "
      "%128, %129, p, 1, 1, 0, 1;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
        "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]),
        "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]),
        "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
        "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]),
        "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]),
        "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),
        "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),
        "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),
        "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(1)
      : "memory");
}

// As wgmma_n128 for an m64 x 64 tile: one B panel, for the narrow outputs of decode shapes.
__device__ __forceinline__ void wgmma_n64(float (&d)[32], unsigned long long desc_a,
                                          unsigned long long desc_b) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." KTUNE_WGMMA_AB " "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17,"
      "%18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
      "%32, %33, p, 1, 1, 0, 1;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(desc_a), "l"(desc_b), "r"(1)
      : "memory");
}

template <int kN>
__device__ __forceinline__ void wgmma(float (&d)[kN / 2], unsigned long long desc_a,
                                      unsigned long long desc_b) {
  if constexpr (kN == 64) {
    wgmma_n64(d, desc_a, desc_b);
  } else if constexpr (kN == 128) {
    wgmma_n128(d, desc_a, desc_b);
  } else {
    wgmma_n256(d, desc_a, desc_b);
  }
}

// Stores a warp group's wgmma accumulators (kMTiles m64 x kN tiles, rows row0 + 64 i of this
// thread, and + 8; columns col0 + 8 j and + 1) through the epilogue, pair by pair, each behind
// its bounds check (any M, N and C offset).
template <int kMTiles, int kN>
__device__ __forceinline__ void store_fragments(
    elem_t* C, int M, int N, int row0, int col0,
    float (&acc)[kMTiles][kN / 2] KTUNE_EPILOGUE_PARAMS) {
#pragma unroll
  for (int i = 0; i < kMTiles; ++i) {
#pragma unroll
    for (int j = 0; j < kN / 8; ++j) {
      const int row = row0 + i * 64;
      const int col = col0 + j * 8;
      store_output(C, M, N, row, col, acc[i][4 * j], acc[i][4 * j + 1] KTUNE_EPILOGUE_ARGS);
      store_output(C, M, N, row + 8, col, acc[i][4 * j + 2], acc[i][4 * j + 3] KTUNE_EPILOGUE_ARGS);
    }
  }
}

// Bytes of a consumer warp's staging area in shared memory for store_fragments_staged: 16 rows
// of 64 columns, each row padded to 144 bytes so that stmatrix's eight 16-byte rows of a matrix
// fall in different banks.
constexpr int kStagePitch = 144;
constexpr int kStagingBytes = 16 * kStagePitch;

// Stores the first n (1 to 8) of the 8 elements in v at p: packed pairs where p + e is 4-byte
// aligned, else one element at a time. The rare path of store_fragments_staged (a run at C's last
// columns, or rows that do not start 16-byte aligned): out of line, so that the staged store
// keeps one copy of it.
__device__ __noinline__ void store_run8(elem_t* p, int n, uint4 v) {
  const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int e = 0; e < 8; e += 2) {
    if (e + 1 < n && (reinterpret_cast<unsigned long long>(p + e) & 3ull) == 0) {
      *reinterpret_cast<unsigned*>(p + e) = w[e / 2];
    } else {
      if (e < n) p[e] = static_cast<elem_t>(w[e / 2] & 0xffffu);
      if (e + 1 < n) p[e + 1] = static_cast<elem_t>(w[e / 2] >> 16);
    }
  }
}

// As store_fragments (any M, N and C offset), through the warp's staging area in shared memory:
// 64 columns at a time, the 32 values through the epilogue first (so that an operand's loads are
// issued together; a value outside C at C's nearest element, and never stored), packed, written
// to the staging area with stmatrix, read back as 16-byte rows and stored with 16-byte stores, 8
// lanes to each 128-byte run of a row; a run that is not whole inside C or not 16-byte aligned
// goes through store_run8. Each 32-byte sector of C is written once and whole; stored pair by
// pair, each was written twice, 16 bytes at a time (twice the L2 write sectors of cuBLAS's
// kernel, H200 2026-11-25). One copy of the epilogue and the stores for interior and edge tiles:
// a second, per-pair copy for the edge tiles made compiles slow (all 36 GEMM templates with
// `ktune gemm --compile-only -j 1`: 11.6 s with it, 7.8 s without, 2026-11-26).
template <int kMTiles, int kN>
__device__ __forceinline__ void store_fragments_staged(
    elem_t* C, int M, int N, int row0, int col0, unsigned staging,
    float (&acc)[kMTiles][kN / 2] KTUNE_EPILOGUE_PARAMS) {
  static_assert(kN % 64 == 0, "whole runs of 64 columns");
  const int lane = threadIdx.x & 31;
  const int warp_row = row0 - (lane >> 2);  // the warp's first row of each m64 tile
  const int tile_col = col0 - 2 * (lane & 3);
  // stmatrix: lane l gives the address of row l & 7 of matrix l >> 3 (rows + 8 for odd ones).
  const unsigned st_addr =
      staging + ((((lane >> 3) & 1) * 8 + (lane & 7)) * kStagePitch) + (lane >> 4) * 16;
#pragma unroll
  for (int i = 0; i < kMTiles; ++i) {
    const int row = row0 + i * 64;
#pragma unroll
    for (int j0 = 0; j0 < kN / 8; j0 += 8) {
      unsigned packed[16];  // [2 * j + h]: columns 8 (j0 + j) + 2 (lane & 3), rows + 8 h
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const int col = col0 + (j0 + j) * 8;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          // Clamped to C's last row and column: a value outside C (an edge tile) goes through
          // the epilogue at an element inside it, so that the epilogue's operand loads stay in
          // bounds without a branch, and is never stored.
          const int r = min(row + 8 * h, M - 1);
          const int c0 = min(col, N - 1), c1 = min(col + 1, N - 1);
          const long long base = static_cast<long long>(r) * N;
          const float v0 =
              epilogue(r, c0, base + c0, acc[i][4 * (j0 + j) + 2 * h] KTUNE_EPILOGUE_ARGS);
          const float v1 =
              epilogue(r, c1, base + c1, acc[i][4 * (j0 + j) + 2 * h + 1] KTUNE_EPILOGUE_ARGS);
          packed[2 * j + h] = pack2(v0, v1);
        }
      }
      __syncwarp();  // the previous run's reads of the staging area are done
#pragma unroll
      for (int q = 0; q < 4; ++q) {  // matrices (j, h) = (2q, 0), (2q, 1), (2q + 1, 0), (2q + 1, 1)
        asm volatile(
            "stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(
                st_addr + q * 32),
            "r"(packed[4 * q]), "r"(packed[4 * q + 1]), "r"(packed[4 * q + 2]),
            "r"(packed[4 * q + 3])
            : "memory");
      }
      __syncwarp();
#pragma unroll
      for (int t = 0; t < 4; ++t) {  // 16 rows x 8 runs of 16 bytes, 32 lanes at a time
        const int item = t * 32 + lane;
        const int r = item >> 3, c = item & 7;
        uint4 v;
        asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "r"(staging + r * kStagePitch + c * 16)
                     : "memory");
        const int grow = warp_row + i * 64 + r;
        const int gcol = tile_col + j0 * 8 + c * 8;
        if (grow < M) {
          elem_t* p = C + static_cast<long long>(grow) * N + gcol;
          if (gcol + 8 <= N && (reinterpret_cast<unsigned long long>(p) & 15ull) == 0) {
            *reinterpret_cast<uint4*>(p) = v;
          } else if (gcol < N) {
            store_run8(p, N - gcol, v);
          }
        }
      }
    }
  }
}

// mbarriers (8 bytes of shared memory each, addressed by their 32-bit shared address).
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

// Blocks until the phase of parity `parity` of `bar` has completed. A fresh barrier is in phase
// 0, so waiting for parity 1 returns at once (the producer's first pass over empty slots).
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}

__device__ __forceinline__ void mbar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// Arrives and tells the barrier that `bytes` more bytes of TMA writes complete this phase.
__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}

// TMA: the box of `map` at element coordinates (x inner, y outer) into shared memory at `dst`,
// completing `bytes` of `bar`'s transaction count. Out-of-bounds elements land as zeros.
__device__ __forceinline__ void tma_load_2d(unsigned dst, const TmaDesc& map, unsigned bar, int x,
                                            int y) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
      "[%0], [%1, {%3, %4}], [%2];\n" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(&map)), "r"(bar), "r"(x), "r"(y)
      : "memory");
}

// The same box into shared address `dst` of every block of the cluster in `mask` (bit r: rank
// r), completing `bytes` of the barrier at address `bar` in each of them.
__device__ __forceinline__ void tma_load_2d_multicast(unsigned dst, const TmaDesc& map,
                                                      unsigned bar, int x, int y,
                                                      unsigned short mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(&map)), "r"(bar), "r"(x), "r"(y), "h"(mask)
      : "memory");
}

// Arrives on the barrier at shared address `bar` of the cluster's block `rank` (itself too).
__device__ __forceinline__ void mbar_arrive_cluster(unsigned bar, unsigned rank) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(bar), "r"(rank));
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(remote) : "memory");
}

// The cluster barrier: arrive.release publishes this block's shared-memory writes to the peers
// that pass wait.acquire after it. Every thread that has not exited takes part.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
  asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

// Named barrier `id` (1-15; 0 is __syncthreads') of `threads` threads (whole warps): wait until
// they have all arrived, or only arrive.
__device__ __forceinline__ void named_barrier_sync(unsigned id, unsigned threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_barrier_arrive(unsigned id, unsigned threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

__device__ __forceinline__ void tma_prefetch_desc(const TmaDesc& map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<unsigned long long>(&map))
               : "memory");
}

}  // namespace ktune_gemm
