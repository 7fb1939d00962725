// A 2-D convolution in the style of Kernel Tuner's convolution example: output[y][x] is the sum
// over the FH x FW filter of input[y + i][x + j] * filter[i][j]; the input is the image padded by
// FH - 1 rows and FW - 1 columns, so the output is W x H. FW and FH come from the problem
// (size_defines), so the filter loops are unrolled with compile-time bounds; the tuning
// parameters (block_size_x/y, tile_size_x/y, use_shmem, use_padding, read_only) come as #defines.
//
// Each thread computes tile_size_y x tile_size_x outputs, block_size_x (block_size_y) apart, so
// that neighbouring threads touch neighbouring addresses. The filter is a normal argument (no
// constant memory): every thread of a warp reads the same element, which the cache broadcasts.
// Loads and stores are bounds-checked, so any block and tile size is correct for any W and H.

#if !defined(FW) || !defined(FH)
#error "FW and FH (the filter size) must be defined: the spec passes them as size_defines"
#endif

#if read_only
#define LOAD(p) __ldg(p)  // through the read-only (texture) path
#else
#define LOAD(p) (*(p))
#endif

extern "C" __global__ void __launch_bounds__(block_size_x * block_size_y)
    conv2d(float* __restrict__ out, const float* __restrict__ in, const float* __restrict__ filter,
           int W, int H) {
  const int IW = W + FW - 1;  // input (padded image) width
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int bx = blockIdx.x * block_size_x * tile_size_x;  // the block's first output column
  const int by = blockIdx.y * block_size_y * tile_size_y;  // and row

  float sum[tile_size_y][tile_size_x];
#pragma unroll
  for (int yi = 0; yi < tile_size_y; yi++)
#pragma unroll
    for (int xj = 0; xj < tile_size_x; xj++) sum[yi][xj] = 0.0f;

#if use_shmem
  // The block's input window, read once from global memory. use_padding adds a column so that
  // threads reading down a column hit different banks.
  constexpr int SH_H = block_size_y * tile_size_y + FH - 1;
  constexpr int SH_W = block_size_x * tile_size_x + FW - 1;
  __shared__ float sh[SH_H][SH_W + use_padding];
  const int IH = H + FH - 1;
  for (int i = ty; i < SH_H; i += block_size_y)
    for (int j = tx; j < SH_W; j += block_size_x) {
      const int y = by + i, x = bx + j;
      sh[i][j] = (y < IH && x < IW) ? LOAD(&in[(size_t)y * IW + x]) : 0.0f;
    }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < FH; i++)
#pragma unroll
    for (int j = 0; j < FW; j++) {
      const float f = LOAD(&filter[i * FW + j]);
#pragma unroll
      for (int yi = 0; yi < tile_size_y; yi++)
#pragma unroll
        for (int xj = 0; xj < tile_size_x; xj++)
          sum[yi][xj] += sh[ty + yi * block_size_y + i][tx + xj * block_size_x + j] * f;
    }
#else
  // Straight from global memory (the L1 and, with read_only, the texture path do the reuse). An
  // output inside the image reads only inside the input, so only the stores need a check.
#pragma unroll
  for (int i = 0; i < FH; i++)
#pragma unroll
    for (int j = 0; j < FW; j++) {
      const float f = LOAD(&filter[i * FW + j]);
#pragma unroll
      for (int yi = 0; yi < tile_size_y; yi++) {
        const int y = min(by + ty + yi * block_size_y, H - 1);  // clamped: stores are checked
#pragma unroll
        for (int xj = 0; xj < tile_size_x; xj++) {
          const int x = min(bx + tx + xj * block_size_x, W - 1);
          sum[yi][xj] += LOAD(&in[(size_t)(y + i) * IW + x + j]) * f;
        }
      }
    }
#endif

#pragma unroll
  for (int yi = 0; yi < tile_size_y; yi++)
#pragma unroll
    for (int xj = 0; xj < tile_size_x; xj++) {
      const int y = by + ty + yi * block_size_y, x = bx + tx + xj * block_size_x;
      if (y < H && x < W) out[(size_t)y * W + x] = sum[yi][xj];
    }
}
