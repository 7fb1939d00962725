// A direct single-channel 2-D convolution for bench/search_strategies.sh:
// out[y][x] = sum over fy < FH, fx < FW of in[y + fy][x + fx] * filter[fy][fx], fp32, row-major,
// `in` padded by FH - 1 rows and FW - 1 columns. FH and FW are compile-time (size_defines).
//
// Tuning parameters (#defines set by ktune for each candidate):
//   VEC        floats per SIMD vector (8: AVX2 width, 16: AVX-512)
//   NV, MR     register tile: MR output rows by NV vectors (NR = NV * VEC columns)
//   ROW_REUSE  0: every (row, fy, fx) loads its input vector; 1: each input row of the tile is
//              loaded once per fx and added into every output row it contributes to
//   UNROLL     1: the fx loop as written; 2: fully unrolled (the filter width is a constant)
//   BH, BW     cache block: BH output rows by BW columns are finished before the next block
// The parameters change the loads per multiply-add, the registers live and the cache footprint:
// a space with a few good corners and many slow ones, as a tuner meets them.
#include <algorithm>

typedef float vfloat __attribute__((vector_size(VEC * sizeof(float)), aligned(4), may_alias));
constexpr int NR = NV * VEC;
constexpr int IW_PAD = FW - 1;
#define KTUNE_PRAGMA(x) _Pragma(#x)
#if UNROLL == 2
#define FX_LOOP KTUNE_PRAGMA(GCC unroll 64)
#else
#define FX_LOOP KTUNE_PRAGMA(GCC unroll 1)
#endif

static inline vfloat load(const float* p) { return *reinterpret_cast<const vfloat*>(p); }
static inline void store(float* p, vfloat v) { *reinterpret_cast<vfloat*>(p) = v; }

// One MR x NR tile of `out` at (y, x); `ldi` is the input's row length.
static inline void tile(float* out, int ldo, const float* in, int ldi, const float* filter) {
  vfloat acc[MR][NV] = {};
#if ROW_REUSE
  // Input row r of the tile feeds output rows r - fy for every fy in range.
  for (int r = 0; r < MR + FH - 1; ++r) {
    const float* row = in + (long)r * ldi;
    FX_LOOP
    for (int fx = 0; fx < FW; ++fx) {
      vfloat v[NV];
      for (int j = 0; j < NV; ++j) v[j] = load(row + j * VEC + fx);
      for (int i = 0; i < MR; ++i) {
        const int fy = r - i;
        if (fy < 0 || fy >= FH) continue;
        const float w = filter[fy * FW + fx];
        for (int j = 0; j < NV; ++j) acc[i][j] += v[j] * w;
      }
    }
  }
#else
  for (int fy = 0; fy < FH; ++fy) {
    FX_LOOP
    for (int fx = 0; fx < FW; ++fx) {
      const float w = filter[fy * FW + fx];
      for (int i = 0; i < MR; ++i) {
        const float* row = in + (long)(i + fy) * ldi + fx;
        for (int j = 0; j < NV; ++j) acc[i][j] += load(row + j * VEC) * w;
      }
    }
  }
#endif
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV; ++j) store(out + (long)i * ldo + j * VEC, acc[i][j]);
}

// The ragged right and bottom edges, one element at a time.
static void edge(float* out, const float* in, const float* filter, int W, int y0, int y1, int x0,
                 int x1) {
  const int ldi = W + IW_PAD;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) {
      float s = 0;
      for (int fy = 0; fy < FH; ++fy)
        for (int fx = 0; fx < FW; ++fx)
          s += in[(long)(y + fy) * ldi + x + fx] * filter[fy * FW + fx];
      out[(long)y * W + x] = s;
    }
}

void conv2d(float* out, const float* in, const float* filter, int W, int H) {
  const int ldi = W + IW_PAD;
  const int h_full = H - H % MR;
  const int w_full = W - W % NR;
  for (int by = 0; by < h_full; by += BH) {
    const int ey = std::min(by + BH, h_full);
    for (int bx = 0; bx < w_full; bx += BW) {
      const int ex = std::min(bx + BW, w_full);
      for (int y = by; y + MR <= ey; y += MR)
        for (int x = bx; x + NR <= ex; x += NR)
          tile(out + (long)y * W + x, W, in + (long)y * ldi + x, ldi, filter);
    }
  }
  // BH need not be a multiple of MR: rows a block left over are done here, as are the edges.
  for (int by = 0; by < h_full; by += BH) {
    const int ey = std::min(by + BH, h_full);
    const int done = by + (ey - by) / MR * MR;
    if (done < ey) edge(out, in, filter, W, done, ey, 0, W);
  }
  if (w_full < W) edge(out, in, filter, W, 0, h_full, w_full, W);
  if (h_full < H) edge(out, in, filter, W, h_full, H, 0, W);
}
