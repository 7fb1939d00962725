// One explicit step of the 2-D heat equation (a 5-point Jacobi stencil) in OpenCL C:
//   out[y][x] = c + alpha * (north + south + west + east - 4 c)
// over a W x H grid whose input carries a one-cell border (it is (H + 2) x (W + 2)).
//
// Each work-item computes TILE_Y x TILE_X points, WG_X (WG_Y) apart so that neighbouring
// work-items touch neighbouring addresses. With USE_LOCAL the work-group first copies its input
// window (its points and their border) into local memory, so each input is read from global
// memory once instead of five times; without it the caches do that job.

#if USE_LOCAL
#define LH (WG_Y * TILE_Y + 2)
#define LW (WG_X * TILE_X + 2)
#endif

__kernel __attribute__((reqd_work_group_size(WG_X, WG_Y, 1))) void heat_step(
    __global float* restrict out, __global const float* restrict in, const float alpha,
    const int W, const int H) {
  const int IW = W + 2;
  const int lx = get_local_id(0), ly = get_local_id(1);
  const int bx = get_group_id(0) * WG_X * TILE_X;  // the group's first output column and row
  const int by = get_group_id(1) * WG_Y * TILE_Y;

#if USE_LOCAL
  __local float tile[LH][LW];
  for (int i = ly; i < LH; i += WG_Y)
    for (int j = lx; j < LW; j += WG_X) {
      const int y = by + i, x = bx + j;
      tile[i][j] = (y < H + 2 && x < IW) ? in[y * IW + x] : 0.0f;
    }
  barrier(CLK_LOCAL_MEM_FENCE);  // every work-item gets here: no early return above
#define AT(y, x) tile[(y) - by][(x) - bx]  // y, x in input coordinates
#else
#define AT(y, x) in[(y) * IW + (x)]
#endif

  for (int ty = 0; ty < TILE_Y; ty++)
    for (int tx = 0; tx < TILE_X; tx++) {
      const int y = by + ly + ty * WG_Y, x = bx + lx + tx * WG_X;
      if (y < H && x < W) {
        const float c = AT(y + 1, x + 1);
        out[y * W + x] =
            c + alpha * (AT(y, x + 1) + AT(y + 2, x + 1) + AT(y + 1, x) + AT(y + 1, x + 2) - 4.0f * c);
      }
    }
}
